#include "db/dbformat.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "util/coding.h"

namespace sift {
namespace {

std::string IKey(std::string_view user_key, SequenceNumber seq, ValueType t) {
  std::string result;
  AppendInternalKey(&result, user_key, seq, t);
  return result;
}

InternalKeyComparator Icmp() {
  return InternalKeyComparator(BytewiseComparator());
}

TEST(DBFormatTest, InternalKeyLayout) {
  const std::string k = IKey("abc", 0x0102030405, kTypeValue);
  ASSERT_EQ(k.size(), 11u);
  EXPECT_EQ(k.substr(0, 3), "abc");
  EXPECT_EQ(DecodeFixed64(k.data() + 3), (uint64_t{0x0102030405} << 8) | 1);
}

TEST(DBFormatTest, ParseRoundTrip) {
  const std::vector<std::string> keys = {
      "", "k", "hello", std::string(300, 'x'), std::string("\0\xff", 2)};
  const std::vector<SequenceNumber> seqs = {
      0, 1, 255, 256, 1ull << 40, kMaxSequenceNumber};
  for (const auto& key : keys) {
    for (SequenceNumber seq : seqs) {
      for (ValueType t : {kTypeValue, kTypeDeletion}) {
        const std::string ik = IKey(key, seq, t);
        ParsedInternalKey parsed;
        ASSERT_TRUE(ParseInternalKey(ik, &parsed));
        EXPECT_EQ(parsed.user_key, key);
        EXPECT_EQ(parsed.sequence, seq);
        EXPECT_EQ(parsed.type, t);
        EXPECT_EQ(ExtractUserKey(ik), key);
      }
    }
  }
}

TEST(DBFormatTest, ParseRejectsShortAndUnknownType) {
  ParsedInternalKey parsed;
  EXPECT_FALSE(ParseInternalKey("", &parsed));
  EXPECT_FALSE(ParseInternalKey("1234567", &parsed));
  std::string bad = "key";
  PutFixed64(&bad, (uint64_t{5} << 8) | 0x7);  // type 7 does not exist
  EXPECT_FALSE(ParseInternalKey(bad, &parsed));
  std::string just_tag;
  PutFixed64(&just_tag, (uint64_t{5} << 8) | kTypeDeletion);
  ASSERT_TRUE(ParseInternalKey(just_tag, &parsed));
  EXPECT_TRUE(parsed.user_key.empty());
}

TEST(DBFormatTest, OrderUserKeyAscendingSequenceDescending) {
  const InternalKeyComparator icmp = Icmp();
  // Listed in the order the comparator must produce.
  const std::vector<std::string> ordered = {
      IKey("a", 100, kTypeValue),
      IKey("a", 100, kTypeDeletion),
      IKey("a", 99, kTypeValue),
      IKey("a", 0, kTypeValue),
      IKey("ab", kMaxSequenceNumber, kTypeValue),
      IKey("ab", 5, kTypeDeletion),
      IKey("b", 1000, kTypeValue),
  };
  for (size_t i = 0; i < ordered.size(); ++i) {
    EXPECT_EQ(icmp.Compare(ordered[i], ordered[i]), 0);
    for (size_t j = i + 1; j < ordered.size(); ++j) {
      EXPECT_LT(icmp.Compare(ordered[i], ordered[j]), 0) << i << " " << j;
      EXPECT_GT(icmp.Compare(ordered[j], ordered[i]), 0) << i << " " << j;
    }
  }
}

std::string Shorten(const std::string& s, const std::string& l) {
  std::string result = s;
  Icmp().FindShortestSeparator(&result, l);
  return result;
}

std::string Successor(const std::string& s) {
  std::string result = s;
  Icmp().FindShortSuccessor(&result);
  return result;
}

TEST(DBFormatTest, ShortestSeparator) {
  const uint64_t kMaxTag =
      PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek);
  (void)kMaxTag;
  // Same user key: unchanged.
  EXPECT_EQ(Shorten(IKey("foo", 100, kTypeValue), IKey("foo", 99, kTypeValue)),
            IKey("foo", 100, kTypeValue));
  EXPECT_EQ(Shorten(IKey("foo", 100, kTypeValue), IKey("foo", 101, kTypeValue)),
            IKey("foo", 100, kTypeValue));
  // Misordered user keys: unchanged.
  EXPECT_EQ(Shorten(IKey("foo", 100, kTypeValue), IKey("bar", 99, kTypeValue)),
            IKey("foo", 100, kTypeValue));
  // One user key a prefix of the other: unchanged.
  EXPECT_EQ(
      Shorten(IKey("foo", 100, kTypeValue), IKey("foobar", 200, kTypeValue)),
      IKey("foo", 100, kTypeValue));
  EXPECT_EQ(
      Shorten(IKey("foobar", 100, kTypeValue), IKey("foo", 200, kTypeValue)),
      IKey("foobar", 100, kTypeValue));
  // Adjacent first bytes: nothing shorter fits.
  EXPECT_EQ(Shorten(IKey("foo", 100, kTypeValue), IKey("fop", 1, kTypeValue)),
            IKey("foo", 100, kTypeValue));
  // Shortened user key with the max tag.
  EXPECT_EQ(
      Shorten(IKey("foo", 100, kTypeValue), IKey("hello", 200, kTypeValue)),
      IKey("g", kMaxSequenceNumber, kValueTypeForSeek));
  EXPECT_EQ(
      Shorten(IKey("abcdefg", 7, kTypeDeletion), IKey("abzz", 3, kTypeValue)),
      IKey("abd", kMaxSequenceNumber, kValueTypeForSeek));
}

TEST(DBFormatTest, ShortestSeparatorStaysBetween) {
  const InternalKeyComparator icmp = Icmp();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a", "z"},
      {"apple", "banana"},
      {"k1000", "k2"},
      {"", "a"},
      {std::string("\x01\xff\xff", 3), std::string("\x03", 1)}};
  for (const auto& [lo, hi] : cases) {
    const std::string start = IKey(lo, 50, kTypeValue);
    const std::string limit = IKey(hi, 60, kTypeValue);
    const std::string sep = Shorten(start, limit);
    EXPECT_LE(icmp.Compare(start, sep), 0) << lo << " " << hi;
    EXPECT_LT(icmp.Compare(sep, limit), 0) << lo << " " << hi;
    EXPECT_LE(sep.size(), start.size());
  }
}

