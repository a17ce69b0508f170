// How many reads a table costs: Open, absent keys with and without a filter,
// and the block cache. Reads are counted both by the table's ReadStats and
// underneath it by a CountingEnv, and the two must agree.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "filter/filter.h"
#include "table/table.h"
#include "table/table_properties.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/scratch_dir.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/cache.h"
#include "util/counting_env.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KVVector;
using test::TableGet;

// Keys are even numbers; odd numbers are absent but inside the key range.
KVVector EvenKeys(int n) {
  KVVector kvs;
  for (int i = 0; i < n; ++i) {
    kvs.emplace_back(test::NumberKey(2 * i), "value" + std::to_string(i));
  }
  return kvs;
}

class TableReadsTest : public testing::Test {
 protected:
  TableReadsTest()
      : mem_(test::NewTestEnv()),
        env_(std::make_unique<CountingEnv>(mem_.get())) {}

  std::unique_ptr<Table> Build(const TableOptions& o, int n,
                               const std::string& name = "/r.sst") {
    auto size = test::WriteTable(env_.get(), name, o, EvenKeys(n));
    EXPECT_TRUE(size.ok()) << size.status();
    env_->Reset();
    auto table = test::OpenTable(env_.get(), name, o);
    EXPECT_TRUE(table.ok()) << table.status();
    return table.ok() ? *std::move(table) : nullptr;
  }

  // Looks up `count` absent keys spread over the table's range; returns the
  // table's counters and checks them against the Env's.
  ReadStats AbsentLookups(const Table& table, int n, int count) {
    env_->Reset();
    ReadStats stats;
    for (int i = 0; i < count; ++i) {
      const uint64_t odd = 2 * (static_cast<uint64_t>(i) * n / count) + 1;
      EXPECT_TRUE(absl::IsNotFound(
          TableGet(table, ReadOptions(), test::NumberKey(odd), &stats)
              .status()));
    }
    EXPECT_EQ(env_->random_reads(), stats.block_reads);
    EXPECT_EQ(env_->random_read_bytes(), stats.bytes_read);
    return stats;
  }

  std::unique_ptr<Env> mem_;
  std::unique_ptr<CountingEnv> env_;
};

TEST_F(TableReadsTest, OpenReadsTheTailOnce) {
  TableOptions o;
  auto table = Build(o, 20000);
  ASSERT_NE(table, nullptr);
  // A 20,000-key table's filter (~25 KB) and index fit in the tail read.
  EXPECT_EQ(env_->random_reads(), 1u);
}

TEST_F(TableReadsTest, OpenReadsABigTailTwice) {
  TableOptions o;
  o.filter_bits_per_key = 20;  // 200,000 keys: a filter of ~500 KB
  auto table = Build(o, 200000);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(env_->random_reads(), 2u);
  ASSERT_TRUE(TableGet(*table, ReadOptions(), test::NumberKey(1234)).ok());
}

TEST_F(TableReadsTest, AbsentKeysCostOneBlockReadWithoutFilter) {
  TableOptions o;
  o.filter_bits_per_key = 0;
  const int n = 100000;
  auto table = Build(o, n);
  ASSERT_NE(table, nullptr);
  const ReadStats stats = AbsentLookups(*table, n, 10000);
  EXPECT_EQ(stats.block_reads, 10000u);
  EXPECT_EQ(stats.filter_negatives, 0u);
  EXPECT_EQ(stats.filter_positives, 0u);
  EXPECT_EQ(stats.filter_false_positives, 0u);
  EXPECT_EQ(stats.block_cache_hits, 0u);
  std::printf("block reads per absent key, no filter: %.4f\n",
              stats.block_reads / 10000.0);
}

