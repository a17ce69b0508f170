// The level iterator (db/level_iterator.h): positions at a table's first key
// are deferred without reading a block, opened when used, and checked
// against the MANIFEST's smallest key; everything else walks as a plain
// concatenation of the level's tables.

#include "db/level_iterator.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "db/builder.h"
#include "db/dbformat.h"
#include "db/filename.h"
#include "db/level_bounds.h"
#include "db/memtable.h"
#include "db/version.h"
#include "gtest/gtest.h"
#include "tests/testutil/test_env.h"

namespace sift {
namespace {

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%07d", i);
  return buf;
}

std::string Value(int i) { return "value-" + Key(i); }

class LevelIteratorTest : public testing::Test {
 protected:
  LevelIteratorTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.block_size = 256;
    EXPECT_TRUE(env_->CreateDir(dbname_).ok());
    cache_ =
        std::make_unique<TableCache>(dbname_, options_, &icmp_, nullptr, 100);
  }

  // A level of tables, table t holding keys [1000 t, 1000 t + 500): gaps
  // between the tables, so a key can fall before a table's first one.
  void MakeLevel(int tables) {
    for (int t = 0; t < tables; ++t) {
      MemTable mem(icmp_);
      for (int i = 1000 * t; i < 1000 * t + 500; ++i) {
        mem.Add(10, kTypeValue, Key(i), Value(i));
      }
      auto meta = std::make_shared<FileMetaData>();
      meta->number = static_cast<uint64_t>(t + 1);
      std::unique_ptr<Iterator> it = mem.NewIterator();
      ASSERT_TRUE(BuildTable(dbname_, env_.get(), options_, cache_.get(),
                             it.get(), meta.get())
                      .ok());
      files_.push_back(std::move(meta));
    }
  }

  std::unique_ptr<Iterator> NewIter(const ReadOptions& ro, bool defer) {
    return NewFileListIterator(cache_.get(), &icmp_, ro, files_, &stats_,
                               defer ? &deferred_ : nullptr);
  }

  static std::string Seek(int i) {
    return std::string(
        InternalKey(Key(i), kMaxSequenceNumber, kValueTypeForSeek).Encode());
  }

  const std::string dbname_ = "/level";
  std::unique_ptr<Env> env_;
  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
  std::unique_ptr<TableCache> cache_;
  FileList files_;
  ReadStats stats_;
  DeferredPositions deferred_;
};

TEST_F(LevelIteratorTest, SeekBeforeATableReadsNoBlockUntilUsed) {
  MakeLevel(3);
  std::unique_ptr<Iterator> it = NewIter(ReadOptions(), /*defer=*/true);
  it->Seek(Seek(700));  // in the gap before table 2
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractUserKey(it->key()), Key(1000));
  EXPECT_EQ(stats_.iterator_block_reads, 0u);
  EXPECT_EQ(deferred_.count, 1);
  EXPECT_EQ(it->value(), Value(1000));
  EXPECT_EQ(stats_.iterator_block_reads, 1u);
  EXPECT_EQ(deferred_.count, 0);
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractUserKey(it->key()), Key(1001));

  // Next from a deferred position opens the table first.
  it->Seek(Seek(1499));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(deferred_.count, 0);
  it->Next();  // into table 3: deferred again
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractUserKey(it->key()), Key(2000));
  EXPECT_EQ(deferred_.count, 1);
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractUserKey(it->key()), Key(2001));
  EXPECT_EQ(it->value(), Value(2001));

  // Prev from a deferred position steps into the table before.
  it->Seek(Seek(1999));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(deferred_.count, 1);
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractUserKey(it->key()), Key(1499));
  EXPECT_EQ(deferred_.count, 0);
  EXPECT_TRUE(it->status().ok());

  it->Seek(Seek(2500));  // past the last table
  EXPECT_FALSE(it->Valid());
  it.reset();
  EXPECT_EQ(deferred_.count, 0);
}

TEST_F(LevelIteratorTest, WalksEveryEntryBothWaysWithAndWithoutDeferring) {
  MakeLevel(4);
  for (const bool defer : {false, true}) {
    std::unique_ptr<Iterator> it = NewIter(ReadOptions(), defer);
    std::vector<std::string> forward, backward;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      forward.emplace_back(ExtractUserKey(it->key()));
      ASSERT_EQ(it->value(), "value-" + forward.back());
    }
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      backward.emplace_back(ExtractUserKey(it->key()));
    }
    ASSERT_EQ(forward.size(), 2000u);
    EXPECT_EQ(forward.front(), Key(0));
    EXPECT_EQ(forward.back(), Key(3499));
    std::reverse(backward.begin(), backward.end());
    EXPECT_EQ(forward, backward);
    EXPECT_TRUE(it->status().ok());
  }
}

