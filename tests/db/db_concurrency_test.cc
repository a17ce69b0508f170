// Concurrency: writers and readers at once while flushes and compactions
// run. Suite names end in ConcurrencyTest: CI runs them under ThreadSanitizer.

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/mutex.h"
#include "util/random.h"

namespace sift {
namespace {

constexpr int kWriters = 4;
constexpr int kReaders = 4;
constexpr int kKeysPerWriter = 300;

// Work is bounded by operation counts, not by time: each writer makes
// WritesPerWriter() writes; each reader keeps reading until every writer is
// done and it has made at least ReadsPerReader() reads of its own.
bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }
uint64_t WritesPerWriter() { return Sanitized() ? 3000 : 12000; }
uint64_t ReadsPerReader() { return Sanitized() ? 1500 : 6000; }

std::string KeyOf(int writer, int k) {
  return absl::StrCat("w", writer, "_", test::NumberKey(k, 5));
}
// Values are "<counter>:<padding>": the counter of the writer at the time.
std::string ValueOf(uint64_t counter, Random* rnd) {
  return absl::StrCat(test::NumberKey(counter, 12), ":",
                      test::RandomString(rnd, 40 + rnd->Uniform(80)));
}
uint64_t CounterOf(std::string_view value) {
  return std::stoull(std::string(value.substr(0, 12)));
}

// Four writers each own a key range and write values carrying an increasing
// counter; each also keeps a pair of keys equal through batches. Four readers
// Get, scan and read pairs at snapshots, checking that no value ever goes
// backwards, that no value comes from the future, and that every pair read at
// a snapshot is equal. The small write buffer keeps flushes and compactions
// running the whole time.
TEST(DBConcurrencyTest, WritersAndReadersWithBackgroundWork) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  options.max_file_size = 64 << 10;
  options.block_cache_capacity = 256 << 10;
  absl::StatusOr<std::unique_ptr<DB>> opened = DB::Open(options, "/concdb");
  ASSERT_TRUE(opened.ok()) << opened.status();
  DB* db = opened->get();

  std::atomic<bool> stop{false};  // set on failure
  std::atomic<bool> failed{false};
  std::atomic<int> writers_running{kWriters};
  // Per writer: the highest counter it has started writing (a reader seeing
  // more would read the future).
  std::atomic<uint64_t> started[kWriters];
  for (auto& s : started) s.store(0);
  std::atomic<uint64_t> writes{0}, gets{0}, scans{0}, pair_checks{0},
      flushes{0};

