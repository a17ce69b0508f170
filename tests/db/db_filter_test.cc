// Filters at work: on a database of many tables over several levels, point
// reads of absent keys cost almost no block reads with filters and at least
// one per Get without, as counted by GetReadStats() and by the Env; and the
// optimal allocation (FilterAllocation::kOptimal) reads fewer blocks than the
// uniform one for about the same filter memory.

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
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
      : mem_env_(test::NewTestEnv()),
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

// The same data loaded under each allocation: a random-order fill with small
// tables compacted into one deep level, then three level-0 tables.
class DBFilterAllocationTest : public testing::Test {
 protected:
  struct Outcome {
    std::map<int, double> bits_per_key;  // per level, from sift.stats
    std::map<int, int> files;            // per level
    uint64_t filter_memory = 0;
    uint64_t absent_gets = 0;
    uint64_t block_reads = 0;
    uint64_t tables_probed = 0;
    std::string stats;
  };

  static std::string Key(int n) { return "key" + test::NumberKey(n, 8); }

  // Per-level bits/key from the filter section of sift.stats ("L<n>" rows).
  static std::map<int, double> ParseBitsPerLevel(const std::string& stats) {
    std::map<int, double> bits;
    std::istringstream in(stats);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::string level;
      int tables = 0;
      double bits_per_key = 0;
      if (row >> level >> tables >> bits_per_key && level.size() == 2 &&
          level[0] == 'L' && level[1] >= '0' && level[1] <= '6') {
        bits[level[1] - '0'] = bits_per_key;
      }
    }
    return bits;
  }

  static void Load(FilterAllocation allocation, Outcome* out) {
    std::unique_ptr<Env> env(test::NewTestEnv());
    Options options;
    options.env = env.get();
    options.create_if_missing = true;
    options.write_buffer_size = 128 << 10;
    options.max_file_size = 128 << 10;
    options.compression = Compression::kNone;
    options.block_cache_capacity = 0;
    options.filter_bits_per_key = 10;
    options.filter_kind = FilterKind::kBlockedBloom;
    options.filter_allocation = allocation;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/allocdb");
    ASSERT_TRUE(db.ok()) << db.status();

    // Even numbers, in an order fixed by the seed; odd numbers stay absent.
    std::vector<int> order(kKeys);
    std::iota(order.begin(), order.end(), 0);
    Random shuffle(301);
    for (int i = kKeys - 1; i > 0; --i) {
      std::swap(order[i], order[shuffle.Uniform(i + 1)]);
    }
    Random rnd(17);
    for (int n : order) {
      ASSERT_TRUE(
          (*db)
              ->Put(WriteOptions(), Key(2 * n), test::RandomString(&rnd, 100))
              .ok());
    }
    // One deep run (its filters sized while it was the whole tree), then
    // three small level-0 tables over the whole key range: a shape that does
    // not depend on when background compactions ran.
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    for (int table = 0; table < 3; ++table) {
      for (int i = 0; i < kLevel0Keys; ++i) {
        const int n = static_cast<int>(shuffle.Uniform(kKeys));
        ASSERT_TRUE(
            (*db)
                ->Put(WriteOptions(), Key(2 * n), test::RandomString(&rnd, 100))
                .ok());
      }
      ASSERT_TRUE((*db)->Flush().ok());
    }

    std::string value;
    for (int n = 0; n < kKeys; n += 20) {  // open every table first
      ASSERT_TRUE((*db)->Get(ReadOptions(), Key(2 * n), &value).ok());
    }
    const ReadStats before = (*db)->GetReadStats();
    Random probe(4711);
    for (int i = 0; i < kGets; ++i) {
      const int n = 2 * static_cast<int>(probe.Uniform(kKeys)) + 1;
      absl::Status s = (*db)->Get(ReadOptions(), Key(n), &value);
      ASSERT_TRUE(absl::IsNotFound(s)) << s;
    }
    const ReadStats after = (*db)->GetReadStats();
    out->absent_gets = after.gets - before.gets;
    out->block_reads = after.block_reads - before.block_reads;
    out->tables_probed = after.tables_probed - before.tables_probed;
    out->filter_memory =
        std::stoull(*(*db)->GetProperty("sift.filter-memory-bytes"));
    out->stats = *(*db)->GetProperty("sift.stats");
    out->bits_per_key = ParseBitsPerLevel(out->stats);
    for (int level = 0; level < 7; ++level) {
      out->files[level] = std::stoi(*(*db)->GetProperty(
          "sift.num-files-at-level" + std::to_string(level)));
    }
    db->reset();
  }

  static constexpr int kKeys = 60000;
  static constexpr int kLevel0Keys = 200;
  static constexpr int kGets = 20000;
};

TEST_F(DBFilterAllocationTest, OptimalReadsFewerBlocksForTheSameMemory) {
  Outcome uniform, optimal;
  ASSERT_NO_FATAL_FAILURE(Load(FilterAllocation::kUniform, &uniform));
  ASSERT_NO_FATAL_FAILURE(Load(FilterAllocation::kOptimal, &optimal));
  std::printf("uniform:\n%s\noptimal:\n%s\n", uniform.stats.c_str(),
              optimal.stats.c_str());
  std::printf(
      "block reads per absent Get: uniform %.4f, optimal %.4f; filter "
      "memory: uniform %llu, optimal %llu bytes\n",
      double(uniform.block_reads) / uniform.absent_gets,
      double(optimal.block_reads) / optimal.absent_gets,
      static_cast<unsigned long long>(uniform.filter_memory),
      static_cast<unsigned long long>(optimal.filter_memory));

  // Three level-0 tables over one deep level.
  int deep = 0;
  for (int level = 1; level < 7; ++level) {
    if (optimal.files.at(level) > 0) deep = level;
  }
  for (const Outcome* o : {&uniform, &optimal}) {
    ASSERT_EQ(o->files.at(0), 3) << o->stats;
    ASSERT_GT(deep, 0);
    ASSERT_GT(o->files.at(deep), 20) << o->stats;
    ASSERT_GE(double(o->tables_probed) / o->absent_gets, 3.5) << o->stats;
  }
  // Uniform: every level at the setting (filters are whole 64-byte lines,
  // which rounds small filters up).
  for (const auto& [level, bits] : uniform.bits_per_key) {
    EXPECT_GE(bits, 10.0) << "level " << level;
    EXPECT_LE(bits, 10.8) << "level " << level;
  }
  // Optimal: the small level-0 tables get far more than the deep level.
  EXPECT_GT(optimal.bits_per_key.at(0), optimal.bits_per_key.at(deep) + 8)
      << optimal.stats;
  // The deep level was written when it was the whole tree: the average.
  EXPECT_NEAR(optimal.bits_per_key.at(deep), uniform.bits_per_key.at(deep), 0.1)
      << optimal.stats;
  // About the same memory...
  EXPECT_LE(double(optimal.filter_memory),
            1.03 * double(uniform.filter_memory));
  EXPECT_GE(double(optimal.filter_memory),
            0.97 * double(uniform.filter_memory));
  // ...for clearly fewer block reads (uniform: about 0.0095 per run probed).
  EXPECT_GT(uniform.block_reads, uint64_t{kGets} / 100);
  EXPECT_LT(double(optimal.block_reads), 0.8 * double(uniform.block_reads));
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