TEST_F(TableReadsTest, AbsentKeysRarelyReadWithFilter) {
  for (FilterKind kind :
       {FilterKind::kBlockedBloom, FilterKind::kStandardBloom}) {
    TableOptions o;
    o.filter_bits_per_key = 10;
    o.filter_kind = kind;
    const int n = 100000;
    auto table = Build(o, n, "/f" + std::to_string(static_cast<int>(kind)));
    ASSERT_NE(table, nullptr);
    const ReadStats stats = AbsentLookups(*table, n, 10000);
    // <= 2% of lookups read a block; each false positive reads exactly one.
    EXPECT_LE(stats.block_reads, 200u);
    EXPECT_EQ(stats.block_reads, stats.filter_false_positives);
    EXPECT_EQ(stats.filter_positives, stats.filter_false_positives);
    EXPECT_EQ(stats.filter_negatives + stats.filter_positives, 10000u);
    std::printf("block reads per absent key, %s 10 bits/key: %.4f\n",
                kind == FilterKind::kBlockedBloom ? "blocked" : "standard",
                stats.block_reads / 10000.0);
    // Present keys: one block read each, filter positive, no false positive.
    env_->Reset();
    ReadStats present;
    for (int i = 0; i < n; i += 97) {
      ASSERT_TRUE(
          TableGet(*table, ReadOptions(), test::NumberKey(2 * i), &present)
              .ok());
    }
    EXPECT_EQ(present.block_reads, static_cast<uint64_t>((n + 96) / 97));
    EXPECT_EQ(present.filter_false_positives, 0u);
    EXPECT_EQ(env_->random_reads(), present.block_reads);
  }
}

TEST_F(TableReadsTest, BlockCacheServesRepeatReads) {
  auto cache = NewLRUCache(8 << 20);
  TableOptions o;
  o.block_cache = cache.get();
  auto table = Build(o, 10000);
  ASSERT_NE(table, nullptr);
  env_->Reset();
  ReadStats stats;
  const std::string key = test::NumberKey(5000);
  ASSERT_TRUE(TableGet(*table, ReadOptions(), key, &stats).ok());
  EXPECT_EQ(stats.block_reads, 1u);
  EXPECT_EQ(stats.block_cache_hits, 0u);
  EXPECT_GT(cache->TotalCharge(), 0u);
  ASSERT_TRUE(TableGet(*table, ReadOptions(), key, &stats).ok());
  EXPECT_EQ(stats.block_reads, 1u);
  EXPECT_EQ(stats.block_cache_hits, 1u);
  EXPECT_EQ(env_->random_reads(), 1u);

  // fill_cache = false: read, but not kept.
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  const size_t charge = cache->TotalCharge();
  const std::string other = test::NumberKey(15000);
  ASSERT_TRUE(TableGet(*table, no_fill, other, &stats).ok());
  ASSERT_TRUE(TableGet(*table, no_fill, other, &stats).ok());
  EXPECT_EQ(stats.block_reads, 3u);
  EXPECT_EQ(cache->TotalCharge(), charge);
  // ... but a cached block is still used.
  ASSERT_TRUE(TableGet(*table, no_fill, key, &stats).ok());
  EXPECT_EQ(stats.block_cache_hits, 2u);

  // A scan fills the cache; a second scan reads nothing.
  auto it = table->NewIterator(ReadOptions());
  int count = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
  EXPECT_EQ(count, 10000);
  it.reset();
  env_->Reset();
  it = table->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) --count;
  EXPECT_EQ(count, 0);
  EXPECT_EQ(env_->random_reads(), 0u);
}

TEST_F(TableReadsTest, TablesSharingACacheDoNotCollide) {
  auto cache = NewLRUCache(8 << 20);
  TableOptions o;
  o.block_cache = cache.get();
  auto size1 = test::WriteTable(env_.get(), "/1.sst", o, {{"k", "one"}});
  auto size2 = test::WriteTable(env_.get(), "/2.sst", o, {{"k", "two"}});
  ASSERT_TRUE(size1.ok() && size2.ok());
  auto t1 = test::OpenTable(env_.get(), "/1.sst", o);
  auto t2 = test::OpenTable(env_.get(), "/2.sst", o);
  ASSERT_TRUE(t1.ok() && t2.ok());
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(*TableGet(**t1, ReadOptions(), "k"), "one");
    EXPECT_EQ(*TableGet(**t2, ReadOptions(), "k"), "two");
  }
}