  auto fail = [&](const std::string& what) {
    if (!failed.exchange(true)) ADD_FAILURE() << what;
    stop.store(true);
  };

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      Random rnd(1000 + w);
      uint64_t counter = 0;
      struct Done {
        std::atomic<int>* running;
        ~Done() { running->fetch_sub(1); }
      } done{&writers_running};
      while (!stop.load(std::memory_order_relaxed) &&
             counter < WritesPerWriter()) {
        ++counter;
        started[w].store(counter, std::memory_order_release);
        WriteOptions wo;
        wo.sync = rnd.OneIn(100);
        absl::Status s;
        if (rnd.OneIn(10)) {
          WriteBatch batch;
          const std::string v = ValueOf(counter, &rnd);
          batch.Put(absl::StrCat("pair_a", w), v);
          batch.Put(absl::StrCat("pair_b", w), v);
          s = db->Write(wo, &batch);
        } else {
          s = db->Put(wo, KeyOf(w, rnd.Uniform(kKeysPerWriter)),
                      ValueOf(counter, &rnd));
        }
        if (!s.ok()) return fail("write: " + s.ToString());
        writes.fetch_add(1, std::memory_order_relaxed);
        if (w == 0 && counter % 2500 == 0) {
          if (absl::Status f = db->Flush(); !f.ok()) {
            return fail("flush: " + f.ToString());
          }
          flushes.fetch_add(1);
        }
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      Random rnd(2000 + r);
      // The highest counter this reader has seen per key.
      std::map<std::string, uint64_t> seen;
      auto check = [&](const std::string& key, std::string_view value,
                       int writer) {
        const uint64_t c = CounterOf(value);
        uint64_t& last = seen[key];
        if (c < last) {
          fail(absl::StrCat(key, " went back from ", last, " to ", c));
        }
        if (c > started[writer].load(std::memory_order_acquire)) {
          fail(absl::StrCat(key, " has counter ", c, " not yet written"));
        }
        last = c;
      };
      uint64_t reads = 0;
      while (!stop.load(std::memory_order_relaxed) &&
             (reads < ReadsPerReader() || writers_running.load() > 0)) {
        ++reads;
        const uint64_t dice = rnd.Uniform(100);
        if (dice < 80) {
          const int w = static_cast<int>(rnd.Uniform(kWriters));
          const std::string key = KeyOf(w, rnd.Uniform(kKeysPerWriter));
          std::string value;
          absl::Status s = db->Get(ReadOptions(), key, &value);
          if (s.ok()) {
            check(key, value, w);
          } else if (!absl::IsNotFound(s)) {
            return fail("get: " + s.ToString());
          } else if (seen.count(key) > 0) {
            return fail(key + " disappeared");
          }
          gets.fetch_add(1, std::memory_order_relaxed);
        } else if (dice < 90) {
          // A short scan of one writer's range, forward or backward.
          const int w = static_cast<int>(rnd.Uniform(kWriters));
          std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
          const bool forward = rnd.OneIn(2);
          if (forward) {
            it->Seek(KeyOf(w, rnd.Uniform(kKeysPerWriter)));
          } else {
            it->Seek(KeyOf(w, rnd.Uniform(kKeysPerWriter)));
            if (it->Valid()) it->Prev();
          }
          const std::string prefix = absl::StrCat("w", w, "_");
          for (int i = 0; i < 50 && it->Valid(); ++i) {
            const std::string key(it->key());
            if (key.rfind(prefix, 0) != 0) break;
            check(key, it->value(), w);
            if (forward) {
              it->Next();
            } else {
              it->Prev();
            }
          }
          if (!it->status().ok())
            return fail("scan: " + it->status().ToString());
          scans.fetch_add(1, std::memory_order_relaxed);
        } else {
          // Both halves of a pair, read at one snapshot, are equal.
          const int w = static_cast<int>(rnd.Uniform(kWriters));
          const Snapshot* snap = db->GetSnapshot();
          ReadOptions ro;
          ro.snapshot = snap;
          std::string a, b;
          absl::Status sa = db->Get(ro, absl::StrCat("pair_a", w), &a);
          std::this_thread::yield();
          absl::Status sb = db->Get(ro, absl::StrCat("pair_b", w), &b);
          db->ReleaseSnapshot(snap);
          if (sa.ok() != sb.ok() || (sa.ok() && a != b)) {
            return fail(absl::StrCat("pair ", w, " torn: ", sa.ToString(), " ",
                                     sb.ToString()));
          }
          if (sa.ok()) check(absl::StrCat("pair_a", w), a, w);
          pair_checks.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }

  for (std::thread& t : threads) t.join();
  ASSERT_FALSE(failed.load());

  int tables = 0;
  for (int level = 0; level < 7; ++level) {
    tables += std::stoi(
        *db->GetProperty("sift.num-files-at-level" + std::to_string(level)));
  }
  std::printf(
      "%llu writes, %llu gets, %llu scans, %llu snapshot pair checks, "
      "%llu explicit flushes; %d tables at the end\n%s",
      static_cast<unsigned long long>(writes.load()),
      static_cast<unsigned long long>(gets.load()),
      static_cast<unsigned long long>(scans.load()),
      static_cast<unsigned long long>(pair_checks.load()),
      static_cast<unsigned long long>(flushes.load()), tables,
      db->GetProperty("sift.stats")->c_str());
  EXPECT_EQ(writes.load(), kWriters * WritesPerWriter());
  EXPECT_GE(gets.load() + scans.load() + pair_checks.load(),
            kReaders * ReadsPerReader());
  // Each kind of read ran (80/10/10 mix), and so did the background work.
  EXPECT_GT(gets.load(), 0u);
  EXPECT_GT(scans.load(), 0u);
  EXPECT_GT(pair_checks.load(), 0u);
  EXPECT_EQ(flushes.load(), WritesPerWriter() / 2500);
  EXPECT_GT(tables, 0);

  // Everything written is still there, newest value per key, after reopen.
  std::map<std::string, std::string> before;
  {
    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      before[std::string(it->key())] = std::string(it->value());
    }
  }
  opened->reset();
  opened = DB::Open(options, "/concdb");
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::map<std::string, std::string> after;
  std::unique_ptr<Iterator> it = (*opened)->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    after[std::string(it->key())] = std::string(it->value());
  }
  it.reset();
  EXPECT_TRUE(before == after);
}

