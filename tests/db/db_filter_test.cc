// Filters at work: on a database of many tables over several levels, point
// reads of absent keys cost almost no block reads with filters and at least
// one per Get without, as counted by GetReadStats() and by the Env.

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/testutil.h"
#include "util/counting_env.h"
#include "util/random.h"

namespace sift {
namespace {

struct FilterConfig {
  const char* name;
  double bits_per_key;
  FilterKind kind;
};

class DBFilterTest : public testing::TestWithParam<FilterConfig> {
 protected:
  DBFilterTest()
      : mem_env_(NewMemEnv(Env::Default())),
        env_(std::make_unique<CountingEnv>(mem_env_.get())) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    options_.write_buffer_size = 64 << 10;
    options_.max_file_size = 64 << 10;
    options_.compression = Compression::kNone;
    // Every data block a Get needs comes from the file: what is measured is
    // the filters' effect, not the cache's.
    options_.block_cache_capacity = 0;
    options_.filter_bits_per_key = GetParam().bits_per_key;
    options_.filter_kind = GetParam().kind;
  }

  static std::string Key(int n, char tag) {
    return "key" + test::NumberKey(n, 8) + tag;
  }

  int FilesAtLevel(int level) {
    return std::stoi(
        *db_->GetProperty("sift.num-files-at-level" + std::to_string(level)));
  }

  // Builds a database with tables on levels 0, 1 and 2:
  //   level 2: keys of every even number, written in order, so each flushed
  //            memtable overlaps nothing and is placed at level 2;
  //   level 1: 'b' keys over the first half, in order: each flush overlaps a
  //            little of level 2 only, so it lands at level 1;
  //   level 0: a few 'c' flushes of narrow ranges that overlap level 1.
  void Build() {
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/filterdb");
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    Random rnd(17);
    const WriteOptions wo;
    for (int n = 0; n < kKeys; n += 2) {
      ASSERT_TRUE(
          db_->Put(wo, Key(n, 'a'), test::RandomString(&rnd, 100)).ok());
    }
    ASSERT_TRUE(db_->Flush().ok());
    for (int n = 0; n < kKeys / 2; n += 8) {
      ASSERT_TRUE(
          db_->Put(wo, Key(n, 'b'), test::RandomString(&rnd, 100)).ok());
    }
    ASSERT_TRUE(db_->Flush().ok());
    for (int table = 0; table < 3; ++table) {
      const int start = 1000 + table * 8000;
      for (int n = start; n < start + 1200; n += 4) {
        ASSERT_TRUE(
            db_->Put(wo, Key(n, 'c'), test::RandomString(&rnd, 100)).ok());
      }
      ASSERT_TRUE(db_->Flush().ok());
    }
  }

  static constexpr int kKeys = 60000;
  std::unique_ptr<Env> mem_env_;
  std::unique_ptr<CountingEnv> env_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_P(DBFilterTest, AbsentKeysCostFewBlockReads) {
  ASSERT_NO_FATAL_FAILURE(Build());
  int tables = 0, levels = 0;
  for (int level = 0; level < 7; ++level) {
    tables += FilesAtLevel(level);
    if (FilesAtLevel(level) > 0) ++levels;
  }
  ASSERT_GE(tables, 20) << *db_->GetProperty("sift.sstables");
  ASSERT_GE(levels, 3) << *db_->GetProperty("sift.sstables");
  ASSERT_GT(FilesAtLevel(0), 0);

  // Open every table (footer, index and filter reads) before measuring.
  std::string value;
  for (int n = 0; n < kKeys; n += 50) {
    absl::Status s = db_->Get(ReadOptions(), Key(n, 'z'), &value);
    ASSERT_TRUE(absl::IsNotFound(s)) << s;
  }

  // Absent keys (odd numbers) inside the tables' key ranges.
  constexpr int kGets = 10000;
  Random rnd(4711);
  const ReadStats before = db_->GetReadStats();
  env_->Reset();
  for (int i = 0; i < kGets; ++i) {
    const int n = 2 * static_cast<int>(rnd.Uniform(kKeys / 2)) + 1;
    absl::Status s = db_->Get(ReadOptions(), Key(n, 'a'), &value);
    ASSERT_TRUE(absl::IsNotFound(s)) << s;
  }
  const ReadStats after = db_->GetReadStats();
  const uint64_t gets = after.gets - before.gets;
  const uint64_t probed = after.tables_probed - before.tables_probed;
  const uint64_t negatives = after.filter_negatives - before.filter_negatives;
  const uint64_t false_positives =
      after.filter_false_positives - before.filter_false_positives;
  const uint64_t block_reads = after.block_reads - before.block_reads;
  const uint64_t bytes_read = after.bytes_read - before.bytes_read;
  const double reads_per_get = static_cast<double>(block_reads) / gets;

  ASSERT_EQ(gets, static_cast<uint64_t>(kGets));
  EXPECT_EQ(after.memtable_hits, before.memtable_hits);
  // Every probed table either ruled the key out by its filter or read one
  // block to find it absent.
  EXPECT_EQ(
      negatives + false_positives + (probed - negatives - false_positives),
      probed);
  // The Env saw exactly the block reads the DB counted.
  EXPECT_EQ(env_->random_reads(), block_reads);
  EXPECT_EQ(env_->random_read_bytes(), bytes_read);

  std::printf(
      "[%s] %d tables on %d levels; %llu absent Gets: %.2f tables probed per "
      "Get, %llu filter negatives, %llu false positives (measured FPR "
      "%.3f%%), %.4f block reads per Get (%llu preads counted by the Env)\n",
      GetParam().name, tables, levels, static_cast<unsigned long long>(gets),
      static_cast<double>(probed) / gets,
      static_cast<unsigned long long>(negatives),
      static_cast<unsigned long long>(false_positives),
      100.0 * static_cast<double>(false_positives) /
          std::max<uint64_t>(1, negatives + false_positives),
      reads_per_get, static_cast<unsigned long long>(env_->random_reads()));

  // Absent keys hit more than one table on average.
  EXPECT_GT(static_cast<double>(probed) / gets, 1.2);
  if (GetParam().bits_per_key == 0) {
    EXPECT_EQ(negatives, 0u);
    EXPECT_GE(reads_per_get, 1.0);
  } else {
    EXPECT_LE(reads_per_get, 0.03);
    EXPECT_GT(negatives, probed * 95 / 100);
  }
  const std::string stats = *db_->GetProperty("sift.stats");
  EXPECT_NE(stats.find("measured FPR"), std::string::npos) << stats;
  std::printf("%s", stats.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Filters, DBFilterTest,
    testing::Values(
        FilterConfig{"no_filter", 0.0, FilterKind::kBlockedBloom},
        FilterConfig{"standard_10", 10.0, FilterKind::kStandardBloom},
        FilterConfig{"blocked_10", 10.0, FilterKind::kBlockedBloom},
        FilterConfig{"binary_fuse_10", 10.0, FilterKind::kBinaryFuse}),
    [](const testing::TestParamInfo<FilterConfig>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace sift
