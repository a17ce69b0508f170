#include "db/table_cache.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "db/builder.h"
#include "db/dbformat.h"
#include "db/filename.h"
#include "db/memtable.h"
#include "db/retired_memory.h"
#include "filter/modular_bloom.h"
#include "gtest/gtest.h"
#include "tests/testutil/test_env.h"

namespace sift {
namespace {

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%07d", i);
  return buf;
}

class TableCacheTest : public testing::Test {
 protected:
  TableCacheTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    EXPECT_TRUE(env_->CreateDir(dbname_).ok());
  }

  // Write table `number` holding keys [first, first + count) at sequence
  // `seq`, through a cache of its own so the cache under test stays cold.
  FileMetaData MakeTable(uint64_t number, int first, int count,
                         SequenceNumber seq = 10) {
    TableCache writer_cache(dbname_, options_, &icmp_, nullptr, 10);
    MemTable mem(icmp_);
    for (int i = first; i < first + count; ++i) {
      mem.Add(seq, kTypeValue, Key(i), "value-" + Key(i));
    }
    FileMetaData meta;
    meta.number = number;
    std::unique_ptr<Iterator> it = mem.NewIterator();
    EXPECT_TRUE(BuildTable(dbname_, env_.get(), options_, &writer_cache,
                           it.get(), &meta)
                    .ok());
    return meta;
  }

  std::unique_ptr<TableCache> NewCache(int max_open_tables) {
    return std::make_unique<TableCache>(dbname_, options_, &icmp_, nullptr,
                                        max_open_tables);
  }

  // Look up user key `key` in table `f`; true if found (and *value set).
  bool Get(TableCache* cache, const FileMetaData& f, const std::string& key,
           std::string* value, ReadStats* stats) {
    const LookupKey lkey(key, kMaxSequenceNumber);
    bool found = false;
    absl::Status s = cache->Get(
        ReadOptions(), f.number, f.file_size, lkey.internal_key(),
        [&](std::string_view k, std::string_view v) {
          if (ExtractUserKey(k) != key) return false;
          *value = std::string(v);
          found = true;
          return true;
        },
        stats);
    EXPECT_TRUE(s.ok()) << s;
    return found;
  }

  const std::string dbname_ = "/tc";
  std::unique_ptr<Env> env_;
  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
};

TEST_F(TableCacheTest, GetAndIterate) {
  const FileMetaData f = MakeTable(3, 0, 1000);
  auto cache = NewCache(100);
  ReadStats stats;
  std::string value;
  for (int i = 0; i < 1000; i += 7) {
    ASSERT_TRUE(Get(cache.get(), f, Key(i), &value, &stats));
    EXPECT_EQ(value, "value-" + Key(i));
  }
  // Absent keys inside the table's range: the filter rules most out.
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(Get(cache.get(), f, Key(i) + "x", &value, &stats));
  }
  EXPECT_EQ(stats.filter_negatives + stats.filter_false_positives, 1000u);
  EXPECT_LT(stats.filter_false_positives, 50u);
  EXPECT_EQ(cache->NumOpenTables(), 1u);

  std::unique_ptr<Iterator> it =
      cache->NewIterator(ReadOptions(), f.number, f.file_size);
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    EXPECT_EQ(ExtractUserKey(it->key()), Key(n));
    ++n;
  }
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(n, 1000);
}

TEST_F(TableCacheTest, KeepsFewTablesOpenAndCountsTheirFilters) {
  constexpr int kTables = 40;
  std::vector<FileMetaData> files;
  for (int t = 0; t < kTables; ++t) {
    files.push_back(MakeTable(10 + t, t * 100, 100));
  }

  // Every table is opened; the cache keeps only a bounded number.
  constexpr int kMaxOpen = 16;
  auto small = NewCache(kMaxOpen);
  std::string value;
  for (int round = 0; round < 3; ++round) {
    for (int t = 0; t < kTables; ++t) {
      ASSERT_TRUE(
          Get(small.get(), files[t], Key(t * 100 + 5), &value, nullptr));
      EXPECT_EQ(value, "value-" + Key(t * 100 + 5));
      EXPECT_LE(small->NumOpenTables(), static_cast<size_t>(kMaxOpen));
    }
  }
  EXPECT_GT(small->NumOpenTables(), 0u);
  size_t open_filters = 0;
  size_t open = 0;
  for (const FileMetaData& f : files) {
    const size_t bytes = small->FilterMemoryUsageOf(f.number).total;
    open_filters += bytes;
    if (bytes > 0) ++open;
  }
  EXPECT_EQ(open, small->NumOpenTables());
  EXPECT_EQ(small->FilterMemoryUsage(), open_filters);
  EXPECT_GT(small->IndexMemoryUsage(), 0u);

  // With room for all, the filter memory is the sum over all tables, and
  // the same as the tables themselves report.
  auto big = NewCache(1000);
  size_t expected = 0;
  for (const FileMetaData& f : files) {
    auto ref = big->FindTable(f.number, f.file_size);
    ASSERT_TRUE(ref.ok()) << ref.status();
    EXPECT_GT(ref->table().FilterMemoryUsage(), 0u);
    expected += ref->table().FilterMemoryUsage();
  }
  EXPECT_EQ(big->NumOpenTables(), static_cast<size_t>(kTables));
  EXPECT_EQ(big->FilterMemoryUsage(), expected);

  // Evicting closes tables and gives their memory back.
  for (const FileMetaData& f : files) big->Evict(f.number);
  EXPECT_EQ(big->NumOpenTables(), 0u);
  EXPECT_EQ(big->FilterMemoryUsage(), 0u);
  EXPECT_EQ(big->IndexMemoryUsage(), 0u);
}

