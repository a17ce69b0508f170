// Multi-threaded stress: 8 threads mix puts, deletes, batches, point reads,
// iterators (forward and backward), snapshots, flushes and compactions on a
// database on disk with small buffers and tables, so that flushes and
// compactions run all the time underneath them. Every check is exact:
//   - each thread owns its keys ("t<thread>.<n>"); values carry the thread,
//     the key and a per-thread version, so reading an own key, scanning the
//     own range or reading at a snapshot must give exactly what the thread
//     wrote;
//   - reads of another thread's key must give a version that was
//     acknowledged before the read started or was being written during it;
//   - full scans are ordered and every value belongs to its key;
//   - at the end, and after a reopen, the database holds exactly what every
//     thread expects.
// Work is bounded by operation counts, not time: each thread makes
// SIFT_STRESS_OPS operations (default 6,000; 1,500 under sanitizers, where
// the TSan build runs it as a *Stress* suite; SIFT_LONG=1 makes the default
// 2,000,000).

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "tests/reliability/reliability_util.h"
#include "util/random.h"

namespace sift::reliability {
namespace {

constexpr int kThreads = 8;
constexpr int kKeysPerThread = 400;
constexpr int kTotalKeys = kThreads * kKeysPerThread;

std::string Key(int thread, int n) {
  return absl::StrFormat("t%d.%04d", thread, n);
}
std::string Value(int thread, int n, uint64_t version, Random* rnd) {
  std::string v = absl::StrCat(thread, ":", n, ":", version, ":");
  const size_t len = v.size() + rnd->Uniform(160);
  while (v.size() < len) v.push_back(static_cast<char>('a' + rnd->Uniform(26)));
  return v;
}
// The (thread, n, version) a value claims; false if malformed.
bool ParseValue(std::string_view value, int* thread, int* n,
                uint64_t* version) {
  std::vector<absl::string_view> parts = absl::StrSplit(
      absl::string_view(value.data(), value.size()), absl::MaxSplits(':', 3));
  return parts.size() == 4 && absl::SimpleAtoi(parts[0], thread) &&
         absl::SimpleAtoi(parts[1], n) && absl::SimpleAtoi(parts[2], version);
}

struct OpCounts {
  uint64_t operations = 0;  // calls made by Worker::Run
  uint64_t puts = 0, deletes = 0, batches = 0, own_gets = 0, other_gets = 0,
           range_scans = 0, full_scans = 0, snapshots = 0, flushes = 0,
           compactions = 0;
  void Add(const OpCounts& o) {
    operations += o.operations;
    puts += o.puts;
    deletes += o.deletes;
    batches += o.batches;
    own_gets += o.own_gets;
    other_gets += o.other_gets;
    range_scans += o.range_scans;
    full_scans += o.full_scans;
    snapshots += o.snapshots;
    flushes += o.flushes;
    compactions += o.compactions;
  }
  uint64_t Total() const {
    return puts + deletes + batches + own_gets + other_gets + range_scans +
           full_scans + snapshots + flushes + compactions;
  }
};

// What every thread can see of the others: per key, the last acknowledged
// (version << 1 | deleted) and the highest version whose write has started.
struct Published {
  std::array<std::atomic<uint64_t>, kTotalKeys> acked{};
  std::array<std::atomic<uint64_t>, kTotalKeys> started{};
};

class Worker {
 public:
  Worker(int id, DB* db, Published* pub, std::atomic<bool>* failed)
      : id_(id), db_(db), pub_(pub), failed_(failed), rnd_(1000 + id) {}

  // Makes `ops` operations, or fewer if a thread fails.
  void Run(int64_t ops) {
    for (int64_t i = 0; i < ops && !failed_->load(std::memory_order_relaxed);
         ++i) {
      ++counts_.operations;
      const uint64_t r = rnd_.Uniform(1000);
      bool ok = true;
      if (r < 300) {
        ok = WriteOne();
      } else if (r < 400) {
        ok = WriteBatchOfOwn();
      } else if (r < 650) {
        ok = GetOwn();
      } else if (r < 800) {
        ok = GetOther();
      } else if (r < 880) {
        ok = ScanOwn();
      } else if (r < 890) {
        ok = ScanAll();
      } else if (r < 990) {
        ok = SnapshotRead();
      } else if (r < 998) {
        ok = Check(db_->Flush(), "Flush");
        ++counts_.flushes;
      } else {
        ok = Compact();
      }
      if (!ok) failed_->store(true);
    }
  }

