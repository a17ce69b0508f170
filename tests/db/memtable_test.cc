#include "db/memtable.h"

#include <map>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "tests/testutil/testutil.h"
#include "util/random.h"

namespace sift {
namespace {

class MemTableTest : public testing::Test {
 protected:
  MemTableTest() : icmp_(BytewiseComparator()), mem_(icmp_) {}

  // Get at snapshot `seq`: "NOT_FOUND" (deleted), "ABSENT" (no entry), or the
  // value.
  std::string Get(std::string_view key, SequenceNumber seq) {
    const LookupKey lk(key, seq);
    std::string value;
    absl::Status s;
    if (!mem_.Get(lk, &value, &s)) return "ABSENT";
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    EXPECT_TRUE(s.ok()) << s;
    return value;
  }

  InternalKeyComparator icmp_;
  MemTable mem_;
};

TEST_F(MemTableTest, EmptyTable) {
  EXPECT_EQ(mem_.NumEntries(), 0u);
  EXPECT_EQ(Get("a", kMaxSequenceNumber), "ABSENT");
  auto iter = mem_.NewIterator();
  iter->SeekToFirst();
  EXPECT_FALSE(iter->Valid());
  EXPECT_TRUE(iter->status().ok());
}

TEST_F(MemTableTest, GetHonorsSequenceNumbers) {
  mem_.Add(10, kTypeValue, "k", "v10");
  mem_.Add(20, kTypeDeletion, "k", "");
  mem_.Add(30, kTypeValue, "k", "v30");
  mem_.Add(15, kTypeValue, "j", "j15");
  mem_.Add(16, kTypeValue, "ka", "ka16");

  EXPECT_EQ(Get("k", 9), "ABSENT");
  EXPECT_EQ(Get("k", 10), "v10");
  EXPECT_EQ(Get("k", 19), "v10");
  EXPECT_EQ(Get("k", 20), "NOT_FOUND");
  EXPECT_EQ(Get("k", 29), "NOT_FOUND");
  EXPECT_EQ(Get("k", 30), "v30");
  EXPECT_EQ(Get("k", kMaxSequenceNumber), "v30");
  EXPECT_EQ(Get("j", 100), "j15");
  EXPECT_EQ(Get("j", 14), "ABSENT");
  EXPECT_EQ(Get("ka", 100), "ka16");
  // Neighbours and prefixes of stored keys are not found.
  EXPECT_EQ(Get("", 100), "ABSENT");
  EXPECT_EQ(Get("kb", 100), "ABSENT");
  EXPECT_EQ(Get(std::string("k\0", 2), 100), "ABSENT");
  EXPECT_EQ(mem_.NumEntries(), 5u);
}

TEST_F(MemTableTest, EmptyKeysAndValuesAndBinaryData) {
  mem_.Add(1, kTypeValue, "", "empty key");
  mem_.Add(2, kTypeValue, "empty value", "");
  const std::string binary_key("\0\xff\x01", 3);
  const std::string binary_value("\xff\0\0z", 4);
  mem_.Add(3, kTypeValue, binary_key, binary_value);
  const std::string big(100000, 'b');
  mem_.Add(4, kTypeValue, "big", big);

  EXPECT_EQ(Get("", 10), "empty key");
  EXPECT_EQ(Get("empty value", 10), "");
  EXPECT_EQ(Get(binary_key, 10), binary_value);
  EXPECT_EQ(Get("big", 10), big);
}

TEST_F(MemTableTest, IteratorYieldsInternalKeysInOrder) {
  Random rnd(17);
  // (user key, sequence) -> (type, value), sorted like internal keys.
  std::map<std::pair<std::string, SequenceNumber>, std::string,
           bool (*)(const std::pair<std::string, SequenceNumber>&,
                    const std::pair<std::string, SequenceNumber>&)>
      model([](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        return a.second > b.second;
      });
  for (SequenceNumber seq = 1; seq <= 3000; ++seq) {
    const std::string key = test::RandomKey(&rnd, 1 + rnd.Uniform(3));
    const std::string value = test::RandomString(&rnd, rnd.Uniform(40));
    const bool del = rnd.OneIn(5);
    mem_.Add(seq, del ? kTypeDeletion : kTypeValue, key, del ? "" : value);
    model[{key, seq}] = del ? std::string(1, '\x01') : value;
  }
  ASSERT_EQ(mem_.NumEntries(), model.size());

  auto check_entry = [&](const Iterator& iter, const auto& entry) {
    ParsedInternalKey parsed;
    ASSERT_TRUE(ParseInternalKey(iter.key(), &parsed));
    EXPECT_EQ(parsed.user_key, entry.first.first);
    EXPECT_EQ(parsed.sequence, entry.first.second);
    if (entry.second == std::string(1, '\x01')) {
      EXPECT_EQ(parsed.type, kTypeDeletion);
      EXPECT_TRUE(iter.value().empty());
    } else {
      EXPECT_EQ(parsed.type, kTypeValue);
      EXPECT_EQ(iter.value(), entry.second);
    }
  };

  auto iter = mem_.NewIterator();
  iter->SeekToFirst();
  for (const auto& entry : model) {
    ASSERT_TRUE(iter->Valid());
    check_entry(*iter, entry);
    iter->Next();
  }
  EXPECT_FALSE(iter->Valid());

  iter->SeekToLast();
  for (auto it = model.rbegin(); it != model.rend(); ++it) {
    ASSERT_TRUE(iter->Valid());
    check_entry(*iter, *it);
    iter->Prev();
  }
  EXPECT_FALSE(iter->Valid());

  // Seek takes an internal key; (user key, max sequence) lands on the newest
  // entry of the first user key >= it.
  for (int i = 0; i < 200; ++i) {
    const std::string target = test::RandomKey(&rnd, 1 + rnd.Uniform(3));
    const LookupKey lk(target, kMaxSequenceNumber);
    iter->Seek(lk.internal_key());
    auto it = model.lower_bound({target, kMaxSequenceNumber});
    if (it == model.end()) {
      EXPECT_FALSE(iter->Valid());
    } else {
      ASSERT_TRUE(iter->Valid());
      check_entry(*iter, *it);
    }
  }
}

TEST_F(MemTableTest, IteratorSeesEntriesAddedBeforeItWasCreated) {
  mem_.Add(1, kTypeValue, "b", "1");
  auto iter = mem_.NewIterator();
  mem_.Add(2, kTypeValue, "a", "2");
  iter->SeekToFirst();
  ASSERT_TRUE(iter->Valid());
  // Both entries exist now; the one added before creation must be there.
  int count = 0;
  bool saw_b = false;
  for (; iter->Valid(); iter->Next()) {
    ++count;
    if (ExtractUserKey(iter->key()) == "b") saw_b = true;
  }
  EXPECT_TRUE(saw_b);
  EXPECT_EQ(count, 2);
}

TEST_F(MemTableTest, MemoryUsageGrows) {
  const size_t initial = mem_.ApproximateMemoryUsage();
  for (int i = 0; i < 1000; ++i) {
    mem_.Add(i + 1, kTypeValue, test::NumberKey(i), std::string(100, 'v'));
  }
  // At least the payload bytes are accounted for.
  EXPECT_GE(mem_.ApproximateMemoryUsage() - initial, 1000u * (16 + 8 + 100));
  EXPECT_LT(mem_.ApproximateMemoryUsage(), 1000u * 400);
}

}  // namespace
}  // namespace sift
