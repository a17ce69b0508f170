// Readahead for table iterators over files read with system calls: when it
// starts, how its windows grow, that it serves the file's exact bytes, and
// that a long scan of a table makes few file reads while short scans and
// seeks read no more than before.

#include "table/readahead.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "table/table.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/cache.h"
#include "util/counting_env.h"

namespace sift {
namespace {

// A file over a string that records each read.
class RecordingFile final : public RandomAccessFile {
 public:
  explicit RecordingFile(std::string contents)
      : contents_(std::move(contents)) {}

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    reads.push_back({offset, n});
    if (fail) return absl::UnavailableError("injected read error");
    const size_t start = std::min<size_t>(offset, contents_.size());
    const size_t got = std::min(n, contents_.size() - start);
    std::memcpy(scratch, contents_.data() + start, got);
    *result = std::string_view(scratch, got);
    return absl::OkStatus();
  }

  struct ReadCall {
    uint64_t offset;
    size_t n;
  };
  mutable std::vector<ReadCall> reads;
  bool fail = false;

 private:
  std::string contents_;
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + 7) % 251);
  return s;
}

constexpr size_t kBlock = 4096;

TEST(ReadaheadTest, StartsAfterARunAndDoublesUpToTheMaximum) {
  const size_t file_size = 4 << 20;
  const std::string contents = Pattern(file_size);
  RecordingFile file(contents);
  Readahead ra;
  std::vector<size_t> window_sizes;
  for (uint64_t off = 0; off + kBlock <= file_size; off += kBlock) {
    const size_t before = file.reads.size();
    auto got = ra.Read(file, off, kBlock, file_size);
    ASSERT_TRUE(got.ok()) << got.status();
    if (off < Readahead::kSequentialToStart * kBlock) {
      // The first blocks of a run are left to the caller.
      EXPECT_FALSE(got->has_value()) << off;
      continue;
    }
    ASSERT_TRUE(got->has_value()) << off;
    EXPECT_EQ(**got, std::string_view(contents).substr(off, kBlock)) << off;
    if (file.reads.size() != before) {
      EXPECT_EQ(file.reads.back().offset, off);
      window_sizes.push_back(file.reads.back().n);
    }
  }
  ASSERT_GE(window_sizes.size(), 6u);
  EXPECT_EQ(window_sizes[0], Readahead::kInitialWindow);
  for (size_t i = 1; i < window_sizes.size(); ++i) {
    EXPECT_EQ(window_sizes[i],
              std::min(window_sizes[i - 1] * 2, Readahead::kMaxWindow))
        << i;
  }
  EXPECT_EQ(window_sizes.back(), Readahead::kMaxWindow);
  EXPECT_EQ(ra.window_reads(), window_sizes.size());
  // 1024 blocks cost the two unread-ahead blocks plus the windows.
  EXPECT_LT(window_sizes.size(), 30u);
}

TEST(ReadaheadTest, AJumpStartsOverAndWindowsStopAtTheLimit) {
  const size_t file_size = 1 << 20;
  const std::string contents = Pattern(file_size);
  RecordingFile file(contents);
  Readahead ra;
  for (uint64_t off = 0; off < 5 * kBlock; off += kBlock) {
    ASSERT_TRUE(ra.Read(file, off, kBlock, file_size).ok());
  }
  // A block elsewhere: a new run, read by the caller.
  auto far = ra.Read(file, 100 * kBlock, kBlock, file_size);
  ASSERT_TRUE(far.ok());
  EXPECT_FALSE(far->has_value());
  auto next = ra.Read(file, 101 * kBlock, kBlock, file_size);
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
  // The third of the new run reads a window of the initial size again, cut
  // at the limit (rounded up to the alignment).
  const uint64_t limit = 102 * kBlock + 5000;
  auto third = ra.Read(file, 102 * kBlock, kBlock, limit);
  ASSERT_TRUE(third.ok());
  ASSERT_TRUE(third->has_value());
  EXPECT_EQ(file.reads.back().offset, 102 * kBlock);
  EXPECT_EQ(file.reads.back().n, 2 * Readahead::kAlignment);
  // With a limit further on, the window is the initial size (not doubled:
  // the run is new).
  Readahead ra3;
  for (uint64_t off = 10 * kBlock; off < 13 * kBlock; off += kBlock) {
    ASSERT_TRUE(ra3.Read(file, off, kBlock, file_size).ok());
  }
  EXPECT_EQ(file.reads.back().n, Readahead::kInitialWindow);
  EXPECT_EQ(**third, std::string_view(contents).substr(102 * kBlock, kBlock));
}

TEST(ReadaheadTest, NotedBlocksContinueTheRunAndBlocksOfOtherSizesFit) {
  const size_t file_size = 1 << 20;
  const std::string contents = Pattern(file_size);
  RecordingFile file(contents);
  Readahead ra;
  // Two blocks found in a cache, then a read: the run is three long.
  ra.Note(0, 3000);
  ra.Note(3000, 5000);
  auto got = ra.Read(file, 8000, 20000, file_size);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  // A block larger than the window is read whole, in a window from the
  // aligned offset before it to the aligned offset after it.
  EXPECT_EQ(file.reads.back().offset, Readahead::kAlignment);
  EXPECT_EQ(file.reads.back().n, 6 * Readahead::kAlignment);
  EXPECT_EQ(**got, std::string_view(contents).substr(8000, 20000));
}