// An internal key's bytewise part is its user key: internal keys order by
// it first. A key too short to hold a tag has none.
TEST(DBFormatTest, BytewisePartIsTheUserKey) {
  const InternalKeyComparator icmp = Icmp();
  const std::string key = IKey("abc", 5, kTypeValue);
  std::string_view part;
  ASSERT_TRUE(icmp.BytewisePart(key, &part));
  EXPECT_EQ(part, "abc");
  EXPECT_EQ(part.data(), key.data());
  EXPECT_FALSE(icmp.BytewisePart("short", &part));
}

// KeyOrder (util/comparator.h) compares the user keys inline and leaves
// only keys of one user key to the comparator: its sign must be the
// comparator's for every pair, including user keys that are prefixes of one
// another and entries of one user key at several sequences (where a bytewise
// compare of the whole keys would order the tags wrongly), and for an order
// with no bytewise part (reversed user keys), which it must not shortcut.
TEST(DBFormatTest, KeyOrderAgreesWithTheComparator) {
  class ReverseComparator final : public Comparator {
   public:
    int Compare(std::string_view a, std::string_view b) const override {
      return BytewiseComparator()->Compare(b, a);
    }
    const char* Name() const override { return "test.Reverse"; }
    void FindShortestSeparator(std::string*, std::string_view) const override {}
    void FindShortSuccessor(std::string*) const override {}
  };
  const ReverseComparator reverse;
  const InternalKeyComparator bytewise_icmp = Icmp();
  const InternalKeyComparator reverse_icmp(&reverse);
  EXPECT_EQ(BytewiseComparator()->BytewisePartSuffix(), 0);
  EXPECT_EQ(bytewise_icmp.BytewisePartSuffix(), 8);
  EXPECT_EQ(reverse_icmp.BytewisePartSuffix(), -1);

  std::vector<std::string> keys;
  for (const char* user_key :
       {"", "a", "ab", "abc", "abd", "b", "k0000001", "k0000001\xff",
        "k00000010", "k0000002", "\xff", "\xff\xff"}) {
    for (const SequenceNumber seq :
         {SequenceNumber{0}, SequenceNumber{1}, SequenceNumber{255},
          SequenceNumber{256}, kMaxSequenceNumber}) {
      keys.push_back(IKey(user_key, seq, kTypeValue));
      keys.push_back(IKey(user_key, seq, kTypeDeletion));
    }
  }
  auto sign = [](int c) { return (c > 0) - (c < 0); };
  for (const InternalKeyComparator* icmp : {&bytewise_icmp, &reverse_icmp}) {
    const KeyOrder order(icmp);
    for (const std::string& a : keys) {
      for (const std::string& b : keys) {
        ASSERT_EQ(sign(order.Compare(a, b)), sign(icmp->Compare(a, b)))
            << icmp->user_comparator()->Name();
      }
    }
  }
  // And the plain bytewise order, keys as they are.
  const KeyOrder bytes(BytewiseComparator());
  for (const std::string& a : keys) {
    for (const std::string& b : keys) {
      ASSERT_EQ(sign(bytes.Compare(a, b)),
                sign(BytewiseComparator()->Compare(a, b)));
    }
  }
}