  const std::map<std::string, std::string>& expected() const {
    return expected_;
  }
  const OpCounts& counts() const { return counts_; }

 private:
  bool Check(const absl::Status& s, std::string_view what) {
    EXPECT_TRUE(s.ok()) << "thread " << id_ << ": " << what << ": " << s;
    return s.ok();
  }
  int Slot(int n) const { return id_ * kKeysPerThread + n; }

  bool WriteOne() {
    const int n = static_cast<int>(rnd_.Uniform(kKeysPerThread));
    const uint64_t version = ++version_;
    const std::string key = Key(id_, n);
    const bool del = rnd_.OneIn(5);
    WriteOptions wo;
    wo.sync = rnd_.OneIn(200);
    pub_->started[Slot(n)].store(version, std::memory_order_release);
    absl::Status s;
    if (del) {
      s = db_->Delete(wo, key);
      ++counts_.deletes;
    } else {
      const std::string value = Value(id_, n, version, &rnd_);
      s = db_->Put(wo, key, value);
      ++counts_.puts;
      if (s.ok()) expected_[key] = value;
    }
    if (!Check(s, "write")) return false;
    if (del) expected_.erase(key);
    pub_->acked[Slot(n)].store(version << 1 | (del ? 1 : 0),
                               std::memory_order_release);
    return true;
  }

  bool WriteBatchOfOwn() {
    const uint64_t version = ++version_;
    WriteBatch batch;
    std::map<int, std::optional<std::string>> updates;  // later wins
    const int count = 2 + static_cast<int>(rnd_.Uniform(8));
    for (int i = 0; i < count; ++i) {
      const int n = static_cast<int>(rnd_.Uniform(kKeysPerThread));
      if (rnd_.OneIn(4)) {
        batch.Delete(Key(id_, n));
        updates[n] = std::nullopt;
      } else {
        std::string value = Value(id_, n, version, &rnd_);
        batch.Put(Key(id_, n), value);
        updates[n] = std::move(value);
      }
    }
    for (const auto& [n, v] : updates) {
      pub_->started[Slot(n)].store(version, std::memory_order_release);
    }
    ++counts_.batches;
    if (!Check(db_->Write(WriteOptions(), &batch), "batch")) return false;
    for (const auto& [n, v] : updates) {
      if (v.has_value()) {
        expected_[Key(id_, n)] = *v;
      } else {
        expected_.erase(Key(id_, n));
      }
      pub_->acked[Slot(n)].store(version << 1 | (v.has_value() ? 0 : 1),
                                 std::memory_order_release);
    }
    return true;
  }

  bool GetOwn() {
    const std::string key =
        Key(id_, static_cast<int>(rnd_.Uniform(kKeysPerThread)));
    std::string value;
    const absl::Status s = db_->Get(ReadOptions(), key, &value);
    ++counts_.own_gets;
    auto it = expected_.find(key);
    if (it == expected_.end()) {
      EXPECT_TRUE(absl::IsNotFound(s)) << key << ": " << s << " " << value;
      return absl::IsNotFound(s);
    }
    if (!Check(s, key)) return false;
    EXPECT_EQ(value, it->second) << key;
    return value == it->second;
  }

