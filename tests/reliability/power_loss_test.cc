// Simulated power loss: replay a scripted workload (writes with and without
// sync, flushes, a compaction and a reopen, which starts a new MANIFEST) on a
// FaultInjectionEnv over a MemEnv, and for every n stop the machine just
// before the n-th file operation: from that operation on, every file
// operation fails, then SimulateCrash throws away all data and directory
// entries that were not synced. The database must open again, hold every
// write that was durable by contract (acknowledged sync writes, and all
// writes before a successful Flush, CompactRange or Open), and hold exactly
// the first k writes for some k: a prefix of the write order.
//
// For a sample of the crash points the machine also dies in the middle of
// the recovery that follows, at every file operation of it in turn, and the
// database is opened once more.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/reliability/recording_env.h"
#include "tests/reliability/reliability_util.h"
#include "tests/reliability/workload.h"
#include "util/fault_env.h"

namespace sift::reliability {
namespace {

using OpKind = FaultInjectionEnv::OpKind;
constexpr char kDb[] = "/powerloss";
// Flushes, a compaction into several tables, a reopen (new MANIFEST),
// ingestions (into level 0, below it, and one over keys in the memtable,
// which flushes it first; placed so that level 0 never reaches the
// compaction trigger, which would start background work on its own), and
// writes left in the WAL at the end.
constexpr char kScript[] =
    "w60 g10 f w60 s f i w60 g10 f c i w40 i s r w60 f w30 g5";

// What a run of the workload got done before the machine stopped.
struct RunResult {
  size_t attempted = 0;  // writes handed to the DB, the failed one included
  size_t durable = 0;    // the first `durable` writes must survive
};

// Run `steps` until the first failure. Reads are checked against the writes
// acknowledged so far while the machine is alive.
RunResult RunUntilFailure(Env* env, const std::vector<WorkloadStep>& steps,
                          std::unique_ptr<DB>* db) {
  RunResult r;
  const Options options = WorkloadOptions(env);
  absl::StatusOr<std::unique_ptr<DB>> opened = DB::Open(options, kDb);
  if (!opened.ok()) return r;
  *db = *std::move(opened);
  KvMap model;
  for (const WorkloadStep& step : steps) {
    absl::Status s;
    switch (step.kind) {
      case WorkloadStep::Kind::kWrite: {
        ++r.attempted;
        WriteOptions wo;
        wo.sync = step.write.sync;
        WriteBatch batch;
        for (const JournalUpdate& u : step.write.updates) {
          if (u.is_delete) {
            batch.Delete(u.key);
          } else {
            batch.Put(u.key, u.value);
          }
        }
        s = (*db)->Write(wo, &batch);
        if (s.ok()) {
          ApplyOp(step.write, &model);
          if (wo.sync) r.durable = r.attempted;
        }
        break;
      }
      case WorkloadStep::Kind::kIngest:
        ++r.attempted;
        s = RunIngestStep(db->get(), env, step);
        if (s.ok()) {
          ApplyOp(step.write, &model);
          r.durable = r.attempted;  // with every write before it
        }
        break;
      case WorkloadStep::Kind::kGet: {
        std::string value;
        s = (*db)->Get(ReadOptions(), step.key, &value);
        auto it = model.find(step.key);
        if (s.ok()) {
          EXPECT_TRUE(it != model.end() && it->second == value) << step.key;
        } else if (absl::IsNotFound(s)) {
          EXPECT_TRUE(it == model.end()) << step.key;
          s = absl::OkStatus();
        }
        break;
      }
      case WorkloadStep::Kind::kScan: {
        absl::StatusOr<KvMap> all = ReadAll(db->get());
        s = all.status();
        if (s.ok()) {
          EXPECT_EQ(*all, model);
        }
        break;
      }
      case WorkloadStep::Kind::kFlush:
        s = (*db)->Flush();
        if (s.ok()) r.durable = r.attempted;
        break;
      case WorkloadStep::Kind::kCompact:
        s = (*db)->CompactRange(nullptr, nullptr);
        if (s.ok()) r.durable = r.attempted;
        break;
      case WorkloadStep::Kind::kReopen:
        db->reset();
        opened = DB::Open(options, kDb);
        s = opened.status();
        if (s.ok()) {
          *db = *std::move(opened);
          r.durable = r.attempted;
        }
        break;
    }
    if (!s.ok()) break;
  }
  return r;
}

// The machine dies: unsynced data and directory entries are lost, and the
// DB object (whose file operations now fail) goes away.
void Crash(FaultInjectionEnv* env, std::unique_ptr<DB>* db) {
  ASSERT_TRUE(env->SimulateCrash().ok());
  db->reset();
  // Whatever the dying DB did after the first call is lost too.
  ASSERT_TRUE(env->SimulateCrash().ok());
  env->ClearFaults();
}

class PowerLossTest : public testing::Test {
 protected:
  PowerLossTest()
      : steps_(MakeWorkload(kScript, 77)),
        fingerprints_(PrefixFingerprints(steps_)) {}

