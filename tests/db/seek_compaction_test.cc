// Seek compaction (db/seek_budget.h): iterator seeks that keep paying for a
// block in two or more runs get the shallowest of them compacted into the
// next level; point reads, which skip tables on their filters, charge
// nothing, and a tree with one run per key range is left alone.
//
// Background work runs on the test's thread, when the test drains it, so
// every compaction a test sees happened because of what it did before.

#include <atomic>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/seek_budget.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "util/mutex.h"
#include "util/random.h"

namespace sift {
namespace {

// An Env whose scheduled background work waits in a queue until Drain runs
// it on the calling thread.
class QueuedEnv : public EnvWrapper {
 public:
  explicit QueuedEnv(Env* target) : EnvWrapper(target) {}

  void Schedule(std::function<void()> work) override {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(work));
  }

  // Runs queued work, and whatever it schedules, until none is left.
  // Returns how many steps ran.
  int Drain() {
    int ran = 0;
    for (;;) {
      std::function<void()> work;
      {
        MutexLock lock(&mu_);
        if (queue_.empty()) return ran;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
      ++ran;
    }
  }

 private:
  Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
};

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

class SeekCompactionTest : public testing::Test {
 protected:
  SeekCompactionTest()
      : base_env_(test::NewTestEnv()), env_(base_env_.get()), rnd_(301) {
    options_.env = &env_;
    options_.create_if_missing = true;
    // Small memtables and tables: a few thousand keys make level 0 and
    // level 1 tables.
    options_.write_buffer_size = 16 << 10;
    options_.max_file_size = 16 << 10;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/db");
    EXPECT_TRUE(db.ok()) << db.status();
    if (db.ok()) db_ = std::move(*db);
  }

  ~SeekCompactionTest() override {
    env_.Drain();
    db_.reset();
    env_.Drain();
  }

  void Put(const std::string& key, const std::string& value) {
    ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
    model_[key] = value;
    env_.Drain();
  }

  // Runs `call` (DB::Flush or CompactRange, which wait for background work
  // that runs only when drained) on another thread while this one drains,
  // and returns its status once the background is idle again.
  absl::Status WhileDraining(const std::function<absl::Status()>& call) {
    absl::Status s;
    std::atomic<bool> done{false};
    std::thread caller([&] {
      s = call();
      done.store(true);
    });
    while (!done.load()) {
      env_.Drain();
      std::this_thread::yield();
    }
    caller.join();
    env_.Drain();
    return s;
  }

  void Flush() {
    const absl::Status s = WhileDraining([&] { return db_->Flush(); });
    ASSERT_TRUE(s.ok()) << s;
  }

  int FilesAtLevel(int level) {
    std::optional<std::string> p =
        db_->GetProperty(absl::StrCat("sift.num-files-at-level", level));
    EXPECT_TRUE(p.has_value());
    return p ? std::stoi(*p) : -1;
  }

  std::string Tables() {
    return db_->GetProperty("sift.sstables").value_or("");
  }

  // Fills keys [0, n) in random order, then rewrites every 40th key so that
  // the last flush leaves a level-0 table spanning the whole key range above
  // the tables of level 1.
  void FillWithLevel0OverLevel1(int n) {
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    for (int i = n - 1; i > 0; --i) {
      std::swap(order[i], order[rnd_.Uniform(i + 1)]);
    }
    for (int i : order) Put(Key(i), std::string(100, 'a' + i % 26));
    Flush();
    for (int i = 0; i < n; i += 40) Put(Key(i), "rewritten");
    Flush();
    ASSERT_GE(FilesAtLevel(0), 1) << Tables();
    ASSERT_GE(FilesAtLevel(1), 1) << Tables();
  }

  void Seek(const std::string& target) {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    it->Seek(target);
    ASSERT_TRUE(it->status().ok()) << it->status();
    auto expected = model_.lower_bound(target);
    ASSERT_EQ(it->Valid(), expected != model_.end());
    if (it->Valid()) {
      ASSERT_EQ(it->key(), expected->first);
    }
  }

  void CheckContents() {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    auto expected = model_.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++expected) {
      ASSERT_NE(expected, model_.end());
      ASSERT_EQ(it->key(), expected->first);
      ASSERT_EQ(it->value(), expected->second);
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    ASSERT_EQ(expected, model_.end());
  }

  std::unique_ptr<Env> base_env_;
  QueuedEnv env_;
  Options options_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;
  Random rnd_;
};

TEST_F(SeekCompactionTest, SeeksPushAnOverlappingLevel0TableDown) {
  constexpr int kKeys = 3000;
  FillWithLevel0OverLevel1(kKeys);
  const int level0 = FilesAtLevel(0);

  // One seek short of the level-0 table's budget: nothing moves yet. (Its
  // range covers nearly every key; seeks outside it charge nothing.)
  int charged = 0;
  while (charged + 1 < static_cast<int>(SeekBudget::kMinSeeks)) {
    const int i = 40 + static_cast<int>(rnd_.Uniform(kKeys - 80));
    Seek(Key(i));
    ++charged;
  }
  EXPECT_EQ(env_.Drain(), 0);
  EXPECT_EQ(FilesAtLevel(0), level0);

  // Enough seeks to spend every level-0 table's budget, however the seeks
  // spread over them; each compaction takes every level-0 table overlapping
  // the charged one.
  for (int round = 0; round < level0 * 2 && FilesAtLevel(0) > 0; ++round) {
    for (uint64_t s = 0; s < SeekBudget::kMinSeeks; ++s) {
      Seek(Key(40 + static_cast<int>(rnd_.Uniform(kKeys - 80))));
    }
    env_.Drain();
  }
  EXPECT_EQ(FilesAtLevel(0), 0) << Tables();
  CheckContents();
}

TEST_F(SeekCompactionTest, PointReadsChargeNothing) {
  constexpr int kKeys = 3000;
  FillWithLevel0OverLevel1(kKeys);
  const std::string before = Tables();
  std::string value;
  for (int n = 0; n < 20 * static_cast<int>(SeekBudget::kMinSeeks); ++n) {
    const absl::Status s = db_->Get(
        ReadOptions(), Key(static_cast<int>(rnd_.Uniform(kKeys))), &value);
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(env_.Drain(), 0);
  EXPECT_EQ(Tables(), before);
}

TEST_F(SeekCompactionTest, OneRunPerKeyRangeIsLeftAlone) {
  constexpr int kKeys = 3000;
  FillWithLevel0OverLevel1(kKeys);
  // Bring everything into one level.
  const absl::Status compacted =
      WhileDraining([&] { return db_->CompactRange(nullptr, nullptr); });
  ASSERT_TRUE(compacted.ok()) << compacted;
  int levels_used = 0;
  for (int level = 0; level < 7; ++level)
    levels_used += FilesAtLevel(level) > 0;
  ASSERT_EQ(levels_used, 1) << Tables();

  const std::string before = Tables();
  for (int n = 0; n < 20 * static_cast<int>(SeekBudget::kMinSeeks); ++n) {
    Seek(Key(static_cast<int>(rnd_.Uniform(kKeys))));
  }
  EXPECT_EQ(env_.Drain(), 0);
  EXPECT_EQ(Tables(), before);
  CheckContents();
}

}  // namespace
}  // namespace sift
