// Range filters in a database (Options::range_filter_bits_per_key): bounded
// scans over empty ranges skip tables without reading a block; a randomized
// model test of bounded scans in both directions, with deletes, snapshots,
// flushes, compactions and reopens that turn the filter on and off, against
// a std::map; the option's checks.

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "util/random.h"

namespace sift {
namespace {

using Model = std::map<std::string, std::string>;

std::string BigEndian(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) s[i] = static_cast<char>(v & 0xff);
  return s;
}

class DBRangeFilterTest : public testing::Test {
 protected:
  DBRangeFilterTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    options_.write_buffer_size = 32 << 10;
    options_.max_file_size = 32 << 10;
    options_.block_size = 512;
    options_.range_filter_bits_per_key = 16;
  }

  void Open() {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/range");
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  std::unique_ptr<Env> env_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBRangeFilterTest, EmptyRangesReadNoBlock) {
  Open();
  // Keys: 8-byte big-endian multiples of 64; the empty ranges are the 32
  // integers after a key.
  for (uint64_t i = 0; i < 20000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), BigEndian(64 * i), "v").ok());
  }
  ASSERT_TRUE(db_->Flush().ok());
  Random rnd(3);
  const ReadStats before = db_->GetReadStats();
  for (int q = 0; q < 2000; ++q) {
    const uint64_t start = 64 * rnd.Uniform(20000) + 1;
    const std::string lo = BigEndian(start), hi = BigEndian(start + 32);
    ReadOptions ro;
    ro.iterate_lower_bound = lo;
    ro.iterate_upper_bound = hi;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    it->Seek(lo);
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().ok());
  }
  const ReadStats after = db_->GetReadStats();
  const uint64_t probes =
      after.range_filter_probes - before.range_filter_probes;
  const uint64_t negatives =
      after.range_filter_negatives - before.range_filter_negatives;
  EXPECT_GE(probes, 1900u);  // a few ranges fall outside every table
  // 32 / 2^14 = 0.2% false positives; only those read a block.
  EXPECT_GE(negatives * 100, probes * 99) << negatives << " of " << probes;
  EXPECT_LE(after.iterator_block_reads - before.iterator_block_reads,
            2 * (probes - negatives));
  // A range that holds keys still yields them all.
  ReadOptions ro;
  const std::string lo = BigEndian(64 * 100), hi = BigEndian(64 * 110);
  ro.iterate_lower_bound = lo;
  ro.iterate_upper_bound = hi;
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  int n = 0;
  for (it->Seek(lo); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, 10);
}

// With every key in one table, each "maybe" of an empty range is a false
// positive the iterator's Seek(lower) finds, and none is counted for ranges
// that hold keys.
TEST_F(DBRangeFilterTest, CountsFalsePositives) {
  options_.write_buffer_size = 8 << 20;
  options_.max_file_size = 8 << 20;
  options_.range_filter_bits_per_key = 8;  // L = 4: at most 4/64 = 6.25%
  Open();
  for (uint64_t i = 0; i < 20000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), BigEndian(64 * i), "v").ok());
  }
  ASSERT_TRUE(db_->Flush().ok());
  int tables = 0;
  for (int level = 0; level < 7; ++level) {
    tables += std::atoi(
        db_->GetProperty("sift.num-files-at-level" + std::to_string(level))
            ->c_str());
  }
  ASSERT_EQ(tables, 1);
  auto seek = [&](uint64_t start, uint64_t length) {
    const std::string lo = BigEndian(start), hi = BigEndian(start + length);
    ReadOptions ro;
    ro.iterate_lower_bound = lo;
    ro.iterate_upper_bound = hi;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    it->Seek(lo);
    const bool found = it->Valid();
    EXPECT_TRUE(it->status().ok());
    return found;
  };
  Random rnd(5);
  ReadStats before = db_->GetReadStats();
  for (int q = 0; q < 4000; ++q) {
    ASSERT_FALSE(seek(64 * rnd.Uniform(20000) + 1, 4));
  }
  ReadStats d = db_->GetReadStats();
  d -= before;
  EXPECT_EQ(d.range_filter_probes, 4000u);
  EXPECT_GT(d.range_filter_false_positives, 0u);
  EXPECT_EQ(d.range_filter_false_positives,
            d.range_filter_probes - d.range_filter_negatives);
  EXPECT_LE(d.range_filter_false_positives, 4000u * 625 / 10000 * 3 / 2);
  before = db_->GetReadStats();
  for (int q = 0; q < 500; ++q) {
    ASSERT_TRUE(seek(64 * rnd.Uniform(20000), 4));
  }
  d = db_->GetReadStats();
  d -= before;
  EXPECT_EQ(d.range_filter_probes, 500u);
  EXPECT_EQ(d.range_filter_negatives, 0u);
  EXPECT_EQ(d.range_filter_false_positives, 0u);
  const ReadStats total = db_->GetReadStats();
  EXPECT_NE(db_->GetProperty("sift.stats")
                ->find(absl::StrCat(
                    "range filter: 4500 probes, ", total.range_filter_negatives,
                    " negatives, ", total.range_filter_false_positives,
                    " false positives")),
            std::string::npos)
      << *db_->GetProperty("sift.stats");
}