  // Open the crashed database on `env` and check it against `r`.
  void Verify(Env* env, const RunResult& r, const std::string& where) {
    absl::StatusOr<std::unique_ptr<DB>> db =
        DB::Open(WorkloadOptions(env), kDb);
    ASSERT_TRUE(db.ok()) << where
                         << ": a crashed database must open: " << db.status();
    absl::StatusOr<KvMap> actual = ReadAll(db->get());
    ASSERT_TRUE(actual.ok()) << where << ": " << actual.status();
    const uint64_t fp = Fingerprint(*actual);
    for (size_t k = r.durable; k <= r.attempted; ++k) {
      if (fingerprints_[k] == fp && PrefixState(steps_, k) == *actual) {
        return;
      }
    }
    ADD_FAILURE() << where << ": the state is not the first k writes for any k"
                  << " in [" << r.durable << ", " << r.attempted
                  << "]; against the durable prefix: "
                  << DescribeDiff(PrefixState(steps_, r.durable), *actual);
  }

  const std::vector<WorkloadStep> steps_;
  const std::vector<uint64_t> fingerprints_;
};

TEST_F(PowerLossTest, EveryCrashPointKeepsDurableWritesAndAPrefix) {
  // Count the file operations of the whole workload (twice: the count must
  // not depend on thread timing, or the enumeration would not be exact).
  uint64_t total_ops = 0;
  for (int i = 0; i < 2; ++i) {
    std::unique_ptr<Env> mem = NewMemEnv(Env::Default());
    FaultInjectionEnv env(mem.get());
    RecordingEnv recorder(&env);
    std::unique_ptr<DB> db;
    const RunResult r = RunUntilFailure(&recorder, steps_, &db);
    ASSERT_EQ(r.attempted, fingerprints_.size() - 1);
    // The workload flushes, compacts (tables below level 0) and switches to a
    // new MANIFEST.
    std::set<std::string> manifests;
    std::set<std::string> tables;
    for (const std::string& f : recorder.appends()) {
      if (absl::StrContains(f, "/MANIFEST-")) manifests.insert(f);
      if (absl::EndsWith(f, ".sst")) tables.insert(f);
    }
    EXPECT_GE(manifests.size(), 2u);
    EXPECT_GE(tables.size(), 6u);
    int deeper = 0;
    for (int level = 1; level < 7; ++level) {
      deeper += std::atoi(
          db->GetProperty(absl::StrCat("sift.num-files-at-level", level))
              .value_or("0")
              .c_str());
    }
    EXPECT_GT(deeper, 0) << "no compaction output below level 0";
    db.reset();
    const uint64_t ops = env.OpCount(OpKind::kAny);
    if (i == 1) {
      ASSERT_EQ(ops, total_ops) << "the workload is not repeatable";
    }
    total_ops = ops;
  }

  // Every crash point; every 5th also gets crashes at each operation of the
  // recovery that follows.
  const uint64_t recovery_stride = 5;
  uint64_t crash_points = 0;
  uint64_t recovery_crash_points = 0;
  uint64_t durable_sum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t n = 1; n <= total_ops + 1; ++n) {
    std::unique_ptr<Env> mem = NewMemEnv(Env::Default());
    FaultInjectionEnv env(mem.get());
    env.FailAfter(OpKind::kAny, static_cast<int>(n),
                  absl::UnavailableError("power lost"), /*persistent=*/true);
    std::unique_ptr<DB> db;
    const RunResult r = RunUntilFailure(&env, steps_, &db);
    Crash(&env, &db);
    if (HasFatalFailure()) return;
    ++crash_points;
    durable_sum += r.durable;

    if (n % recovery_stride == 0) {
      // Crash again inside the recovery, at each of its file operations.
      absl::StatusOr<std::map<std::string, std::string>> files =
          ReadEnvDir(mem.get(), kDb);
      ASSERT_TRUE(files.ok()) << files.status();
      for (int m = 1;; ++m) {
        std::unique_ptr<Env> mem2 = NewMemEnv(Env::Default());
        ASSERT_TRUE(WriteEnvDir(mem2.get(), kDb, *files).ok());
        FaultInjectionEnv env2(mem2.get());
        env2.FailAfter(OpKind::kAny, m, absl::UnavailableError("power lost"),
                       /*persistent=*/true);
        absl::StatusOr<std::unique_ptr<DB>> opened =
            DB::Open(WorkloadOptions(&env2), kDb);
        const bool fired =
            env2.OpCount(OpKind::kAny) >= static_cast<uint64_t>(m);
        std::unique_ptr<DB> db2;
        if (opened.ok()) db2 = *std::move(opened);
        Crash(&env2, &db2);
        if (HasFatalFailure()) return;
        Verify(&env2, r,
               absl::StrCat("crash point ", n, ", then recovery crash ", m));
        if (HasFailure()) return;
        ++recovery_crash_points;
        if (!fired) break;  // the recovery finished before op m
      }
    }

    Verify(&env, r, absl::StrCat("crash point ", n, " of ", total_ops));
    if (HasFailure()) return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "[ power-loss ] %llu file operations in the workload, %llu crash points "
      "checked, %llu crash points inside recovery, %.1f durable writes per "
      "crash point on average, %.1f s\n",
      static_cast<unsigned long long>(total_ops),
      static_cast<unsigned long long>(crash_points),
      static_cast<unsigned long long>(recovery_crash_points),
      crash_points == 0 ? 0.0 : static_cast<double>(durable_sum) / crash_points,
      seconds);
  EXPECT_GT(crash_points, 100u);
  EXPECT_GT(recovery_crash_points, 10u);
}

}  // namespace
}  // namespace sift::reliability