// Many threads committing sync writes at once: group commit must keep every
// write, in order per thread.
TEST(DBConcurrencyTest, GroupCommitKeepsEveryWrite) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/groupdb");
  ASSERT_TRUE(db.ok()) << db.status();
  constexpr int kThreads = 8;
  const int per_thread = std::getenv("SIFT_SANITIZED") != nullptr ? 300 : 2000;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        WriteOptions wo;
        wo.sync = (i % 3 == 0);
        WriteBatch batch;
        batch.Put(absl::StrCat("t", t, "_", test::NumberKey(i, 6)), "x");
        batch.Put(absl::StrCat("last", t), test::NumberKey(i, 6));
        if (!(*db)->Write(wo, &batch).ok()) errors.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);
  db->reset();
  db = DB::Open(options, "/groupdb");
  ASSERT_TRUE(db.ok()) << db.status();
  for (int t = 0; t < kThreads; ++t) {
    std::string value;
    ASSERT_TRUE(
        (*db)->Get(ReadOptions(), absl::StrCat("last", t), &value).ok());
    EXPECT_EQ(value, test::NumberKey(per_thread - 1, 6));
    for (int i = 0; i < per_thread; i += 97) {
      ASSERT_TRUE((*db)
                      ->Get(ReadOptions(),
                            absl::StrCat("t", t, "_", test::NumberKey(i, 6)),
                            &value)
                      .ok());
    }
  }
}

// An Env whose background work waits until the test lets it run.
class GatedEnv : public EnvWrapper {
 public:
  explicit GatedEnv(Env* target) : EnvWrapper(target) {}
  void Schedule(std::function<void()> work) override {
    MutexLock lock(&mu_);
    if (open_) {
      target()->Schedule(std::move(work));
    } else {
      held_.push_back(std::move(work));
    }
  }
  void Open() {
    MutexLock lock(&mu_);
    open_ = true;
    for (auto& work : held_) target()->Schedule(std::move(work));
    held_.clear();
  }
  size_t held() {
    MutexLock lock(&mu_);
    return held_.size();
  }

 private:
  Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> held_ ABSL_GUARDED_BY(mu_);
};

// The scheduling state of thread `tid` of this process from
// /proc/self/task/<tid>/stat: 'R' running, 'S' sleeping (blocked), ...
char ThreadState(pid_t tid) {
  std::FILE* f =
      std::fopen(absl::StrCat("/proc/self/task/", tid, "/stat").c_str(), "r");
  if (f == nullptr) return '?';
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const std::string_view stat(buf, n);
  // "<tid> (<name>) <state> ...": the name may hold spaces and parentheses.
  const size_t close = stat.rfind(')');
  return close != std::string_view::npos && close + 2 < stat.size()
             ? stat[close + 2]
             : '?';
}