// A level iterator given the level's windows (LevelBounds) finds each
// Seek's table by them: the same positions as the key search, also when
// iteration bounds leave only some of the tables in range (the windows span
// the whole level) and for targets outside the level's common prefix.
TEST_F(LevelIteratorTest, SeeksByTheLevelsWindowsLandAsKeySearchesDo) {
  MakeLevel(6);
  LevelBounds bounds;
  bounds.Build(icmp_, files_);
  ASSERT_TRUE(bounds.usable());
  const std::string lower = Key(1250);
  const std::string upper = Key(4100);
  std::vector<ReadOptions> reads(3);
  reads[1].iterate_lower_bound = lower;
  reads[2].iterate_lower_bound = lower;
  reads[2].iterate_upper_bound = upper;
  std::vector<std::string> targets = {
      std::string(InternalKey("a", kMaxSequenceNumber, kValueTypeForSeek)
                      .Encode()),  // before the common prefix "k00"
      std::string(InternalKey("z", kMaxSequenceNumber, kValueTypeForSeek)
                      .Encode()),  // after it
      std::string(InternalKey(Key(499), 10, kTypeValue).Encode()),
      std::string(InternalKey(Key(499), 9, kTypeValue).Encode()),
  };
  for (int i = 0; i < 6000; i += 37) targets.push_back(Seek(i));
  for (const ReadOptions& ro : reads) {
    std::unique_ptr<Iterator> by_keys =
        NewFileListIterator(cache_.get(), &icmp_, ro, files_, &stats_);
    std::unique_ptr<Iterator> by_windows =
        NewFileListIterator(cache_.get(), &icmp_, ro, files_, &stats_, nullptr,
                            std::nullopt, &bounds);
    for (const std::string& target : targets) {
      by_keys->Seek(target);
      by_windows->Seek(target);
      ASSERT_EQ(by_keys->Valid(), by_windows->Valid()) << target;
      if (by_keys->Valid()) {
        ASSERT_EQ(by_keys->key(), by_windows->key()) << target;
      }
    }
    EXPECT_TRUE(by_windows->status().ok());
  }
}

TEST_F(LevelIteratorTest, NoDeferringWithoutAReportOrBelowTheLowerBound) {
  MakeLevel(3);
  {
    std::unique_ptr<Iterator> it = NewIter(ReadOptions(), /*defer=*/false);
    it->Seek(Seek(700));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(stats_.iterator_block_reads, 1u);
  }
  // A lower bound past table 2's first key: that key is outside the
  // bounds, so the table is opened and sought (its filters may rule the
  // bounds out).
  const std::string lower = Key(1200);
  ReadOptions ro;
  ro.iterate_lower_bound = lower;
  std::unique_ptr<Iterator> it = NewIter(ro, /*defer=*/true);
  it->Seek(Seek(1200));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(deferred_.count, 0);
  EXPECT_EQ(ExtractUserKey(it->key()), Key(1200));
  it->SeekToFirst();  // table 2 (the first in bounds) is not deferred either
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(deferred_.count, 0);
}

TEST_F(LevelIteratorTest, SmallestKeyThatIsNotTheFirstIsDataLoss) {
  MakeLevel(2);
  // A MANIFEST whose smallest key for table 2 lies before its first key.
  auto wrong = std::make_shared<FileMetaData>();
  wrong->number = files_[1]->number;
  wrong->file_size = files_[1]->file_size;
  wrong->smallest = InternalKey(Key(900), 10, kTypeValue);
  wrong->largest = files_[1]->largest;
  files_[1] = wrong;
  std::unique_ptr<Iterator> it = NewIter(ReadOptions(), /*defer=*/true);
  it->Seek(Seek(800));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractUserKey(it->key()), Key(900));
  EXPECT_EQ(it->value(), "");
  EXPECT_TRUE(absl::IsDataLoss(deferred_.error)) << deferred_.error;
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsDataLoss(it->status()));
  it->Seek(Seek(0));  // sticky
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(deferred_.count, 0);
}

TEST_F(LevelIteratorTest, TableThatCannotBeOpenedStopsTheIteration) {
  MakeLevel(2);
  // A cold cache (building the tables left them open in cache_).
  cache_ =
      std::make_unique<TableCache>(dbname_, options_, &icmp_, nullptr, 100);
  ASSERT_TRUE(env_->RemoveFile(TableFileName(dbname_, 2)).ok());
  std::unique_ptr<Iterator> it = NewIter(ReadOptions(), /*defer=*/true);
  it->Seek(Seek(700));
  ASSERT_TRUE(it->Valid());  // deferred: nothing opened yet
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_FALSE(it->status().ok());
  EXPECT_EQ(deferred_.count, 0);
}

}  // namespace
}  // namespace sift