// Per-level filter memory adds up to the total and shows in sift.stats.
TEST_F(DBRangeFilterTest, FilterMemoryPerLevel) {
  Open();
  for (uint64_t i = 0; i < 20000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), BigEndian(64 * i), "v").ok());
  }
  ASSERT_TRUE(db_->Flush().ok());
  // Open every table: a table not open holds no filter memory.
  for (uint64_t i = 0; i < 20000; i += 97) {
    std::string v;
    ASSERT_TRUE(db_->Get(ReadOptions(), BigEndian(64 * i), &v).ok());
  }
  uint64_t sum = 0;
  int levels_with_filters = 0;
  for (int level = 0; level < 7; ++level) {
    const std::optional<std::string> v = db_->GetProperty(
        "sift.filter-memory-bytes-at-level" + std::to_string(level));
    ASSERT_TRUE(v.has_value()) << level;
    const uint64_t bytes = std::strtoull(v->c_str(), nullptr, 10);
    sum += bytes;
    levels_with_filters += bytes > 0;
  }
  EXPECT_GT(levels_with_filters, 0);
  EXPECT_EQ(std::to_string(sum), *db_->GetProperty("sift.filter-memory-bytes"));
  EXPECT_FALSE(db_->GetProperty("sift.filter-memory-bytes-at-level7"));
  EXPECT_FALSE(db_->GetProperty("sift.filter-memory-bytes-at-level"));
  EXPECT_NE(db_->GetProperty("sift.stats")->find("Range(KiB)"),
            std::string::npos);
}

TEST_F(DBRangeFilterTest, OptionIsChecked) {
  for (const double bad : {-1.0, 1.0, 65.0, std::nan("")}) {
    options_.range_filter_bits_per_key = bad;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/range");
    EXPECT_TRUE(absl::IsInvalidArgument(db.status())) << bad;
  }
}

TEST_F(DBRangeFilterTest, RandomizedAgainstModel) {
  const char* seed_env = std::getenv("SIFT_TEST_SEED");
  Random rnd(seed_env != nullptr ? std::strtoull(seed_env, nullptr, 10) : 77);
  options_.write_buffer_size = 16 << 10;
  options_.max_file_size = 16 << 10;
  options_.block_size = 256;
  // Keys of varied lengths over a few shared prefixes, so tables have common
  // prefixes of several lengths and keys shorter and longer than 8 bytes
  // after them.
  auto random_key = [&]() {
    std::string key = rnd.OneIn(3) ? "ab" : (rnd.OneIn(2) ? "abc" : "b");
    const uint64_t tail = 1 + rnd.Uniform(10);
    for (uint64_t i = 0; i < tail; ++i) {
      key.push_back(static_cast<char>(rnd.OneIn(8) ? 0 : 'a' + rnd.Uniform(3)));
    }
    return key;
  };
  Open();
  Model model;
  uint64_t probes = 0;
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 700; ++i) {
      const std::string key = random_key();
      if (rnd.OneIn(4)) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value = key + "." + std::to_string(round * 1000 + i);
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
      if (rnd.OneIn(120)) {
        ASSERT_TRUE(db_->Flush().ok());
      }
    }
    if (rnd.OneIn(3)) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
    const Snapshot* snapshot = db_->GetSnapshot();
    const Model at_snapshot = model;
    for (int i = 0; i < 40; ++i) {
      const std::string key = random_key();
      ASSERT_TRUE(db_->Put(WriteOptions(), key, "later").ok());
      model[key] = "later";
    }
    for (int check = 0; check < 200; ++check) {
      const bool use_snapshot = rnd.OneIn(2);
      const Model& m = use_snapshot ? at_snapshot : model;
      std::string lo = random_key();
      std::string hi = rnd.OneIn(3) ? random_key() : lo + std::string(1, 'b');
      if (hi < lo) std::swap(lo, hi);
      ReadOptions ro;
      if (use_snapshot) ro.snapshot = snapshot;
      ro.iterate_lower_bound = lo;
      ro.iterate_upper_bound = hi;
      std::vector<std::string> expected;
      for (auto it = m.lower_bound(lo); it != m.end() && it->first < hi; ++it) {
        expected.push_back(it->first + "=" + it->second);
      }
      std::unique_ptr<Iterator> it = db_->NewIterator(ro);
      std::vector<std::string> got;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        got.push_back(std::string(it->key()) + "=" + std::string(it->value()));
      }
      ASSERT_TRUE(it->status().ok()) << it->status();
      ASSERT_EQ(got, expected) << "round " << round << " check " << check;
      std::vector<std::string> back;
      for (it->SeekToLast(); it->Valid(); it->Prev()) {
        back.insert(back.begin(),
                    std::string(it->key()) + "=" + std::string(it->value()));
      }
      ASSERT_EQ(back, expected) << "backward, round " << round;
    }
    db_->ReleaseSnapshot(snapshot);
    if (rnd.OneIn(2)) {
      probes += db_->GetReadStats().range_filter_probes;
      const double choices[] = {0, 2, 8, 16, 24};
      options_.range_filter_bits_per_key = choices[rnd.Uniform(5)];
      Open();
    }
  }
  probes += db_->GetReadStats().range_filter_probes;
  // The filters were asked (and never gave a wrong answer, above).
  EXPECT_GT(probes, 0u);
}

}  // namespace
}  // namespace sift