// Writes stop while the previous memtable waits to be flushed, and resume
// once the background thread gets to it. Value sizes make the arithmetic
// exact: with 16 KiB values and a 64 KiB write buffer a memtable takes four
// writes, so with the flush held back the writer completes the first two
// memtables' worth and then blocks (no sampling of elapsed time: the test
// waits for the writer thread to be asleep inside the ninth Put).
TEST(DBConcurrencyTest, WritesStallUntilFlushRuns) {
  std::unique_ptr<Env> mem = test::NewTestEnv();
  GatedEnv env(mem.get());
  Options options;
  options.env = &env;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/stalldb");
  ASSERT_TRUE(db.ok()) << db.status();

  constexpr int kValueSize = 16 << 10;
  constexpr int kPerMemtable = 4;  // the fourth write takes it over 64 KiB
  constexpr int kWrites = 3 * kPerMemtable;
  std::atomic<int> done{0};
  std::atomic<pid_t> writer_tid{0};
  std::thread writer([&] {
    writer_tid.store(::gettid());
    Random rnd(1);
    for (int i = 0; i < kWrites; ++i) {
      ASSERT_TRUE((*db)
                      ->Put(WriteOptions(), test::NumberKey(i),
                            test::RandomString(&rnd, kValueSize))
                      .ok());
      done.store(i + 1);
    }
  });
  // The writer gets stuck: it fills the second memtable and then sleeps
  // waiting for the first one's flush (or, if the stall were broken, it
  // would finish).
  while (writer_tid.load() == 0) std::this_thread::yield();
  while (!(done.load() >= 2 * kPerMemtable &&
           ThreadState(writer_tid.load()) == 'S') &&
         done.load() < kWrites) {
    std::this_thread::yield();
  }
  EXPECT_EQ(done.load(), 2 * kPerMemtable);
  EXPECT_EQ(env.held(), 1u);  // the flush of the first memtable
  EXPECT_EQ(std::stoi(*(*db)->GetProperty("sift.num-files-at-level0")) +
                std::stoi(*(*db)->GetProperty("sift.num-files-at-level1")) +
                std::stoi(*(*db)->GetProperty("sift.num-files-at-level2")),
            0);
  // ...until the background thread may run.
  env.Open();
  writer.join();
  EXPECT_EQ(done.load(), kWrites);
  ASSERT_TRUE((*db)->Flush().ok());
  std::string value;
  EXPECT_TRUE((*db)->Get(ReadOptions(), test::NumberKey(0), &value).ok());

  // The wait is counted where users see it: at least the one above (more if
  // the writer waited again for a later flush), and a memtable switch per
  // full memtable plus the Flush's.
  const std::optional<std::string> stalls =
      (*db)->GetProperty("sift.write-stalls");
  ASSERT_TRUE(stalls.has_value());
  const size_t flush_line = stalls->find("memtable-flush: ");
  ASSERT_NE(flush_line, std::string::npos) << *stalls;
  EXPECT_GE(std::stoi(stalls->substr(flush_line + 16)), 1) << *stalls;
  const size_t switch_line = stalls->find("wal-switch: ");
  ASSERT_NE(switch_line, std::string::npos) << *stalls;
  EXPECT_GE(std::stoi(stalls->substr(switch_line + 12)), 3) << *stalls;
  EXPECT_NE(stalls->find("level0-stop: 0 stalls"), std::string::npos)
      << *stalls;
  EXPECT_NE((*db)->GetProperty("sift.stats")->find("Write stalls since open"),
            std::string::npos);
}

// An Env whose WALs record the thread that closes them.
class LogCloseEnv : public EnvWrapper {
 public:
  explicit LogCloseEnv(Env* target) : EnvWrapper(target) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewLogFile(
      const std::string& fname) override {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        target()->NewLogFile(fname);
    if (!file.ok()) return file;
    MutexLock lock(&mu_);
    logs_.push_back(fname);
    return std::unique_ptr<WritableFile>(
        new File(this, fname, *std::move(file)));
  }

  // The name of the index-th WAL created (0: Open's).
  std::string log(size_t index) {
    MutexLock lock(&mu_);
    return index < logs_.size() ? logs_[index] : std::string();
  }
  // Waits until `fname` is closed; returns the closing thread.
  std::thread::id WaitForClose(const std::string& fname) {
    MutexLock lock(&mu_);
    while (closed_by_.find(fname) == closed_by_.end()) cv_.Wait(&mu_);
    return closed_by_[fname];
  }

 private:
  class File : public WritableFile {
   public:
    File(LogCloseEnv* env, std::string fname,
         std::unique_ptr<WritableFile> base)
        : env_(env), fname_(std::move(fname)), base_(std::move(base)) {}
    ~File() override {
      if (!closed_) Close().IgnoreError();
    }
    absl::Status Append(std::string_view data) override {
      return base_->Append(data);
    }
    absl::Status Flush() override { return base_->Flush(); }
    absl::Status Sync() override { return base_->Sync(); }
    absl::Status Close() override {
      closed_ = true;
      absl::Status s = base_->Close();
      MutexLock lock(&env_->mu_);
      env_->closed_by_.emplace(fname_, std::this_thread::get_id());
      env_->cv_.SignalAll();
      return s;
    }

   private:
    LogCloseEnv* const env_;
    const std::string fname_;
    const std::unique_ptr<WritableFile> base_;
    bool closed_ = false;
  };

  Mutex mu_;
  CondVar cv_;
  std::vector<std::string> logs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::thread::id> closed_by_ ABSL_GUARDED_BY(mu_);
};

