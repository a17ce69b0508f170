// I/O errors: replay a scripted workload with the n-th write (Append), sync,
// read, rename or file creation failing, once or from then on, for every n
// the workload reaches, and with "no space left on device" at every write
// into a MANIFEST. While the fault is armed, the database must report it
// (some call returns an error) unless it hit only the informational LOG, and
// must not acknowledge a write it did not take: after the fault is cleared
// and the database reopened (no crash: what the operating system was handed
// stays), it opens and holds every acknowledged write. A write that failed
// may be there or not. Reads in between return a value the key may hold.

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
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
constexpr char kDb[] = "/ioerrordb";
constexpr char kScript[] = "w40 g5 f w40 s f w30 c w20 r w30 g5 s";
constexpr char kProbeKey[] = "zz-probe";

// The values a key may hold: the last acknowledged one (nullopt: absent)
// and those of failed writes after it, which may or may not have landed.
class Allowed {
 public:
  void Acked(std::optional<std::string> v) {
    acked_ = std::move(v);
    maybe_.clear();
  }
  void Failed(std::optional<std::string> v) { maybe_.insert(std::move(v)); }
  bool Allows(const std::optional<std::string>& v) const {
    return v == acked_ || maybe_.count(v) > 0;
  }
  std::string Describe() const {
    std::string out = absl::StrCat("acked ", acked_.value_or("<absent>"));
    for (const auto& m : maybe_) {
      absl::StrAppend(&out, ", maybe ", m.value_or("<absent>"));
    }
    return out;
  }

 private:
  std::optional<std::string> acked_;
  std::set<std::optional<std::string>> maybe_;
};

struct Fault {
  OpKind kind;
  int n;
  bool persistent;
  absl::Status error;
  std::string Name() const {
    static constexpr const char* kNames[] = {
        "write", "sync", "read", "rename", "create", "remove", "any"};
    return absl::StrCat(kNames[static_cast<int>(kind)], " #", n,
                        persistent ? " (persistent)" : " (once)", " ",
                        error.message());
  }
};

bool IsInfoLog(const std::string& fname) {
  return absl::EndsWith(fname, "/LOG") || absl::EndsWith(fname, "/LOG.old");
}

class IOErrorTest : public testing::Test {
 protected:
  IOErrorTest() : steps_(MakeWorkload(kScript, 91)) {}

  // Run the workload on `env` (the top of the stack, possibly failing),
  // then a sync write and a flush as probes for a pending error. Records
  // what each key may hold in *keys; returns whether any call failed.
  bool RunWorkload(RecordingEnv* env, std::map<std::string, Allowed>* keys) {
    const Options options = WorkloadOptions(env);
    bool reported = false;
    std::unique_ptr<DB> db;
    // Closing cannot report an error (a destructor); the engine logs it.
    auto close = [&]() {
      env->SetPhase("close");
      db.reset();
      env->SetPhase("");
    };
    auto open = [&]() {
      close();
      absl::StatusOr<std::unique_ptr<DB>> opened = DB::Open(options, kDb);
      if (opened.ok()) {
        db = *std::move(opened);
      } else {
        reported = true;
      }
    };
    auto check_read = [&](const std::string& key,
                          const std::optional<std::string>& v) {
      const Allowed& a = (*keys)[key];
      EXPECT_TRUE(a.Allows(v)) << key << " read as " << v.value_or("<absent>")
                               << "; may hold: " << a.Describe();
    };
    open();
    for (const WorkloadStep& step : steps_) {
      if (db == nullptr && step.kind != WorkloadStep::Kind::kReopen) open();
      if (db == nullptr) continue;  // not handed to the DB at all
      absl::Status s;
      switch (step.kind) {
        case WorkloadStep::Kind::kWrite:
        case WorkloadStep::Kind::kIngest: {
          if (step.kind == WorkloadStep::Kind::kIngest) {
            s = RunIngestStep(db.get(), env, step);
          } else {
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
            s = db->Write(wo, &batch);
          }
          for (const JournalUpdate& u : step.write.updates) {
            std::optional<std::string> v;
            if (!u.is_delete) v = u.value;
            if (s.ok()) {
              (*keys)[u.key].Acked(v);
            } else {
              (*keys)[u.key].Failed(v);
            }
          }
          break;
        }
        case WorkloadStep::Kind::kGet: {
          std::string value;
          s = db->Get(ReadOptions(), step.key, &value);
          if (s.ok()) check_read(step.key, value);
          if (absl::IsNotFound(s)) {
            check_read(step.key, std::nullopt);
            s = absl::OkStatus();
          }
          break;
        }
        case WorkloadStep::Kind::kScan: {
          absl::StatusOr<KvMap> all = ReadAll(db.get());
          s = all.status();
          if (s.ok()) {
            for (const auto& [k, a] : *keys) {
              auto it = all->find(k);
              check_read(k, it == all->end() ? std::nullopt
                                             : std::optional(it->second));
            }
            for (const auto& [k, v] : *all) {
              EXPECT_TRUE(keys->count(k) > 0) << "never written: " << k;
            }
          }
          break;
        }
        case WorkloadStep::Kind::kFlush:
          s = db->Flush();
          break;
        case WorkloadStep::Kind::kCompact:
          s = db->CompactRange(nullptr, nullptr);
          break;
        case WorkloadStep::Kind::kReopen:
          open();
          break;
      }
      if (!s.ok()) reported = true;
    }
    if (db == nullptr) open();
    if (db != nullptr) {
      WriteOptions sync;
      sync.sync = true;
      absl::Status s = db->Put(sync, kProbeKey, "probe");
      if (s.ok()) {
        (*keys)[kProbeKey].Acked("probe");
      } else {
        (*keys)[kProbeKey].Failed("probe");
        reported = true;
      }
      if (!db->Flush().ok()) reported = true;
    }
    close();
    return reported;
  }

