// Iteration bounds (ReadOptions::iterate_lower_bound / iterate_upper_bound):
// a randomized model test of bounded walks in both directions, with
// snapshots, deletes, flushes and compactions, against a std::map; checks
// that tables and blocks outside the bounds are not read; and a concurrency
// test of bounded scans while flushes and compactions replace the tables
// under them (run under ThreadSanitizer by the test command).

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/scratch_dir.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/counting_env.h"
#include "util/random.h"

namespace sift {
namespace {

using Model = std::map<std::string, std::string>;

bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }
std::string EnvOrEmpty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Where a test's database lives: the in-memory Env (blocks read into the
// block cache), or a real directory with memory-mapped tables (blocks used
// in place, the iterator's other path).
enum class Storage { kMemory, kMapped };

class DBBoundsTest : public testing::TestWithParam<Storage> {
 protected:
  DBBoundsTest() : rnd_(0xb0da + Seed()) {
    if (GetParam() == Storage::kMemory) {
      env_ = test::NewTestEnv();
      options_.env = env_.get();
      path_ = "/bounds";
    } else {
      options_.env = Env::Default();
      options_.allow_mmap_reads = true;
      path_ = dir_.path() + "/db";
    }
    options_.create_if_missing = true;
    // Small buffers, tables and blocks: many tables on several levels and
    // many blocks per table, so bounds fall inside, between and outside
    // them, and background work never stops.
    options_.write_buffer_size = 16 << 10;
    options_.max_file_size = 16 << 10;
    options_.block_size = 256;
    options_.block_cache_capacity = 64 << 10;
  }

  static uint64_t Seed() {
    const char* s = std::getenv("SIFT_TEST_SEED");
    return s != nullptr ? std::strtoull(s, nullptr, 10) : 0;
  }