// A memtable switch hands the WAL before the previous one (its memtable
// already flushed) to the background thread to close: closing a WAL written
// through a mapping can take tens of milliseconds, which every queued writer
// would wait out. With 16 KiB values and a 64 KiB write buffer, the fourth
// write of each memtable fills it; the second switch retires Open's WAL.
TEST(DBConcurrencyTest, SwitchedOutWalsAreClosedOffTheWritersThread) {
  std::unique_ptr<Env> mem = test::NewTestEnv();
  LogCloseEnv env(mem.get());
  Options options;
  options.env = &env;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/closedb");
  ASSERT_TRUE(db.ok()) << db.status();

  Random rnd(1);
  for (int i = 0; i < 4 * 4; ++i) {
    ASSERT_TRUE((*db)
                    ->Put(WriteOptions(), test::NumberKey(i),
                          test::RandomString(&rnd, 16 << 10))
                    .ok());
  }
  const std::string first = env.log(0);
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(env.log(2).empty());  // two switches at least
  EXPECT_NE(env.WaitForClose(first), std::this_thread::get_id());

  db->reset();
  ASSERT_TRUE((db = DB::Open(options, "/closedb")).ok()) << db.status();
  std::string value;
  for (int i = 0; i < 4 * 4; ++i) {
    EXPECT_TRUE((*db)->Get(ReadOptions(), test::NumberKey(i), &value).ok());
  }
}

// An Env whose WAL Appends record the thread making them; while armed, the
// first WAL Append is held until Release (WaitUntilHeld returns once it is).
class WalAppendEnv : public EnvWrapper {
 public:
  explicit WalAppendEnv(Env* target) : EnvWrapper(target) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewLogFile(
      const std::string& fname) override {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        target()->NewLogFile(fname);
    if (!file.ok()) return file;
    return std::unique_ptr<WritableFile>(new File(this, *std::move(file)));
  }

  // Holds the next WAL Append; forgets the appends recorded so far.
  void Arm() {
    MutexLock lock(&mu_);
    armed_ = true;
    appenders_.clear();
  }
  void WaitUntilHeld() {
    MutexLock lock(&mu_);
    while (!held_) cv_.Wait(&mu_);
  }
  void Release() {
    MutexLock lock(&mu_);
    armed_ = false;
    cv_.SignalAll();
  }
  // The thread of each WAL Append since Arm, in order.
  std::vector<std::thread::id> appenders() {
    MutexLock lock(&mu_);
    return appenders_;
  }

 private:
  class File : public WritableFile {
   public:
    File(WalAppendEnv* env, std::unique_ptr<WritableFile> base)
        : env_(env), base_(std::move(base)) {}
    absl::Status Append(std::string_view data) override {
      {
        MutexLock lock(&env_->mu_);
        env_->appenders_.push_back(std::this_thread::get_id());
        if (env_->armed_ && !env_->held_) {
          env_->held_ = true;
          env_->cv_.SignalAll();
          while (env_->armed_) env_->cv_.Wait(&env_->mu_);
        }
      }
      return base_->Append(data);
    }
    absl::Status Flush() override { return base_->Flush(); }
    absl::Status Sync() override { return base_->Sync(); }
    absl::Status Close() override { return base_->Close(); }

   private:
    WalAppendEnv* const env_;
    const std::unique_ptr<WritableFile> base_;
  };

  Mutex mu_;
  CondVar cv_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread::id> appenders_ ABSL_GUARDED_BY(mu_);
};

// A writer that queues while the front writer appends to the WAL is
// committed by the front writer's thread before that thread returns: the
// queue does not wait for the queued writer to wake up and lead, which on a
// busy machine can take a scheduler tick. The queued writer is seen asleep
// in the queue before the front writer may go on, so the order is fixed.
TEST(DBConcurrencyTest, FrontWriterCommitsTheWritersQueuedBehindIt) {
  std::unique_ptr<Env> mem = test::NewTestEnv();
  WalAppendEnv env(mem.get());
  Options options;
  options.env = &env;
  options.create_if_missing = true;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/frontdb");
  ASSERT_TRUE(db.ok()) << db.status();

  env.Arm();
  std::thread::id front_id;
  std::thread front([&] {
    front_id = std::this_thread::get_id();
    EXPECT_TRUE((*db)->Put(WriteOptions(), "a", "1").ok());
  });
  env.WaitUntilHeld();
  std::atomic<pid_t> queued_tid{0};
  std::atomic<bool> queued_done{false};
  std::thread queued([&] {
    queued_tid.store(::gettid());
    EXPECT_TRUE((*db)->Put(WriteOptions(), "b", "2").ok());
    queued_done.store(true);
  });
  while (queued_tid.load() == 0) std::this_thread::yield();
  // Nothing else blocks in Put while the front writer appends without the
  // DB mutex: asleep means waiting in the queue.
  while (ThreadState(queued_tid.load()) != 'S') std::this_thread::yield();
  EXPECT_FALSE(queued_done.load());
  env.Release();
  front.join();
  queued.join();

  const std::vector<std::thread::id> appenders = env.appenders();
  ASSERT_GE(appenders.size(), 2u);  // a record per group at least
  for (const std::thread::id& id : appenders) EXPECT_EQ(id, front_id);
  std::string value;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "a", &value).ok());
  EXPECT_EQ(value, "1");
  ASSERT_TRUE((*db)->Get(ReadOptions(), "b", &value).ok());
  EXPECT_EQ(value, "2");
}

