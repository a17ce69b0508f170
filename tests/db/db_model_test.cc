// Randomized model test: a long random mix of writes, reads, scans in both
// directions, snapshot reads and reopens, checked step by step against a
// std::map, under option sets that make flushes and compactions constant.

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/random.h"

namespace sift {
namespace {

using Model = std::map<std::string, std::string>;

struct ModelConfig {
  const char* name;
  double filter_bits_per_key;
  FilterKind filter_kind;
  Compression compression;
  size_t write_buffer_size;
  size_t max_file_size;
  size_t block_size;
  size_t block_cache_capacity;
};

// Operations per option set: >= 100,000 in a normal build; sanitizer builds
// (SIFT_SANITIZED set) and the direct-read run (every block read a device
// read, test_env.h) run a fifth of that.
int OpsPerConfig() {
  return std::getenv("SIFT_SANITIZED") != nullptr ||
                 test::DirectReadsUnderTest()
             ? 20000
             : 100000;
}

constexpr int kReopenEvery = 1000;
constexpr int kKeySpace = 3000;

class DBModelTest : public testing::TestWithParam<ModelConfig> {
 protected:
  DBModelTest() : env_(test::NewTestEnv()), rnd_(0x5eed + Seed()) {
    const ModelConfig& c = GetParam();
    options_.env = env_.get();
    options_.create_if_missing = true;
    options_.filter_bits_per_key = c.filter_bits_per_key;
    options_.filter_kind = c.filter_kind;
    options_.compression = c.compression;
    options_.write_buffer_size = c.write_buffer_size;
    options_.max_file_size = c.max_file_size;
    options_.block_size = c.block_size;
    options_.block_cache_capacity = c.block_cache_capacity;
  }

  static uint64_t Seed() {
    const char* s = std::getenv("SIFT_TEST_SEED");
    return s != nullptr ? std::strtoull(s, nullptr, 10) : 0;
  }

  void Open() {
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/model");
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  std::string RandomKey() {
    // Skewed toward a hot set so keys are overwritten and deleted often;
    // an occasional long key exercises prefix compression.
    uint64_t n = rnd_.OneIn(4) ? rnd_.Uniform(100) : rnd_.Uniform(kKeySpace);
    std::string key = "key" + test::NumberKey(n, 6);
    if (n % 97 == 0) key += std::string(40, 'x');
    return key;
  }
  std::string RandomValue() {
    const int len = rnd_.OneIn(50) ? 2000 + static_cast<int>(rnd_.Uniform(3000))
                                   : static_cast<int>(rnd_.Uniform(120));
    return test::RandomString(&rnd_, len);
  }

  // Get of `key` must agree with `model` (as of `snapshot`).
  void CheckGet(const Model& model, const std::string& key,
                const Snapshot* snapshot) {
    ReadOptions ro;
    ro.snapshot = snapshot;
    std::string value;
    absl::Status s = db_->Get(ro, key, &value);
    auto it = model.find(key);
    if (it == model.end()) {
      ASSERT_TRUE(absl::IsNotFound(s)) << key << ": " << s;
    } else {
      ASSERT_TRUE(s.ok()) << key << ": " << s;
      ASSERT_EQ(value, it->second) << key;
    }
  }

  // A random walk: seek somewhere, then step forward and backward at random,
  // comparing every position with the model.
  void CheckWalk(const Model& model, const Snapshot* snapshot, int steps) {
    ReadOptions ro;
    ro.snapshot = snapshot;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    Model::const_iterator pos;
    switch (rnd_.Uniform(3)) {
      case 0: {
        const std::string target = RandomKey();
        it->Seek(target);
        pos = model.lower_bound(target);
        break;
      }
      case 1:
        it->SeekToFirst();
        pos = model.begin();
        break;
      default:
        it->SeekToLast();
        pos = model.empty() ? model.end() : std::prev(model.end());
        break;
    }
    for (int i = 0; i < steps; ++i) {
      if (pos == model.end()) {
        ASSERT_FALSE(it->Valid());
        break;
      }
      ASSERT_TRUE(it->Valid()) << "expected " << pos->first;
      ASSERT_EQ(it->key(), pos->first);
      ASSERT_EQ(it->value(), pos->second);
      if (rnd_.OneIn(3)) {
        it->Prev();
        pos = pos == model.begin() ? model.end() : std::prev(pos);
      } else {
        it->Next();
        ++pos;
      }
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
  }

  // Both full scans must list exactly the model.
  void CheckFullScans(const Model& model, const Snapshot* snapshot) {
    ReadOptions ro;
    ro.snapshot = snapshot;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    auto pos = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++pos) {
      ASSERT_NE(pos, model.end()) << "extra key " << it->key();
      ASSERT_EQ(it->key(), pos->first);
      ASSERT_EQ(it->value(), pos->second);
    }
    ASSERT_EQ(pos, model.end()) << "missing key " << pos->first;
    auto rpos = model.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++rpos) {
      ASSERT_NE(rpos, model.rend()) << "extra key " << it->key();
      ASSERT_EQ(it->key(), rpos->first);
    }
    ASSERT_EQ(rpos, model.rend());
    ASSERT_TRUE(it->status().ok()) << it->status();
  }

  struct LiveSnapshot {
    const Snapshot* snapshot;
    Model model;
  };

  void ReleaseSnapshots() {
    for (LiveSnapshot& s : snapshots_) db_->ReleaseSnapshot(s.snapshot);
    snapshots_.clear();
  }