TEST(DBFormatTest, ShortSuccessor) {
  EXPECT_EQ(Successor(IKey("foo", 100, kTypeValue)),
            IKey("g", kMaxSequenceNumber, kValueTypeForSeek));
  EXPECT_EQ(Successor(IKey("\xff\xff", 100, kTypeValue)),
            IKey("\xff\xff", 100, kTypeValue));
  const InternalKeyComparator icmp = Icmp();
  const std::string k = IKey("abc", 3, kTypeDeletion);
  EXPECT_LT(icmp.Compare(k, Successor(k)), 0);
}

TEST(DBFormatTest, InternalKeyDecodeValidates) {
  InternalKey key("user", 42, kTypeValue);
  EXPECT_EQ(key.user_key(), "user");
  EXPECT_FALSE(key.empty());

  InternalKey decoded;
  EXPECT_TRUE(decoded.empty());
  ASSERT_TRUE(decoded.DecodeFrom(key.Encode()));
  EXPECT_EQ(decoded.Encode(), key.Encode());

  // Invalid input leaves the key unchanged.
  EXPECT_FALSE(decoded.DecodeFrom("short"));
  std::string bad_type = "x";
  PutFixed64(&bad_type, (uint64_t{1} << 8) | 0x42);
  EXPECT_FALSE(decoded.DecodeFrom(bad_type));
  EXPECT_EQ(decoded.Encode(), key.Encode());

  EXPECT_EQ(key.DebugString(), "'user' @ 42 : value");
  EXPECT_EQ(InternalKey("a\n", 1, kTypeDeletion).DebugString(),
            "'a\\n' @ 1 : deletion");
  decoded.Clear();
  EXPECT_TRUE(decoded.empty());
}

TEST(DBFormatTest, LookupKeyLayout) {
  // 119 and 120 bytes: the last key whose length prefix is one byte and the
  // first whose prefix is two.
  for (const std::string& user :
       {std::string(), std::string("abc"), std::string(119, 'p'),
        std::string(120, 'r'), std::string(200, 'q')}) {
    const LookupKey lk(user, 77);
    EXPECT_EQ(lk.user_key(), user);
    EXPECT_EQ(lk.internal_key(), IKey(user, 77, kValueTypeForSeek));
    std::string_view mk = lk.memtable_key();
    std::string_view ik;
    ASSERT_TRUE(GetLengthPrefixed(&mk, &ik));
    EXPECT_TRUE(mk.empty());
    EXPECT_EQ(ik, lk.internal_key());
  }
}

TEST(DBFormatTest, LookupKeyCopiesEveryShortLength) {
  // Keys of 8 to 32 bytes are copied as two overlapping words or pairs of
  // words: every length of each branch, with no two bytes alike, so that a
  // word copied to the wrong place shows.
  for (size_t n = 0; n <= 40; ++n) {
    std::string user(n, '\0');
    for (size_t i = 0; i < n; ++i) user[i] = static_cast<char>('A' + i);
    const LookupKey lk(user, 5);
    EXPECT_EQ(lk.user_key(), user) << n << " bytes";
    EXPECT_EQ(lk.internal_key(), IKey(user, 5, kValueTypeForSeek))
        << n << " bytes";
  }
}

}  // namespace
}  // namespace sift