// An Env that, while armed, holds every table-file Append until Release
// (after telling WaitUntilHeld that one is held), and fails every WAL Append
// while fail_log is set.
class CompactionHoldEnv : public EnvWrapper {
 public:
  explicit CompactionHoldEnv(Env* target) : EnvWrapper(target) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) override {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        target()->NewWritableFile(fname);
    if (!file.ok()) return file;
    const bool table = fname.ends_with(".sst");
    const bool log = fname.ends_with(".log");
    return std::unique_ptr<WritableFile>(
        new File(this, *std::move(file), table, log));
  }

  void Arm() {
    MutexLock lock(&mu_);
    armed_ = true;
  }
  void WaitUntilHeld() {
    MutexLock lock(&mu_);
    while (!held_) cv_.Wait(&mu_);
  }
  void Release() {
    MutexLock lock(&mu_);
    armed_ = false;
    cv_.SignalAll();
  }
  std::atomic<bool> fail_log{false};

 private:
  class File : public WritableFile {
   public:
    File(CompactionHoldEnv* env, std::unique_ptr<WritableFile> base, bool table,
         bool log)
        : env_(env), base_(std::move(base)), table_(table), log_(log) {}
    absl::Status Append(std::string_view data) override {
      if (log_ && env_->fail_log.load()) {
        return absl::UnavailableError("injected WAL write failure");
      }
      if (table_) {
        MutexLock lock(&env_->mu_);
        if (env_->armed_) {
          env_->held_ = true;
          env_->cv_.SignalAll();
          while (env_->armed_) env_->cv_.Wait(&env_->mu_);
        }
      }
      return base_->Append(data);
    }
    absl::Status Flush() override { return base_->Flush(); }
    absl::Status Sync() override { return base_->Sync(); }
    absl::Status Close() override { return base_->Close(); }

   private:
    CompactionHoldEnv* const env_;
    const std::unique_ptr<WritableFile> base_;
    const bool table_, log_;
  };

  Mutex mu_;
  CondVar cv_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
};

// A CompactRange whose compaction is still running when a background error
// (here a failed WAL write) ends the wait must not return before the
// background step is through with the request it keeps on its stack: it
// used to, and the step then wrote into the returned call's frame (found by
// sift_stress in power-loss rounds).
TEST(DBConcurrencyTest, CompactRangeOutlivesItsStepAfterBackgroundError) {
  std::unique_ptr<Env> mem = test::NewTestEnv();
  CompactionHoldEnv env(mem.get());
  Options options;
  options.env = &env;
  options.create_if_missing = true;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/hold");
  ASSERT_TRUE(db.ok()) << db.status();
  for (int table = 0; table < 3; ++table) {
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), test::NumberKey(i), "v").ok());
    }
    ASSERT_TRUE((*db)->Flush().ok());
  }
  env.Arm();
  std::atomic<bool> returned{false};
  absl::Status compact_status;
  std::thread compactor([&] {
    compact_status = (*db)->CompactRange(nullptr, nullptr);
    returned = true;
  });
  env.WaitUntilHeld();  // the compaction's output is being written
  env.fail_log = true;
  EXPECT_FALSE((*db)->Put(WriteOptions(), "x", "y").ok());
  // The error wakes the compactor; it must keep waiting for the step. (A
  // call that wrongly returns does so within microseconds.)
  for (int i = 0; i < 50 && !returned; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(returned) << "CompactRange returned while its compaction ran";
  env.Release();
  compactor.join();
  EXPECT_FALSE(compact_status.ok());
  env.fail_log = false;
  db->reset();
}

}  // namespace
}  // namespace sift