// Last-level tables leave places among the pinned tables for the tables
// above them, even when they are read first; a table that has to be opened
// is counted as a table load.
TEST_F(TableCacheTest, LastLevelTablesLeavePinsForUpperTables) {
  // Created first: destroyed after the files, whose pins hold its handles.
  auto cache = NewCache(4);
  std::vector<FileMetaData> last(6);
  for (int t = 0; t < 6; ++t) last[t] = MakeTable(10 + t, t * 100, 100);
  std::vector<FileMetaData> upper(2);
  for (int t = 0; t < 2; ++t) upper[t] = MakeTable(20 + t, t * 300, 10);

  ReadStats stats;
  const TableCache::PinHint last_hint{/*last_level=*/true,
                                      /*upper_level_tables=*/2};
  for (const FileMetaData& f : last) {
    TableCache::TableRef ref;
    ASSERT_TRUE(cache->GetTable(f, &ref, last_hint, &stats).ok());
  }
  int pinned_last = 0;
  for (const FileMetaData& f : last) pinned_last += f.pin.table() != nullptr;
  EXPECT_EQ(pinned_last, 2);  // 4 places, 2 kept for the upper tables
  EXPECT_EQ(stats.table_loads, 6u);

  for (const FileMetaData& f : upper) {
    TableCache::TableRef ref;
    ASSERT_TRUE(cache->GetTable(f, &ref, {}, &stats).ok());
    EXPECT_NE(f.pin.table(), nullptr);
    EXPECT_FALSE(ref.valid());  // served from the pin, not a cache reference
  }
  EXPECT_EQ(stats.table_loads, 8u);

  // Pinned tables are never loaded again.
  for (int round = 0; round < 3; ++round) {
    for (const FileMetaData& f : upper) {
      TableCache::TableRef ref;
      ASSERT_TRUE(cache->GetTable(f, &ref, {}, &stats).ok());
    }
  }
  EXPECT_EQ(stats.table_loads, 8u);
}

// SetFilterUnits without an epoch only loads. FilterResidency loads after
// its drops, and between its choice and the load the table may have been
// evicted and opened again by a read with more units than the choice gave
// it; dropping those with nowhere to retire them crashed a soak.
TEST_F(TableCacheTest, SetFilterUnitsWithoutAnEpochOnlyLoads) {
  options_.filter_memory_limit = 1 << 20;  // tables written in filter units
  const FileMetaData f = MakeTable(5, 0, 4000);
  auto cache = NewCache(100);
  std::string value;
  ASSERT_TRUE(Get(cache.get(), f, Key(7), &value, nullptr));
  TableCache::TableRef ref = cache->LookupOpenTable(f.number);
  ASSERT_TRUE(ref.valid());
  const ModularBloomReader* filter = ref.table().modular_filter();
  ASSERT_NE(filter, nullptr);
  const uint32_t units = filter->num_units();
  ASSERT_GE(units, 2u);
  ASSERT_EQ(filter->resident_units(), units);  // no choice yet: all
  const size_t all = cache->FilterMemoryUsage();

  ASSERT_TRUE(cache->SetFilterUnits(f.number, 1, nullptr, nullptr).ok());
  EXPECT_EQ(filter->resident_units(), units);
  EXPECT_EQ(cache->FilterMemoryUsage(), all);

  RetiredMemory retired;
  ASSERT_TRUE(cache->SetFilterUnits(f.number, 1, &retired, nullptr).ok());
  EXPECT_EQ(filter->resident_units(), 1u);
  EXPECT_LT(cache->FilterMemoryUsage(), all);

  ReadStats stats;
  ASSERT_TRUE(cache->SetFilterUnits(f.number, units, nullptr, &stats).ok());
  EXPECT_EQ(filter->resident_units(), units);
  EXPECT_EQ(stats.filter_unit_loads, units - 1);
  EXPECT_EQ(cache->FilterMemoryUsage(), all);
  ASSERT_TRUE(Get(cache.get(), f, Key(3999), &value, nullptr));
}

