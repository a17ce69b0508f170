// DB::GetApproximateSizes: sizes follow the bytes written to tables (whole
// database, halves, slices of one table), the memtable is not counted, empty
// and out-of-range ranges get 0, results keep the input order, ingested
// tables count, and sizes taken while writes and compactions run stay within
// what was written.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/table_file_writer.h"
#include "tests/testutil/testutil.h"

namespace sift {
namespace {

constexpr int kValueSize = 1000;

class ApproximateSizesTest : public testing::Test {
 protected:
  ApproximateSizesTest() : env_(NewMemEnv(Env::Default())) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    // Uncompressed: the bytes in tables follow the bytes written.
    options_.compression = Compression::kNone;
    options_.write_buffer_size = 64 << 10;
    options_.max_file_size = 64 << 10;
    options_.block_size = 1024;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/db");
    EXPECT_TRUE(db.ok()) << db.status();
    if (db.ok()) db_ = *std::move(db);
  }

  static std::string Key(int i) { return test::NumberKey(i, 8); }

  // Keys [0, n) with values of kValueSize bytes.
  void Fill(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i),
                           std::string(kValueSize, 'a' + i % 26))
                      .ok());
    }
  }

  uint64_t Size(std::string_view start, std::string_view limit) {
    const KeyRange range{start, limit};
    std::vector<uint64_t> sizes = db_->GetApproximateSizes({&range, 1});
    EXPECT_EQ(sizes.size(), 1u);
    return sizes.empty() ? 0 : sizes[0];
  }

  std::unique_ptr<Env> env_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(ApproximateSizesTest, EmptyDatabaseAndNoRanges) {
  ASSERT_NE(db_, nullptr);
  EXPECT_TRUE(db_->GetApproximateSizes({}).empty());
  EXPECT_EQ(Size("", "\xff"), 0u);
}

TEST_F(ApproximateSizesTest, MemtableIsNotCountedUntilFlushed) {
  ASSERT_NE(db_, nullptr);
  Fill(20);  // 20 KB: stays in the 64 KiB memtable
  EXPECT_EQ(Size("", "\xff"), 0u);
  ASSERT_TRUE(db_->Flush().ok());
  const uint64_t size = Size("", "\xff");
  EXPECT_GE(size, 20u * kValueSize);
  EXPECT_LE(size, 20u * kValueSize * 12 / 10);
}

TEST_F(ApproximateSizesTest, FollowsTheBytesWritten) {
  ASSERT_NE(db_, nullptr);
  constexpr int kKeys = 2000;
  Fill(kKeys);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  constexpr uint64_t kBytes = uint64_t{kKeys} * kValueSize;

  const uint64_t all = Size("", "\xff");
  EXPECT_GE(all, kBytes);
  EXPECT_LE(all, kBytes * 11 / 10);

  // Halves and quarters: within a block and a table's overheads of the
  // bytes their keys hold.
  const std::string mid = Key(kKeys / 2);
  const uint64_t low = Size("", mid);
  const uint64_t high = Size(mid, "\xff");
  EXPECT_GE(low, kBytes / 2 * 9 / 10);
  EXPECT_LE(low, kBytes / 2 * 11 / 10);
  EXPECT_GE(high, kBytes / 2 * 9 / 10);
  EXPECT_LE(high, kBytes / 2 * 11 / 10);
  EXPECT_LE(low + high, all + 2 * (64 << 10));

  // Many ranges at once, answered in input order.
  const std::string q1 = Key(kKeys / 4);
  const std::string q3 = Key(3 * kKeys / 4);
  const std::vector<KeyRange> ranges = {{q3, "\xff"},    {"", q1}, {q1, q3},
                                        {"zzz", "zzzz"}, {q3, q1}, {mid, mid}};
  const std::vector<uint64_t> sizes = db_->GetApproximateSizes(ranges);
  ASSERT_EQ(sizes.size(), ranges.size());
  EXPECT_NEAR(static_cast<double>(sizes[0]), kBytes / 4.0, kBytes / 20.0);
  EXPECT_NEAR(static_cast<double>(sizes[1]), kBytes / 4.0, kBytes / 20.0);
  EXPECT_NEAR(static_cast<double>(sizes[2]), kBytes / 2.0, kBytes / 20.0);
  EXPECT_EQ(sizes[3], 0u);  // past every key
  EXPECT_EQ(sizes[4], 0u);  // start after limit
  EXPECT_EQ(sizes[5], 0u);  // start == limit
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(sizes[i], Size(ranges[i].start, ranges[i].limit)) << i;
  }
}

TEST_F(ApproximateSizesTest, SlicesOfOneTableGrowWithTheSlice) {
  ASSERT_NE(db_, nullptr);
  Fill(40);  // one table of 40 blocks or so
  ASSERT_TRUE(db_->Flush().ok());
  uint64_t previous = 0;
  for (int end = 5; end <= 40; end += 5) {
    const uint64_t size = Size(Key(0) + "x", Key(end));
    EXPECT_GE(size, previous) << end;
    // Keys 1..end-1 in whole blocks, give or take the blocks at the ends.
    EXPECT_GE(size, uint64_t(end - 3) * kValueSize) << end;
    EXPECT_LE(size, uint64_t(end + 2) * kValueSize) << end;
    previous = size;
  }
  // A slice inside one value's block: less than two blocks.
  EXPECT_LE(Size(Key(10), Key(10) + "x"), 2u * (kValueSize + 64));
}

TEST_F(ApproximateSizesTest, IngestedTablesCount) {
  ASSERT_NE(db_, nullptr);
  Options writer_options = options_;
  absl::StatusOr<std::unique_ptr<TableFileWriter>> writer =
      TableFileWriter::Open(writer_options, "/ext.sst");
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(
        (*writer)->Put(Key(1000 + i), std::string(kValueSize, 'x')).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  ASSERT_TRUE(db_->IngestExternalFiles({"/ext.sst"}, IngestOptions()).ok());
  EXPECT_EQ(Size("", Key(1000)), 0u);
  const uint64_t half = Size(Key(1000), Key(1050));
  EXPECT_GE(half, 45u * kValueSize);
  EXPECT_LE(half, 55u * kValueSize);
  EXPECT_GE(Size("", "\xff"), 100u * kValueSize);
}

TEST_F(ApproximateSizesTest, StaysWithinTheDataWhileWritesAndCompactionsRun) {
  ASSERT_NE(db_, nullptr);
  constexpr int kKeys = 1500;
  std::atomic<bool> done{false};
  std::thread sizer([&] {
    while (!done.load()) {
      const uint64_t size = Size("", "\xff");
      // Each key written at most twice (below); tables of old and new
      // versions never both count.
      EXPECT_LE(size, uint64_t{2} * kKeys * kValueSize * 12 / 10);
    }
  });
  Fill(kKeys);
  Fill(kKeys);  // overwrites: compactions drop the older values
  done.store(true);
  sizer.join();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  const uint64_t size = Size("", "\xff");
  EXPECT_GE(size, uint64_t{kKeys} * kValueSize);
  EXPECT_LE(size, uint64_t{kKeys} * kValueSize * 11 / 10);
}

}  // namespace
}  // namespace sift