// The batched steps (filter, index, prefetch, block) answer as Get does and
// count the same: present keys, absent keys inside the range, and keys past
// the last entry (no block: a false positive when the filter passed them).
TEST_F(TableReadsTest, SteppedLookupAgreesWithGet) {
  TableOptions o;
  constexpr int kKeys = 5000;
  auto table = Build(o, kKeys);
  ASSERT_NE(table, nullptr);
  ReadStats by_get;
  ReadStats by_steps;
  for (uint64_t n = 0; n < 2 * kKeys + 400; n += 3) {
    const std::string key = test::NumberKey(n);
    const absl::StatusOr<std::string> expected =
        TableGet(*table, ReadOptions(), key, &by_get);

    std::string value;
    bool found = false;
    FilterKeyHash filter_key(key);
    if (table->FilterMayMatch(&filter_key, &by_steps)) {
      auto block = table->FindDataBlock(key, &by_steps);
      ASSERT_TRUE(block.ok()) << block.status();
      if (block->has_value()) {
        table->PrefetchDataBlock(&**block);
        ASSERT_TRUE(table
                        ->GetInDataBlock(
                            ReadOptions(), **block, key,
                            [&](std::string_view k, std::string_view v) {
                              if (k != key) return false;
                              value.assign(v);
                              found = true;
                              return true;
                            },
                            &by_steps)
                        .ok());
      } else {
        EXPECT_GE(n, 2u * kKeys - 1) << "only keys past the last have no block";
      }
    }
    ASSERT_EQ(found, expected.ok()) << key;
    if (found) {
      EXPECT_EQ(value, *expected);
    }
  }
  EXPECT_EQ(by_steps.filter_negatives, by_get.filter_negatives);
  EXPECT_EQ(by_steps.filter_positives, by_get.filter_positives);
  EXPECT_EQ(by_steps.filter_false_positives, by_get.filter_false_positives);
  EXPECT_EQ(by_steps.block_reads, by_get.block_reads);
  EXPECT_GT(by_get.filter_negatives, 0u);
  EXPECT_GT(by_get.filter_false_positives, 0u);
}

// On a memory-mapped file the stepped lookup reads each block once: the
// view PrefetchDataBlock looked up is the one the search parses, so reads
// counted under the table (by the Env) equal the table's block reads.
// Tables written to a real file and read through a memory map, with reads
// counted underneath.
class TableMappedReadsTest : public testing::Test {
 protected:
  // `kvs` written as a table and opened memory-mapped through env_, with
  // env_'s counters reset; nullptr if that failed, or (mapped_ false) where
  // this platform has no memory maps.
  std::unique_ptr<Table> WriteAndMap(const TableOptions& o,
                                     const test::KVVector& kvs) {
    const std::string fname = dir_.Sub("m.sst");
    EXPECT_TRUE(test::WriteTable(&env_, fname, o, kvs).ok());
    auto size = env_.GetFileSize(fname);
    EXPECT_TRUE(size.ok()) << size.status();
    if (!size.ok()) return nullptr;
    auto file =
        env_.NewRandomAccessFile(fname, RandomAccessMode::kMemoryMapped);
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return nullptr;
    if (!(*file)->StableReads()) {
      mapped_ = false;
      return nullptr;
    }
    auto table = Table::Open(o, *std::move(file), *size, fname);
    EXPECT_TRUE(table.ok()) << table.status();
    env_.Reset();
    return table.ok() ? *std::move(table) : nullptr;
  }

  test::ScratchDir dir_{"mapped"};
  CountingEnv env_{Env::Default()};
  bool mapped_ = true;
};

TEST_F(TableMappedReadsTest, PrefetchedBlockIsReadOnce) {
  TableOptions o;
  o.compression = Compression::kNone;  // parsed in place in the map
  constexpr int kKeys = 3000;
  std::unique_ptr<Table> table = WriteAndMap(o, EvenKeys(kKeys));
  if (!mapped_) GTEST_SKIP() << "no memory map here";
  ASSERT_NE(table, nullptr);
  ReadStats stats;
  int found = 0;
  for (int i = 0; i < kKeys; i += 7) {
    const std::string key = test::NumberKey(2 * i);
    FilterKeyHash filter_key(key);
    ASSERT_TRUE(table->FilterMayMatch(&filter_key, &stats));
    auto block = table->FindDataBlock(key, &stats);
    ASSERT_TRUE(block.ok() && block->has_value());
    table->PrefetchDataBlock(&**block);
    EXPECT_FALSE((*block)->mapped.empty());
    ASSERT_TRUE(table
                    ->GetInDataBlock(
                        ReadOptions(), **block, key,
                        [&](std::string_view k, std::string_view) {
                          found += k == key;
                          return k == key;
                        },
                        &stats)
                    .ok());
  }
  EXPECT_EQ(found, (kKeys + 6) / 7);
  EXPECT_EQ(stats.block_reads, static_cast<uint64_t>(found));
  EXPECT_EQ(env_.random_reads(), stats.block_reads);
}