  // One fault case; false if the fault never fired.
  bool RunCase(const Fault& fault) {
    std::unique_ptr<Env> mem = NewMemEnv(Env::Default());
    FaultInjectionEnv faulty(mem.get());
    RecordingEnv env(&faulty);
    faulty.FailAfter(fault.kind, fault.n, fault.error, fault.persistent);
    std::map<std::string, Allowed> keys;
    const bool reported = RunWorkload(&env, &keys);
    const bool fired =
        faulty.OpCount(fault.kind) >= static_cast<uint64_t>(fault.n);
    faulty.ClearFaults();

    bool must_report = false;
    std::string failed_files;
    for (const RecordingEnv::Failure& f : env.failures()) {
      if (!IsInfoLog(f.fname) && f.phase != "close") must_report = true;
      absl::StrAppend(&failed_files, " ", f.op, ":", f.fname,
                      f.phase.empty() ? "" : " in ", f.phase);
    }
    EXPECT_TRUE(reported || !must_report)
        << fault.Name() << ": failed file operations (" << failed_files
        << ") but every DB call succeeded";

    absl::StatusOr<std::unique_ptr<DB>> db =
        DB::Open(WorkloadOptions(&env), kDb);
    EXPECT_TRUE(db.ok()) << fault.Name()
                         << ": open after the fault cleared: " << db.status();
    if (!db.ok()) return fired;
    absl::StatusOr<KvMap> all = ReadAll(db->get());
    EXPECT_TRUE(all.ok()) << fault.Name() << ": " << all.status();
    if (!all.ok()) return fired;
    for (const auto& [k, a] : keys) {
      auto it = all->find(k);
      const std::optional<std::string> v =
          it == all->end() ? std::nullopt : std::optional(it->second);
      EXPECT_TRUE(a.Allows(v))
          << fault.Name() << ": after reopen " << k << " holds "
          << v.value_or("<absent>") << "; may hold: " << a.Describe();
      std::string value;
      absl::Status s = (*db)->Get(ReadOptions(), k, &value);
      EXPECT_EQ(s.ok() ? std::optional(value) : std::nullopt, v)
          << fault.Name() << ": Get and scan disagree on " << k << ": " << s;
    }
    for (const auto& [k, v] : *all) {
      EXPECT_TRUE(keys.count(k) > 0)
          << fault.Name() << ": never written: " << k;
    }
    return fired;
  }

  const std::vector<WorkloadStep> steps_;
};

TEST_F(IOErrorTest, EveryNthOperationFailingOnceOrForGood) {
  // A run without faults: how many operations of each kind there are, and
  // which writes go to a MANIFEST.
  std::unique_ptr<Env> mem = NewMemEnv(Env::Default());
  FaultInjectionEnv counter(mem.get());
  RecordingEnv recorder(&counter);
  std::map<std::string, Allowed> keys;
  ASSERT_FALSE(RunWorkload(&recorder, &keys));
  ASSERT_TRUE(recorder.failures().empty());
  std::vector<int> manifest_writes;
  const std::vector<std::string> appends = recorder.appends();
  for (size_t i = 0; i < appends.size(); ++i) {
    if (absl::StrContains(appends[i], "/MANIFEST-")) {
      manifest_writes.push_back(static_cast<int>(i) + 1);
    }
  }
  ASSERT_GE(manifest_writes.size(), 4u);

  std::vector<Fault> faults;
  const absl::Status io_error = absl::InternalError("injected I/O error");
  for (OpKind kind : {OpKind::kWrite, OpKind::kSync, OpKind::kRead,
                      OpKind::kRename, OpKind::kCreate}) {
    const int count = static_cast<int>(counter.OpCount(kind));
    for (int n = 1; n <= count; ++n) {
      faults.push_back({kind, n, false, io_error});
      faults.push_back({kind, n, true, io_error});
    }
  }
  for (int n : manifest_writes) {
    faults.push_back(
        {OpKind::kWrite, n, false, FaultInjectionEnv::NoSpaceError()});
    faults.push_back(
        {OpKind::kWrite, n, true, FaultInjectionEnv::NoSpaceError()});
  }

  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, int> fired_by_kind;
  int fired = 0;
  for (const Fault& fault : faults) {
    if (RunCase(fault)) {
      ++fired;
      ++fired_by_kind[fault.Name().substr(0, fault.Name().find(' '))];
    }
    if (HasFailure()) return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::string per_kind;
  for (const auto& [kind, n] : fired_by_kind) {
    absl::StrAppend(&per_kind, " ", kind, "=", n);
  }
  std::printf(
      "[ io-errors ] %zu fault cases (%d fired:%s), of which %zu no-space "
      "errors at MANIFEST writes; workload: %llu writes, %llu syncs, %llu "
      "reads, %llu renames, %llu creates; %.1f s\n",
      faults.size(), fired, per_kind.c_str(), 2 * manifest_writes.size(),
      static_cast<unsigned long long>(counter.OpCount(OpKind::kWrite)),
      static_cast<unsigned long long>(counter.OpCount(OpKind::kSync)),
      static_cast<unsigned long long>(counter.OpCount(OpKind::kRead)),
      static_cast<unsigned long long>(counter.OpCount(OpKind::kRename)),
      static_cast<unsigned long long>(counter.OpCount(OpKind::kCreate)),
      seconds);
  // Every armed fault is reached by the same workload (it is repeatable).
  EXPECT_EQ(fired, static_cast<int>(faults.size()));
}

}  // namespace
}  // namespace sift::reliability