  std::unique_ptr<Env> env_;
  Random rnd_;
  Options options_;
  std::unique_ptr<DB> db_;
  std::vector<LiveSnapshot> snapshots_;
};

TEST_P(DBModelTest, RandomOperationsMatchModel) {
  Open();
  Model model;
  const int total = OpsPerConfig();
  int reopens = 0;
  int counts[10] = {};
  for (int op = 1; op <= total; ++op) {
    const uint64_t dice = rnd_.Uniform(1000);
    if (dice < 330) {  // Put
      const std::string key = RandomKey();
      const std::string value = RandomValue();
      ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
      model[key] = value;
      counts[0]++;
    } else if (dice < 430) {  // Delete
      const std::string key = RandomKey();
      ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
      model.erase(key);
      counts[1]++;
    } else if (dice < 510) {  // WriteBatch
      WriteBatch batch;
      const int n = 1 + static_cast<int>(rnd_.Uniform(10));
      for (int i = 0; i < n; ++i) {
        const std::string key = RandomKey();
        if (rnd_.OneIn(3)) {
          batch.Delete(key);
          model.erase(key);
        } else {
          const std::string value = RandomValue();
          batch.Put(key, value);
          model[key] = value;
        }
      }
      ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
      counts[2]++;
    } else if (dice < 800) {  // Get, present or absent
      const std::string key =
          rnd_.OneIn(5) ? "absent" + RandomKey() : RandomKey();
      ASSERT_NO_FATAL_FAILURE(CheckGet(model, key, nullptr));
      counts[3]++;
    } else if (dice < 870) {  // Iterate
      ASSERT_NO_FATAL_FAILURE(
          CheckWalk(model, nullptr, 1 + static_cast<int>(rnd_.Uniform(30))));
      counts[4]++;
    } else if (dice < 885) {  // take a snapshot
      if (snapshots_.size() < 3) {
        snapshots_.push_back({db_->GetSnapshot(), model});
      }
      counts[5]++;
    } else if (dice < 975) {  // read at a snapshot
      if (!snapshots_.empty()) {
        const LiveSnapshot& s = snapshots_[rnd_.Uniform(snapshots_.size())];
        if (rnd_.OneIn(4)) {
          ASSERT_NO_FATAL_FAILURE(CheckWalk(s.model, s.snapshot, 10));
        } else {
          ASSERT_NO_FATAL_FAILURE(CheckGet(s.model, RandomKey(), s.snapshot));
        }
      }
      counts[6]++;
    } else if (dice < 985) {  // release a snapshot
      if (!snapshots_.empty()) {
        const size_t i = rnd_.Uniform(snapshots_.size());
        db_->ReleaseSnapshot(snapshots_[i].snapshot);
        snapshots_.erase(snapshots_.begin() + i);
      }
      counts[7]++;
    } else if (dice < 995) {  // Flush
      ASSERT_TRUE(db_->Flush().ok());
      counts[8]++;
    } else {  // CompactRange over a random range
      std::string a = RandomKey(), b = RandomKey();
      if (b < a) std::swap(a, b);
      ASSERT_TRUE(db_->CompactRange(&a, &b).ok());
      counts[9]++;
    }

    if (op % kReopenEvery == 0) {
      for (const LiveSnapshot& s : snapshots_) {
        ASSERT_NO_FATAL_FAILURE(CheckFullScans(s.model, s.snapshot));
      }
      ReleaseSnapshots();
      ASSERT_NO_FATAL_FAILURE(CheckFullScans(model, nullptr));
      db_.reset();
      ASSERT_NO_FATAL_FAILURE(Open());
      ++reopens;
    }
  }
  ASSERT_NO_FATAL_FAILURE(CheckFullScans(model, nullptr));
  ReleaseSnapshots();

  int tables = 0, deepest = 0;
  for (int level = 0; level < 7; ++level) {
    const int n = std::stoi(
        *db_->GetProperty("sift.num-files-at-level" + std::to_string(level)));
    tables += n;
    if (n > 0) deepest = level;
  }
  // The point of the small buffers: data must have moved through levels.
  EXPECT_GT(tables, 1);
  EXPECT_GE(deepest, 1);
  std::printf(
      "[%s] %d ops: %d puts, %d deletes, %d batches, %d gets, %d walks, "
      "%d snapshots, %d snapshot reads, %d flushes, %d range compactions, "
      "%d reopens; %zu live keys in %d tables (deepest level %d)\n",
      GetParam().name, total, counts[0], counts[1], counts[2], counts[3],
      counts[4], counts[5], counts[6], counts[8], counts[9], reopens,
      model.size(), tables, deepest);
}

INSTANTIATE_TEST_SUITE_P(
    OptionSets, DBModelTest,
    testing::Values(
        ModelConfig{"blocked_snappy", 10.0, FilterKind::kBlockedBloom,
                    Compression::kSnappy, 64 << 10, 64 << 10, 4 << 10, 8 << 20},
        ModelConfig{"standard_nocompress", 10.0, FilterKind::kStandardBloom,
                    Compression::kNone, 64 << 10, 32 << 10, 1 << 10, 256 << 10},
        ModelConfig{"nofilter_snappy_nocache", 0.0, FilterKind::kBlockedBloom,
                    Compression::kSnappy, 64 << 10, 32 << 10, 512, 0},
        ModelConfig{"blocked_lowbits_nocompress", 2.5,
                    FilterKind::kBlockedBloom, Compression::kNone, 64 << 10,
                    128 << 10, 4 << 10, 64 << 10}),
    [](const testing::TestParamInfo<ModelConfig>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace sift
