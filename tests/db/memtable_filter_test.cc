// The memtable's filter: no false negatives, a false-positive rate that
// matches its sizing, and a memtable that answers the same with it as
// without it.

#include "db/memtable_filter.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "db/dbformat.h"
#include "db/memtable.h"
#include "util/comparator.h"
#include "util/hash.h"

namespace sift {
namespace {

std::string Key(int i) { return "key" + std::to_string(i); }

TEST(MemTableFilterTest, NoFalseNegativesAndFewFalsePositives) {
  // A 4 MiB write buffer's filter holding 60,000 keys (entries of about 70
  // bytes): 17.5 bits per key.
  MemTableFilter filter(MemTableFilter::BytesFor(4 << 20));
  EXPECT_EQ(filter.MemoryUsage(), size_t{128} << 10);
  constexpr int kKeys = 60000;
  for (int i = 0; i < kKeys; ++i) filter.Add(Key(i));
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(filter.MayContain(Key(i))) << i;
  int false_positives = 0;
  constexpr int kProbes = 200000;
  for (int i = 0; i < kProbes; ++i) {
    false_positives += filter.MayContain(Key(kKeys + i));
  }
  // Blocked layout, k = 6, 17.5 bits/key: about 0.1%; allow 3x.
  EXPECT_LT(false_positives, kProbes * 3 / 1000);
}

TEST(MemTableFilterTest, TinyFilterStillHasNoFalseNegatives) {
  MemTableFilter filter(1);
  EXPECT_EQ(filter.MemoryUsage(), 64u);
  for (int i = 0; i < 1000; ++i) filter.Add(Key(i));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(filter.MayContain(Key(i)));
}

// A lookup hands one FilterKeyHash to the memtables' filters and to the
// table filters, in either order (MultiGet prefetches first): a hash a table
// probe already cached answers as a fresh hash of the key does.
TEST(MemTableFilterTest, SharedHashAnswersAsTheKey) {
  MemTableFilter filter(MemTableFilter::BytesFor(1 << 20));
  constexpr int kKeys = 5000;
  for (int i = 0; i < kKeys; ++i) filter.Add(Key(i));
  for (int i = 0; i < 2 * kKeys; ++i) {
    const std::string key = Key(i);
    FilterKeyHash shared(key);
    // As a table probe would have left it.
    EXPECT_EQ(shared.ForSeed(kDefaultFilterSeed),
              Hash64(key, kDefaultFilterSeed));
    filter.Prefetch(&shared);
    EXPECT_EQ(filter.MayContain(&shared), filter.MayContain(key)) << key;
    if (i < kKeys) {
      EXPECT_TRUE(filter.MayContain(&shared)) << key;
    }
  }
}

TEST(MemTableFilterTest, MemTableAnswersTheSameWithTheFilter) {
  const InternalKeyComparator icmp(BytewiseComparator());
  MemTable with(icmp, MemTableFilter::BytesFor(64 << 10));
  MemTable without(icmp);
  SequenceNumber seq = 1;
  for (int i = 0; i < 3000; ++i) {
    const ValueType type = i % 7 == 0 ? kTypeDeletion : kTypeValue;
    const std::string value = type == kTypeValue ? "v" + std::to_string(i) : "";
    with.Add(seq, type, Key(i % 2000), value);
    without.Add(seq, type, Key(i % 2000), value);
    ++seq;
  }
  for (int i = 0; i < 4000; ++i) {
    for (SequenceNumber at : {SequenceNumber{500}, seq}) {
      const LookupKey lkey(Key(i), at);
      std::string v1, v2;
      absl::Status s1, s2;
      const bool found1 = with.Get(lkey, &v1, &s1);
      const bool found2 = without.Get(lkey, &v2, &s2);
      ASSERT_EQ(found1, found2) << i;
      if (found1) {
        ASSERT_EQ(s1.code(), s2.code()) << i;
        ASSERT_EQ(v1, v2) << i;
      }
    }
  }
  EXPECT_GT(with.ApproximateMemoryUsage(), without.ApproximateMemoryUsage());
}

}  // namespace
}  // namespace sift