  void Open() {
    ASSERT_FALSE(path_.empty());
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  std::string Key(uint64_t n) { return "k" + test::NumberKey(n, 5); }
  std::string RandomKey() { return Key(rnd_.Uniform(kKeySpace)); }

  // A bound: usually a key of the key space (present or not), sometimes one
  // between two keys or outside the whole space.
  std::string RandomBound() {
    switch (rnd_.Uniform(8)) {
      case 0:
        return "a";  // before every key
      case 1:
        return "l";  // after every key
      case 2:
        return RandomKey() + "5";  // between two keys
      default:
        return RandomKey();
    }
  }

  // A bounded random walk, compared at every step with the entries of
  // `model` inside the bounds.
  void CheckBoundedWalk(const Model& model, const Snapshot* snapshot) {
    std::optional<std::string> lower, upper;
    if (!rnd_.OneIn(3)) lower = RandomBound();
    if (!rnd_.OneIn(3)) {
      // Mostly a short range after the lower bound, as scans use them.
      upper = lower.has_value() && rnd_.OneIn(2)
                  ? Key(std::strtoull(lower->c_str() + 1, nullptr, 10) +
                        rnd_.Uniform(60))
                  : RandomBound();
    }
    ReadOptions ro;
    ro.snapshot = snapshot;
    if (lower) ro.iterate_lower_bound = *lower;
    if (upper) ro.iterate_upper_bound = *upper;
    std::vector<std::pair<std::string, std::string>> in;
    for (const auto& [k, v] : model) {
      if ((!lower || k >= *lower) && (!upper || k < *upper))
        in.emplace_back(k, v);
    }
    const auto first_at_or_after = [&](const std::string& t) {
      size_t i = 0;
      while (i < in.size() && in[i].first < t) ++i;
      return i;
    };

    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    // pos == in.size(): not valid.
    size_t pos = 0;
    // What the walk did, for a failure's message.
    std::string where = "bounds [" + lower.value_or("-inf") + ", " +
                        upper.value_or("+inf") + ")" +
                        (snapshot != nullptr ? " at a snapshot" : "") + ":";
    switch (rnd_.Uniform(4)) {
      case 0:
        it->SeekToFirst();
        pos = 0;
        where += " SeekToFirst";
        break;
      case 1:
        it->SeekToLast();
        pos = in.empty() ? 0 : in.size() - 1;
        where += " SeekToLast";
        break;
      default: {
        const std::string target = rnd_.OneIn(4) ? RandomBound() : RandomKey();
        it->Seek(target);
        pos = first_at_or_after(target);
        where += " Seek(" + target + ")";
        break;
      }
    }
    for (int step = 0; step < 40; ++step) {
      if (pos >= in.size()) {
        ASSERT_FALSE(it->Valid()) << where << " found " << it->key();
        break;
      }
      ASSERT_TRUE(it->Valid()) << where << " expected " << in[pos].first;
      ASSERT_EQ(it->key(), in[pos].first) << where;
      ASSERT_EQ(it->value(), in[pos].second) << where;
      if (rnd_.OneIn(3)) {
        it->Prev();
        pos = pos == 0 ? in.size() : pos - 1;
        where += " Prev";
      } else {
        it->Next();
        ++pos;
        where += " Next";
      }
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
  }

  static constexpr uint64_t kKeySpace = 4000;

  // On a real file system: under $SIFT_TEST_DIR when set (the direct-reads
  // runs point it into the build tree; /tmp may be a tmpfs).
  test::ScratchDir dir_{"bounds", EnvOrEmpty("SIFT_TEST_DIR")};
  std::unique_ptr<Env> env_;
  std::string path_;
  Random rnd_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_P(DBBoundsTest, RandomBoundedWalksMatchModel) {
  Open();
  Model model;
  struct LiveSnapshot {
    const Snapshot* snapshot;
    Model model;
  };
  std::vector<LiveSnapshot> snapshots;
  const int total = Sanitized() ? 6000 : 30000;
  int walks = 0;
  for (int op = 0; op < total; ++op) {
    const uint64_t dice = rnd_.Uniform(1000);
    if (dice < 500) {
      const std::string key = RandomKey();
      const std::string value =
          test::RandomString(&rnd_, 20 + rnd_.Uniform(60));
      ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
      model[key] = value;
    } else if (dice < 650) {
      const std::string key = RandomKey();
      ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
      model.erase(key);
    } else if (dice < 900) {
      if (!snapshots.empty() && rnd_.OneIn(3)) {
        const LiveSnapshot& s = snapshots[rnd_.Uniform(snapshots.size())];
        CheckBoundedWalk(s.model, s.snapshot);
      } else {
        CheckBoundedWalk(model, nullptr);
      }
      if (HasFatalFailure()) return;
      ++walks;
    } else if (dice < 940) {
      if (snapshots.size() < 4) {
        snapshots.push_back({db_->GetSnapshot(), model});
      } else {
        const size_t i = rnd_.Uniform(snapshots.size());
        db_->ReleaseSnapshot(snapshots[i].snapshot);
        snapshots.erase(snapshots.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } else if (dice < 960) {
      ASSERT_TRUE(db_->Flush().ok());
    } else if (dice < 965) {
      const std::string a = RandomKey(), b = RandomKey();
      const std::string lo = std::min(a, b), hi = std::max(a, b);
      ASSERT_TRUE(db_->CompactRange(&lo, &hi).ok());
    }
  }
  for (const LiveSnapshot& s : snapshots) db_->ReleaseSnapshot(s.snapshot);
  EXPECT_GT(walks, total / 5);
  // The tree the walks ran over had tables below level 0.
  int deep_tables = 0;
  for (int level = 1; level < 7; ++level) {
    std::optional<std::string> n =
        db_->GetProperty("sift.num-files-at-level" + std::to_string(level));
    if (n) deep_tables += std::stoi(*n);
  }
  EXPECT_GT(deep_tables, 2);
}

// A bounded scan reads only the blocks its range spans (and at most one more
// at each end, where a block boundary meets a bound), however large the
// tree: no other table or block is read, in either direction.
TEST_P(DBBoundsTest, BoundedScansReadOnlyTheirBlocks) {
  CountingEnv counting(options_.env);
  options_.env = &counting;
  options_.block_cache_capacity = 0;  // every block use is a read
  Open();
  for (uint64_t i = 0; i < kKeySpace; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), std::string(100, 'v')).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  // Open every table first, so that the counts below are block reads only.
  std::unique_ptr<Iterator> all = db_->NewIterator(ReadOptions());
  uint64_t n = 0;
  const ReadStats before_full_scan = db_->GetReadStats();
  for (all->SeekToFirst(); all->Valid(); all->Next()) ++n;
  ASSERT_EQ(n, kKeySpace);
  all.reset();
  // Its block reads (where files are read with system calls, fewer file
  // reads: a long scan reads ahead).
  const uint64_t full_scan_reads = db_->GetReadStats().iterator_block_reads -
                                   before_full_scan.iterator_block_reads;

  // Entries of ~120 bytes in 256-byte blocks: 6 keys span at most 3 blocks,
  // and a scan reads at most one more, past its last key. A compaction that
  // the writes above started may still replace the two tables (of 16 KiB) the
  // range can fall in, each costing one read of its tail to open.
  const std::string lower = Key(2000), upper = Key(2006);
  ReadOptions ro;
  ro.iterate_lower_bound = lower;
  ro.iterate_upper_bound = upper;
  const ReadStats before = db_->GetReadStats();
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  counting.Reset();
  n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, 6u);
  EXPECT_LE(counting.random_reads(), 4u + 2u);
  counting.Reset();
  n = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) ++n;
  EXPECT_EQ(n, 6u);
  EXPECT_LE(counting.random_reads(), 4u + 2u);
  ASSERT_TRUE(it->status().ok()) << it->status();
  // For scale: a full scan reads every block of the tree.
  EXPECT_GT(full_scan_reads, 500u);
  // The iterator's counters reach the DB's when it is destroyed: two seeks,
  // and the block reads counted above (without the tables' tail reads).
  it.reset();
  const ReadStats after = db_->GetReadStats();
  EXPECT_EQ(after.seeks - before.seeks, 2u);
  EXPECT_GE(after.iterator_block_reads - before.iterator_block_reads, 2u);
  EXPECT_LE(after.iterator_block_reads - before.iterator_block_reads, 8u);
  EXPECT_EQ(after.gets, before.gets);
  // Files opened through `counting` must close before it goes.
  db_.reset();
}

INSTANTIATE_TEST_SUITE_P(Storage, DBBoundsTest,
                         testing::Values(Storage::kMemory, Storage::kMapped),
                         [](const testing::TestParamInfo<Storage>& info) {
                           return info.param == Storage::kMemory ? "Memory"
                                                                 : "Mapped";
                         });

// Bounded scans by two threads while a writer rewrites the keys they scan
// (with the same values) and churns others, so that flushes and compactions
// keep replacing the tables under the scans. Each scan must see exactly the
// stable keys of its range.
TEST(DBBoundsConcurrencyTest, BoundedScansDuringFlushesAndCompactions) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.write_buffer_size = 16 << 10;
  options.max_file_size = 16 << 10;
  options.block_size = 256;
  absl::StatusOr<std::unique_ptr<DB>> opened = DB::Open(options, "/conc");
  ASSERT_TRUE(opened.ok()) << opened.status();
  DB* db = opened->get();
  constexpr int kStable = 2000;
  auto stable_key = [](int i) { return "s" + test::NumberKey(i, 5); };
  auto stable_value = [](int i) { return "value-" + std::to_string(i * 7); };
  for (int i = 0; i < kStable; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), stable_key(i), stable_value(i)).ok());
  }
  // Enough writes for dozens of flushes and compactions while the readers
  // scan; the readers go on until the writer is done.
  const int writes = Sanitized() ? 8000 : 40000;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    Random rnd(7);
    for (int w = 0; w < writes; ++w) {
      const int i = static_cast<int>(rnd.Uniform(kStable));
      // The stable keys keep their values; "t" keys come and go.
      EXPECT_TRUE(db->Put(WriteOptions(), stable_key(i), stable_value(i)).ok());
      const std::string t = "t" + test::NumberKey(rnd.Uniform(5000), 5);
      if (rnd.OneIn(3)) {
        EXPECT_TRUE(db->Delete(WriteOptions(), t).ok());
      } else {
        EXPECT_TRUE(db->Put(WriteOptions(), t, std::string(80, 'x')).ok());
      }
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      Random rnd(100 + r);
      while (!done.load()) {
        const int a = static_cast<int>(rnd.Uniform(kStable));
        const int b =
            std::min(kStable, a + 1 + static_cast<int>(rnd.Uniform(80)));
        const std::string lower = stable_key(a), upper = stable_key(b);
        ReadOptions ro;
        ro.iterate_lower_bound = lower;
        ro.iterate_upper_bound = upper;
        std::unique_ptr<Iterator> it = db->NewIterator(ro);
        if (rnd.OneIn(2)) {
          int i = a;
          for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
            ASSERT_EQ(it->key(), stable_key(i));
            ASSERT_EQ(it->value(), stable_value(i));
          }
          ASSERT_EQ(i, b);
        } else {
          int i = b - 1;
          for (it->SeekToLast(); it->Valid(); it->Prev(), --i) {
            ASSERT_EQ(it->key(), stable_key(i));
            ASSERT_EQ(it->value(), stable_value(i));
          }
          ASSERT_EQ(i, a - 1);
        }
        ASSERT_TRUE(it->status().ok()) << it->status();
      }
    });
  }
  writer.join();
  for (std::thread& t : readers) t.join();
  // The scans ran over a tree that flushes and compactions had reshaped.
  std::optional<std::string> l1 = db->GetProperty("sift.num-files-at-level1");
  ASSERT_TRUE(l1.has_value());
  EXPECT_GT(std::stoi(*l1), 0);
}

}  // namespace
}  // namespace sift