TEST_F(TableCacheTest, NoFilterNoFilterMemory) {
  options_.filter_bits_per_key = 0;
  const FileMetaData f = MakeTable(4, 0, 500);
  auto cache = NewCache(10);
  std::string value;
  ASSERT_TRUE(Get(cache.get(), f, Key(7), &value, nullptr));
  EXPECT_EQ(cache->NumOpenTables(), 1u);
  EXPECT_EQ(cache->FilterMemoryUsage(), 0u);
  EXPECT_GT(cache->IndexMemoryUsage(), 0u);
}

TEST_F(TableCacheTest, IteratorKeepsEvictedTableOpen) {
  const FileMetaData f = MakeTable(5, 0, 300);
  auto cache = NewCache(10);
  std::unique_ptr<Iterator> it =
      cache->NewIterator(ReadOptions(), f.number, f.file_size);
  cache->Evict(f.number);
  EXPECT_EQ(cache->NumOpenTables(), 1u);  // closed when the iterator ends
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, 300);
  it.reset();
  EXPECT_EQ(cache->NumOpenTables(), 0u);
  EXPECT_EQ(cache->FilterMemoryUsage(), 0u);
}

// An iterator over a FileMetaData reads a table pinned in it without the
// cache, and pins the table itself when given a hint, as point reads do; a
// pinned table stays open after its cache entry is evicted.
TEST_F(TableCacheTest, IteratorsReadAndMakePins) {
  auto cache = NewCache(4);  // created first: outlives the file's pin
  const FileMetaData f = MakeTable(5, 0, 300);
  auto count = [&](const TableCache::PinHint* hint) {
    std::unique_ptr<Iterator> it =
        cache->NewIterator(ReadOptions(), f, nullptr, hint);
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    EXPECT_TRUE(it->status().ok()) << it->status();
    return n;
  };
  EXPECT_EQ(count(nullptr), 300);
  EXPECT_EQ(f.pin.table(), nullptr);  // no hint: found in the cache only
  const TableCache::PinHint hint;
  EXPECT_EQ(count(&hint), 300);
  ASSERT_NE(f.pin.table(), nullptr);
  cache->Evict(f.number);
  EXPECT_EQ(cache->NumOpenTables(), 1u);  // held by the pin
  EXPECT_EQ(count(nullptr), 300);
  std::string value;
  ASSERT_TRUE(Get(cache.get(), f, Key(299), &value, nullptr));
  EXPECT_EQ(value, "value-" + Key(299));
}

TEST_F(TableCacheTest, FailedOpenIsReportedAndNotCached) {
  const FileMetaData f = MakeTable(6, 0, 300);
  auto cache = NewCache(10);

  // Missing file.
  auto missing = cache->FindTable(99, 1000);
  EXPECT_FALSE(missing.ok());
  std::unique_ptr<Iterator> it = cache->NewIterator(ReadOptions(), 99, 1000);
  EXPECT_FALSE(it->Valid());
  EXPECT_FALSE(it->status().ok());

  // Damaged file: garbage of the same size.
  const std::string fname = TableFileName(dbname_, f.number);
  std::string good;
  {
    auto file = env_->NewSequentialFile(fname);
    ASSERT_TRUE(file.ok());
    std::string buf(f.file_size, '\0');
    std::string_view read;
    ASSERT_TRUE((*file)->Read(buf.size(), &read, buf.data()).ok());
    good = std::string(read);
  }
  auto write = [&](const std::string& contents) {
    auto file = env_->NewWritableFile(fname);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(contents).ok());
    ASSERT_TRUE((*file)->Close().ok());
  };
  write(std::string(good.size(), 'x'));
  const LookupKey lkey(Key(1), kMaxSequenceNumber);
  absl::Status s = cache->Get(
      ReadOptions(), f.number, f.file_size, lkey.internal_key(),
      [](std::string_view, std::string_view) { return true; }, nullptr);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_EQ(cache->NumOpenTables(), 0u);

  // Repaired: the next lookup opens it afresh.
  write(good);
  std::string value;
  EXPECT_TRUE(Get(cache.get(), f, Key(1), &value, nullptr));
  EXPECT_EQ(value, "value-" + Key(1));
}

}  // namespace
}  // namespace sift