TEST(ReadaheadTest, ShortReadsAndErrorsReachTheCaller) {
  const std::string contents = Pattern(10000);
  RecordingFile file(contents);
  Readahead ra;
  ASSERT_TRUE(ra.Read(file, 0, 1000, 20000).ok());
  ASSERT_TRUE(ra.Read(file, 1000, 1000, 20000).ok());
  // The file ends at 10000 although the caller believed 20000.
  auto got = ra.Read(file, 2000, 9000, 20000);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->size(), 8000u);

  RecordingFile failing(contents);
  Readahead ra2;
  ASSERT_TRUE(ra2.Read(failing, 0, 1000, 10000).ok());
  ASSERT_TRUE(ra2.Read(failing, 1000, 1000, 10000).ok());
  failing.fail = true;
  auto err = ra2.Read(failing, 2000, 1000, 10000);
  EXPECT_TRUE(absl::IsUnavailable(err.status())) << err.status();
}

// Tables read through a counting Env whose files are read with system calls
// (the in-memory Env; under the direct-reads test run, O_DIRECT files).
class TableReadaheadTest : public testing::Test {
 protected:
  TableReadaheadTest()
      : base_(test::NewTestEnv()),
        env_(std::make_unique<CountingEnv>(base_.get())) {}

  std::unique_ptr<Table> Build(const TableOptions& o, int n) {
    test::KVVector kvs;
    for (int i = 0; i < n; ++i) {
      kvs.emplace_back(test::NumberKey(i), std::string(100, 'a' + i % 26));
    }
    auto size = test::WriteTable(env_.get(), "/ra.sst", o, kvs);
    EXPECT_TRUE(size.ok()) << size.status();
    auto table = test::OpenTable(env_.get(), "/ra.sst", o);
    EXPECT_TRUE(table.ok()) << table.status();
    env_->Reset();
    return table.ok() ? *std::move(table) : nullptr;
  }

  std::unique_ptr<Env> base_;
  std::unique_ptr<CountingEnv> env_;
};

TEST_F(TableReadaheadTest, AFullScanMakesFewFileReads) {
  for (const bool fill_cache : {true, false}) {
    SCOPED_TRACE(fill_cache);
    std::unique_ptr<Cache> cache = NewLRUCache(64 << 20);
    TableOptions o;
    o.block_cache = cache.get();
    const int n = 40000;  // about 1,100 blocks of 4 KiB
    auto table = Build(o, n);
    ASSERT_NE(table, nullptr);
    ReadOptions ro;
    ro.fill_cache = fill_cache;
    ReadStats stats;
    auto it = table->NewIterator(ro, &stats);
    int i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      ASSERT_EQ(it->key(), test::NumberKey(i));
      ASSERT_EQ(it->value(), std::string(100, 'a' + i % 26));
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    EXPECT_EQ(i, n);
    // Every data block is still counted as a block read...
    EXPECT_GT(stats.iterator_block_reads, 1000u);
    // ...but the file was read in windows of up to 256 KiB: about 5 MB in
    // some 30 reads, against one read per block without readahead.
    EXPECT_LT(env_->random_reads(), stats.iterator_block_reads / 20);
    // A second scan finds the blocks in the cache when it was filled.
    env_->Reset();
    ReadStats again;
    auto it2 = table->NewIterator(ro, &again);
    for (it2->SeekToFirst(); it2->Valid(); it2->Next()) {
    }
    ASSERT_TRUE(it2->status().ok());
    if (fill_cache) {
      EXPECT_EQ(env_->random_reads(), 0u);
    } else {
      EXPECT_LT(env_->random_reads(), stats.iterator_block_reads / 20);
    }
  }
}

TEST_F(TableReadaheadTest, ShortScansAtRandomReadOnlyWhatTheyUse) {
  TableOptions o;  // no block cache: every block is read from the file
  const int n = 40000;
  auto table = Build(o, n);
  ASSERT_NE(table, nullptr);
  ReadStats stats;
  auto it = table->NewIterator(ReadOptions(), &stats);
  for (int s = 0; s < 500; ++s) {
    const int start = (s * 7919) % (n - 100);
    it->Seek(test::NumberKey(start));
    // A scan of 20 entries: one or two blocks.
    for (int k = 0; k < 20 && it->Valid(); ++k) it->Next();
    ASSERT_TRUE(it->status().ok()) << it->status();
  }
  // One file read per block read: no window was read ahead.
  EXPECT_GT(stats.iterator_block_reads, 500u);
  EXPECT_EQ(env_->random_reads(), stats.iterator_block_reads);
}

}  // namespace
}  // namespace sift