// A compressed block of a memory-mapped table is used decoded, from the
// block cache: one file read when it is first decoded, none while the cache
// holds it (before, each use read the map and then read it again to decode).
TEST_F(TableMappedReadsTest, CachedCompressedBlocksAreNotReadAgain) {
  auto cache = NewLRUCache(8 << 20);
  TableOptions o;
  o.compression = Compression::kSnappy;
  o.block_cache = cache.get();
  constexpr int kKeys = 3000;
  test::KVVector kvs;
  for (int i = 0; i < kKeys; ++i) {
    kvs.emplace_back(test::NumberKey(2 * i), std::string(100, 'a' + i % 3));
  }
  std::unique_ptr<Table> table = WriteAndMap(o, kvs);
  if (!mapped_) GTEST_SKIP() << "no memory map here";
  ASSERT_NE(table, nullptr);
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass);
    env_.Reset();
    ReadStats stats;
    for (int i = 0; i < kKeys; i += 5) {
      ASSERT_TRUE(
          TableGet(*table, ReadOptions(), test::NumberKey(2 * i), &stats).ok());
    }
    EXPECT_EQ(env_.random_reads(), stats.block_reads);
    if (pass == 0) {
      EXPECT_GT(stats.block_reads, 10u);
    } else {
      EXPECT_EQ(stats.block_reads, 0u);
      EXPECT_EQ(stats.block_cache_hits, static_cast<uint64_t>(kKeys / 5));
    }
  }
}

// A scan of a table many times the block cache, through the cache, leaves
// the blocks that point reads use again in place: a full cache admits a
// block on its second miss (Cache::Admit), and a scan misses each block
// once. The blocks it refuses are decoded outside the cache and read right.
TEST_F(TableMappedReadsTest, AScanDoesNotEvictTheBlocksInUse) {
  auto cache = NewLRUCache(1 << 20);  // about 240 decoded blocks
  TableOptions o;
  o.compression = Compression::kSnappy;
  o.block_cache = cache.get();
  constexpr int kKeys = 40000;  // about 1,100 blocks
  test::KVVector kvs;
  for (int i = 0; i < kKeys; ++i) {
    kvs.emplace_back(
        test::NumberKey(2 * i),
        std::string(100, static_cast<char>('a' + i % 3)) + std::to_string(i));
  }
  std::unique_ptr<Table> table = WriteAndMap(o, kvs);
  if (!mapped_) GTEST_SKIP() << "no memory map here";
  ASSERT_NE(table, nullptr);
  // The blocks in use: those of the first 2,000 keys, about 60.
  auto read_hot = [&](ReadStats* stats) {
    for (int i = 0; i < 2000; i += 7) {
      auto v = TableGet(*table, ReadOptions(), kvs[i].first, stats);
      ASSERT_TRUE(v.ok()) << v.status();
      ASSERT_EQ(*v, kvs[i].second);
    }
  };
  ReadStats first;
  read_hot(&first);
  const uint64_t hot_blocks = first.block_reads;
  ASSERT_GT(hot_blocks, 40u);
  ReadStats second;
  read_hot(&second);
  EXPECT_EQ(second.block_reads, 0u);

  std::unique_ptr<Iterator> it = table->NewIterator(ReadOptions(), nullptr);
  int entries = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ASSERT_EQ(it->value(), kvs[entries].second);
    ++entries;
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ(entries, kKeys);
  it.reset();
  EXPECT_LE(cache->TotalCharge(), size_t{1} << 20);

  // Before admission, the scan's blocks evicted every one of them.
  ReadStats after;
  read_hot(&after);
  EXPECT_LE(after.block_reads, hot_blocks / 4);

  // Point reads of blocks the full cache refuses: right values, and a block
  // missed twice is admitted (the third read hits).
  for (int i = 30000; i < 30000 + 35 * 20; i += 35) {
    ReadStats stats;
    for (int read = 0; read < 3; ++read) {
      auto v = TableGet(*table, ReadOptions(), kvs[i].first, &stats);
      ASSERT_TRUE(v.ok()) << v.status();
      ASSERT_EQ(*v, kvs[i].second);
    }
    EXPECT_GE(stats.block_cache_hits, 1u) << i;
  }
}

}  // namespace
}  // namespace sift
