// Options::filter_memory_limit: tables written in filter units, the open
// tables' resident units kept within the limit, units read back when a
// reopen gives them room, every answer right whatever is resident, and
// tables written with units read by a database without a limit.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/random.h"

namespace sift {
namespace {

constexpr int kKeys = 80000;

class DBFilterMemoryTest : public testing::Test {
 protected:
  DBFilterMemoryTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    options_.write_buffer_size = 256 << 10;
    options_.max_file_size = 256 << 10;
    options_.compression = Compression::kNone;
    options_.block_cache_capacity = 0;
  }

  static std::string Key(int n) { return "key" + test::NumberKey(n, 8); }

  void Open(uint64_t limit) {
    db_.reset();
    options_.filter_memory_limit = limit;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/unitsdb");
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  // Present keys are even numbers; with `limit` while writing.
  void Fill(uint64_t limit) {
    Open(limit);
    Random rnd(5);
    for (int n = 0; n < kKeys; n += 2) {
      ASSERT_TRUE(
          db_->Put(WriteOptions(), Key(n), test::RandomString(&rnd, 100)).ok());
    }
    ASSERT_TRUE(db_->Flush().ok());
  }

  uint64_t FilterMemory() {
    return std::stoull(*db_->GetProperty("sift.filter-memory-bytes"));
  }

  // Every present key is found; returns the stats of reading the odd
  // (absent) keys.
  ReadStats ReadAll() {
    std::string value;
    for (int n = 0; n < kKeys; n += 2) {
      EXPECT_TRUE(db_->Get(ReadOptions(), Key(n), &value).ok()) << n;
    }
    const ReadStats before = db_->GetReadStats();
    for (int n = 1; n < kKeys; n += 2) {
      EXPECT_TRUE(absl::IsNotFound(db_->Get(ReadOptions(), Key(n), &value)));
    }
    ReadStats absent = db_->GetReadStats();
    absent -= before;
    return absent;
  }

  std::unique_ptr<Env> env_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBFilterMemoryTest, ResidentUnitsStayWithinTheLimitAndAnswersStayRight) {
  Fill(uint64_t{1} << 40);  // a limit that never binds: units written
  Open(uint64_t{1} << 40);
  const uint64_t full = FilterMemory();
  const ReadStats all_units = ReadAll();
  ASSERT_GT(full, 0u);
  // Open opened the tables with no unit, then read every unit: all fitted.
  EXPECT_GT(db_->GetReadStats().filter_unit_loads, 0u);
  EXPECT_EQ(all_units.filter_negatives + all_units.filter_false_positives,
            all_units.tables_probed);

  Open(full / 2);
  EXPECT_LE(FilterMemory(), full / 2);
  EXPECT_GT(FilterMemory(), full / 4);
  // The tables opened at Open with no unit; the chosen ones were read.
  EXPECT_GT(db_->GetReadStats().filter_unit_loads, 0u);
  const ReadStats half = ReadAll();
  EXPECT_GT(half.filter_negatives, 0u);
  EXPECT_GE(half.block_reads, all_units.block_reads);
  // Half the memory costs some reads, far fewer than no filter (one block
  // per table probed).
  EXPECT_LT(half.block_reads, half.tables_probed / 4);

  // Nothing resident: no table rules a key out, and still no wrong answer.
  Open(1);
  EXPECT_LT(FilterMemory(), full / 4);  // the readers themselves
  const ReadStats none = ReadAll();
  EXPECT_EQ(none.filter_negatives, 0u);
  EXPECT_GT(none.block_reads, half.block_reads);

  // Without a limit the units are all read and answer as before.
  Open(0);
  const ReadStats unlimited = ReadAll();
  EXPECT_EQ(FilterMemory(), full);
  EXPECT_EQ(unlimited.filter_negatives, all_units.filter_negatives);
  EXPECT_EQ(unlimited.block_reads, all_units.block_reads);
}

TEST_F(DBFilterMemoryTest, CompactionsUnderALimitKeepTheAnswers) {
  Fill(60000);
  Random rnd(9);
  // Overwrite and delete some keys while the tree changes under the limit.
  for (int n = 0; n < kKeys; n += 6) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), Key(n)).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string value;
  for (int n = 0; n < kKeys; ++n) {
    const absl::Status s = db_->Get(ReadOptions(), Key(n), &value);
    if (n % 2 == 0 && n % 6 != 0) {
      EXPECT_TRUE(s.ok()) << n << " " << s;
    } else {
      EXPECT_TRUE(absl::IsNotFound(s)) << n << " " << s;
    }
  }
  Open(60000);
  EXPECT_LE(FilterMemory(), 60000u);
  for (int n = 0; n < kKeys; ++n) {
    const absl::Status s = db_->Get(ReadOptions(), Key(n), &value);
    EXPECT_EQ(s.ok(), n % 2 == 0 && n % 6 != 0) << n << " " << s;
  }
}

// Readers probe filters while flushes and compactions make the residency
// drop and load units of the tables they read: no present key is missed
// (under TSan: no race on the units or their memory).
TEST_F(DBFilterMemoryTest, ConcurrencyReadersRaceUnitDropsAndLoads) {
  Fill(60000);
  std::atomic<bool> done{false};
  std::atomic<int> missed{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::string value;
      int n = r * 2;
      while (!done.load(std::memory_order_acquire)) {
        if (!db_->Get(ReadOptions(), Key(n), &value).ok()) ++missed;
        n = (n + 2 * 7919) % kKeys;  // even keys only, never overwritten
      }
    });
  }
  Random rnd(11);
  // Odd keys, written and deleted: each flush and compaction changes the
  // tree, and the units follow it.
  for (int round = 0; round < 6; ++round) {
    for (int n = 1; n < kKeys / 2; n += 2) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(n + round * 2 % 4),
                           test::RandomString(&rnd, 100))
                      .ok());
    }
    ASSERT_TRUE(db_->Flush().ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(missed.load(), 0);
  EXPECT_GT(db_->GetReadStats().filter_unit_loads, 0u);
}

}  // namespace
}  // namespace sift