  bool GetOther() {
    const int owner = static_cast<int>(rnd_.Uniform(kThreads));
    const int n = static_cast<int>(rnd_.Uniform(kKeysPerThread));
    const int slot = owner * kKeysPerThread + n;
    const uint64_t before = pub_->acked[slot].load(std::memory_order_acquire);
    std::string value;
    const absl::Status s = db_->Get(ReadOptions(), Key(owner, n), &value);
    const uint64_t started =
        pub_->started[slot].load(std::memory_order_acquire);
    ++counts_.other_gets;
    const uint64_t acked_version = before >> 1;
    if (absl::IsNotFound(s)) {
      // Absent: deleted (or never written) as of the read's start, or a
      // write begun since may be a delete.
      const bool ok =
          (before & 1) != 0 || before == 0 || started > acked_version;
      EXPECT_TRUE(ok) << Key(owner, n) << " not found, but version "
                      << acked_version << " was acknowledged before the read";
      return ok;
    }
    if (!Check(s, "Get other")) return false;
    int t = -1, k = -1;
    uint64_t v = 0;
    const bool ok = ParseValue(value, &t, &k, &v) && t == owner && k == n &&
                    v >= acked_version && v <= started;
    EXPECT_TRUE(ok) << Key(owner, n) << " = " << value.substr(0, 40)
                    << "; acknowledged version " << acked_version
                    << ", started " << started;
    return ok;
  }

  // Compare the own key range, read through `it`, with `expected`; forward
  // or backward.
  bool CheckOwnRange(Iterator* it,
                     const std::map<std::string, std::string>& expected,
                     bool backward) {
    const std::string lo = absl::StrCat("t", id_, ".");
    const std::string hi = absl::StrCat("t", id_, "/");  // '/' follows '.'
    std::vector<std::pair<std::string, std::string>> got;
    if (!backward) {
      for (it->Seek(lo); it->Valid() && it->key() < hi; it->Next()) {
        got.emplace_back(it->key(), it->value());
      }
    } else {
      it->Seek(hi);
      if (it->Valid()) {
        it->Prev();
      } else {
        it->SeekToLast();
      }
      for (; it->Valid() && it->key() >= lo; it->Prev()) {
        got.emplace_back(it->key(), it->value());
      }
      std::reverse(got.begin(), got.end());
    }
    if (!Check(it->status(), "iterator")) return false;
    const std::vector<std::pair<std::string, std::string>> want(
        expected.begin(), expected.end());
    EXPECT_TRUE(got == want)
        << "thread " << id_ << (backward ? " backward" : "")
        << " range scan: " << got.size() << " entries, " << want.size()
        << " expected";
    return got == want;
  }

  bool ScanOwn() {
    ++counts_.range_scans;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    return CheckOwnRange(it.get(), expected_, rnd_.OneIn(3));
  }

  bool ScanAll() {
    ++counts_.full_scans;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    std::string prev;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key(it->key());
      int t = -1, n = -1;
      uint64_t v = 0;
      const bool ok =
          key > prev && ParseValue(it->value(), &t, &n, &v) && Key(t, n) == key;
      EXPECT_TRUE(ok) << "full scan: " << key << " after " << prev << " = "
                      << it->value().substr(0, 40);
      if (!ok) return false;
      if (t == id_) {
        auto e = expected_.find(key);
        if (e == expected_.end() || e->second != it->value()) {
          ADD_FAILURE() << "full scan: own key " << key << " is stale";
          return false;
        }
      }
      prev = key;
    }
    return Check(it->status(), "full scan");
  }

  bool SnapshotRead() {
    ++counts_.snapshots;
    const Snapshot* snap = db_->GetSnapshot();
    const std::map<std::string, std::string> frozen = expected_;
    std::unique_ptr<Iterator> early;
    ReadOptions at;
    at.snapshot = snap;
    if (rnd_.OneIn(2)) early = db_->NewIterator(at);
    // Change things after the snapshot.
    bool ok = true;
    const int writes = 1 + static_cast<int>(rnd_.Uniform(20));
    for (int i = 0; i < writes && ok; ++i) ok = WriteOne();
    for (int i = 0; i < 20 && ok; ++i) {
      const std::string key =
          Key(id_, static_cast<int>(rnd_.Uniform(kKeysPerThread)));
      std::string value;
      const absl::Status s = db_->Get(at, key, &value);
      auto it = frozen.find(key);
      if (it == frozen.end()) {
        ok = absl::IsNotFound(s);
      } else {
        ok = s.ok() && value == it->second;
      }
      EXPECT_TRUE(ok) << "snapshot read of " << key << ": " << s;
    }
    if (ok) {
      std::unique_ptr<Iterator> it =
          early != nullptr ? std::move(early) : db_->NewIterator(at);
      ok = CheckOwnRange(it.get(), frozen, rnd_.OneIn(2));
    }
    db_->ReleaseSnapshot(snap);
    return ok;
  }

