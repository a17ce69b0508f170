#include "util/comparator.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "util/random.h"

namespace sift {
namespace {

const Comparator* cmp() { return BytewiseComparator(); }

std::string Separator(std::string start, const std::string& limit) {
  cmp()->FindShortestSeparator(&start, limit);
  return start;
}

std::string Successor(std::string key) {
  cmp()->FindShortSuccessor(&key);
  return key;
}

TEST(ComparatorTest, BytewiseOrderIsUnsigned) {
  EXPECT_LT(cmp()->Compare("a", "b"), 0);
  EXPECT_GT(cmp()->Compare("b", "a"), 0);
  EXPECT_EQ(cmp()->Compare("abc", "abc"), 0);
  EXPECT_LT(cmp()->Compare("ab", "abc"), 0);
  EXPECT_LT(cmp()->Compare("", "a"), 0);
  // 0xff sorts after 0x01 (unsigned bytes, unlike signed char comparison).
  EXPECT_LT(cmp()->Compare("\x01", "\xff"), 0);
  EXPECT_STREQ(cmp()->Name(), "sift.BytewiseComparator");
}

// CompareBytes (eight bytes at a time) orders exactly as memcmp with the
// shorter key first on a tie: random keys over a small alphabet with the
// extreme bytes, so that long shared prefixes, word-boundary differences and
// prefixes of each other all occur.
TEST(ComparatorTest, CompareBytesAgreesWithStringCompare) {
  Random rnd(301);
  const char alphabet[] = {'\x00', '\x01', 'a', '\x7f', '\x80', '\xff'};
  auto random_key = [&] {
    std::string key(rnd.Uniform(26), '\0');
    for (char& c : key) c = alphabet[rnd.Uniform(sizeof(alphabet))];
    return key;
  };
  auto sign = [](int r) { return (r > 0) - (r < 0); };
  for (int i = 0; i < 20000; ++i) {
    const std::string a = random_key();
    std::string b = i % 2 == 0 ? random_key() : a;
    if (i % 2 == 1 && !b.empty() && rnd.OneIn(2)) {
      b[rnd.Uniform(b.size())] = alphabet[rnd.Uniform(sizeof(alphabet))];
    } else if (i % 2 == 1) {
      b.resize(rnd.Uniform(b.size() + 3), '\x80');
    }
    ASSERT_EQ(sign(CompareBytes(a, b)), sign(std::string_view(a).compare(b)))
        << testing::PrintToString(a) << " vs " << testing::PrintToString(b);
    ASSERT_EQ(sign(cmp()->Compare(a, b)), sign(CompareBytes(a, b)));
  }
}

// Where two keys' order words differ, the keys differ in the same direction
// (what index searches rely on), for keys around the eight-byte word:
// shorter, longer, with zero bytes that the padding imitates. The bytewise
// order's part is the whole key.
TEST(ComparatorTest, OrderWordsOrderAsTheKeysDo) {
  Random rnd(7);
  const char alphabet[] = {'\x00', '\x01', 'a', '\x80', '\xff'};
  auto random_key = [&] {
    std::string key(rnd.Uniform(13), '\0');
    for (char& c : key) c = alphabet[rnd.Uniform(sizeof(alphabet))];
    return key;
  };
  int differing = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string a = random_key();
    const std::string b = random_key();
    std::string_view part;
    ASSERT_TRUE(cmp()->BytewisePart(a, &part));
    ASSERT_EQ(part, a);
    const uint64_t wa = BytewiseOrderWord(a);
    const uint64_t wb = BytewiseOrderWord(b);
    if (wa == wb) continue;
    ++differing;
    ASSERT_EQ(wa < wb, cmp()->Compare(a, b) < 0)
        << testing::PrintToString(a) << " vs " << testing::PrintToString(b);
  }
  EXPECT_GT(differing, 10000);
  EXPECT_EQ(BytewiseOrderWord(""), 0u);
  EXPECT_EQ(BytewiseOrderWord("\x01\x02"), uint64_t{0x0102000000000000});
  EXPECT_EQ(BytewiseOrderWord("123456789"), uint64_t{0x3132333435363738});
}

TEST(ComparatorTest, SeparatorExamples) {
  EXPECT_EQ(Separator("abcdefg", "abzz"), "abd");
  EXPECT_EQ(Separator("helloworld", "hellz"), "hellp");
  // Adjacent bytes leave no room: unchanged.
  EXPECT_EQ(Separator("abc1", "abc2"), "abc1");
  // Prefix relations: unchanged.
  EXPECT_EQ(Separator("abc", "abcdef"), "abc");
  EXPECT_EQ(Separator("abc", "abc"), "abc");
  // 0xff cannot be incremented.
  EXPECT_EQ(Separator(std::string("a\xff\x01"), "b"), std::string("a\xff\x01"));
}

TEST(ComparatorTest, SuccessorExamples) {
  EXPECT_EQ(Successor("abc"), "b");
  EXPECT_EQ(Successor(std::string("\xff\xff"
                                  "a",
                                  3)),
            std::string("\xff\xff"
                        "b",
                        3));
  EXPECT_EQ(Successor(std::string("\xff\xff", 2)), std::string("\xff\xff", 2));
  EXPECT_EQ(Successor(""), "");
}

std::string RandomBytes(Random* r) {
  // A small alphabet with the extreme bytes makes shared prefixes and 0xff
  // common.
  static const char kBytes[] = {'\x00', '\x01', 'a',   'b',
                                '\x7f', '\xfe', '\xff'};
  std::string s(r->Uniform(6), '\0');
  for (char& c : s) c = kBytes[r->Uniform(sizeof(kBytes))];
  return s;
}

TEST(ComparatorTest, SeparatorAndSuccessorPropertiesHold) {
  Random r(301);
  for (int i = 0; i < 20000; ++i) {
    std::string a = RandomBytes(&r);
    std::string b = RandomBytes(&r);
    if (cmp()->Compare(a, b) > 0) std::swap(a, b);
    const std::string sep = Separator(a, b);
    // a <= sep, and sep < b whenever a < b; never longer than a.
    EXPECT_LE(cmp()->Compare(a, sep), 0);
    if (cmp()->Compare(a, b) < 0) {
      EXPECT_LT(cmp()->Compare(sep, b), 0);
    }
    EXPECT_LE(sep.size(), a.size());

    const std::string succ = Successor(a);
    EXPECT_GE(cmp()->Compare(succ, a), 0);
    EXPECT_LE(succ.size(), a.size());
  }
}

}  // namespace
}  // namespace sift