  bool Compact() {
    ++counts_.compactions;
    const int a = static_cast<int>(rnd_.Uniform(kThreads));
    const int b = static_cast<int>(rnd_.Uniform(kThreads));
    const std::string lo = Key(std::min(a, b), 0);
    const std::string hi = Key(std::max(a, b), kKeysPerThread);
    return Check(db_->CompactRange(&lo, &hi), "CompactRange");
  }

  const int id_;
  DB* const db_;
  Published* const pub_;
  std::atomic<bool>* const failed_;
  Random rnd_;
  uint64_t version_ = 0;
  std::map<std::string, std::string> expected_;
  OpCounts counts_;
};

TEST(DBStressTest, EightThreadsMixedOperationsMatchExpectedState) {
  const int64_t ops_per_thread = IntFromEnv(
      "SIFT_STRESS_OPS", LongMode() ? 2000000 : (Sanitized() ? 1500 : 6000));
  ScratchDir dir("stress");
  const std::string dbname = dir.path() + "/db";
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  options.max_file_size = 64 << 10;
  options.block_size = 1024;
  options.block_cache_capacity = 256 << 10;  // evictions while reading
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dbname);
  ASSERT_TRUE(db.ok()) << db.status();

  auto pub = std::make_unique<Published>();
  std::atomic<bool> failed{false};
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < kThreads; ++i) {
    workers.push_back(
        std::make_unique<Worker>(i, db->get(), pub.get(), &failed));
  }
  const auto start = std::chrono::steady_clock::now();  // reported only
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&w, ops_per_thread] { w->Run(ops_per_thread); });
  }
  for (std::thread& t : threads) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(failed.load());

  KvMap expected;
  OpCounts total;
  for (const auto& w : workers) {
    expected.insert(w->expected().begin(), w->expected().end());
    total.Add(w->counts());
  }
  // Every thread made all its operations, flushes and compactions included.
  EXPECT_EQ(total.operations, static_cast<uint64_t>(kThreads * ops_per_thread));
  EXPECT_GT(total.flushes, 0u);
  EXPECT_GT(total.compactions, 0u);
  std::string levels;
  for (int level = 0; level < 7; ++level) {
    std::optional<std::string> n =
        (*db)->GetProperty(absl::StrCat("sift.num-files-at-level", level));
    absl::StrAppend(&levels, level == 0 ? "" : "/", n.value_or("?"));
  }
  absl::StatusOr<KvMap> all = ReadAll(db->get());
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, expected) << DescribeDiff(expected, *all);

  // And after a reopen (recovery from the WAL and the MANIFEST).
  db->reset();
  db = DB::Open(options, dbname);
  ASSERT_TRUE(db.ok()) << db.status();
  all = ReadAll(db->get());
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, expected) << DescribeDiff(expected, *all);

  std::printf(
      "[ stress ] %d threads, %.1f s, %llu ops (%.0f/s): %llu puts, %llu "
      "deletes, %llu batches, %llu own gets, %llu cross-thread gets, %llu "
      "range scans, %llu full scans, %llu snapshots, %llu flushes, %llu "
      "compact-ranges; %zu keys at the end; files per level %s\n",
      kThreads, elapsed, static_cast<unsigned long long>(total.Total()),
      total.Total() / elapsed, static_cast<unsigned long long>(total.puts),
      static_cast<unsigned long long>(total.deletes),
      static_cast<unsigned long long>(total.batches),
      static_cast<unsigned long long>(total.own_gets),
      static_cast<unsigned long long>(total.other_gets),
      static_cast<unsigned long long>(total.range_scans),
      static_cast<unsigned long long>(total.full_scans),
      static_cast<unsigned long long>(total.snapshots),
      static_cast<unsigned long long>(total.flushes),
      static_cast<unsigned long long>(total.compactions), expected.size(),
      levels.c_str());
}

}  // namespace
}  // namespace sift::reliability
