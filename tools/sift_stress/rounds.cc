#include "tools/sift_stress/rounds.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tools/sift_stress/key_value.h"
#include "tools/sift_stress/workload.h"
#include "util/fault_env.h"

namespace sift::stress {
namespace {

// Everything a round does that is not interleaving, from its seed.
struct RoundPlan {
  CrashKind kind = CrashKind::kKill;
  DrawnOptions run;     // the workload runs with these
  DrawnOptions reopen;  // the check after the crash opens with these
  OpMix mix;
  uint64_t crash_after_ms = 0;
  // Power rounds: if not 0, the power fails again at this file operation of
  // the recovery that follows the first cut.
  uint64_t recovery_crash_at = 0;
};

RoundPlan PlanRound(const RunConfig& config, uint64_t seed) {
  RoundPlan plan;
  plan.kind = CrashKindOf(seed);
  Rng run_rng(SubSeed(seed, 1));
  plan.run = DrawOptions(&run_rng, config.caps);
  Rng reopen_rng(SubSeed(seed, 2));
  plan.reopen = DrawOptions(&reopen_rng, config.caps);
  Rng mix_rng(SubSeed(seed, 3));
  plan.mix = DrawOpMix(&mix_rng, config.num_keys);
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    if ((config.disabled_ops >> i) & 1) {
      plan.mix.weight[i] = 0;
      absl::StrAppend(&plan.mix.text, " -", OpName(static_cast<Op>(i)));
    }
  }
  Rng time_rng(SubSeed(seed, 4));
  // One kill in six lands early, often while the victim is still recovering.
  plan.crash_after_ms = plan.kind == CrashKind::kKill && time_rng.OneIn(6)
                            ? time_rng.Range(0, 150)
                            : time_rng.Range(300, 2500);
  if (plan.kind == CrashKind::kPowerLoss && time_rng.OneIn(3)) {
    plan.recovery_crash_at = time_rng.Range(1, 40);
  }
  return plan;
}

void SleepMs(uint64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Start the victim of a kill round: this program with --child.
pid_t SpawnChild(const RunConfig& config, uint64_t seed) {
  std::vector<std::string> args = {config.self_exe,
                                   "--child",
                                   "--db",
                                   config.dir,
                                   "--child-seed",
                                   std::to_string(seed),
                                   "--threads",
                                   std::to_string(config.threads),
                                   "--keys",
                                   std::to_string(config.num_keys),
                                   "--direct-reads",
                                   config.caps.direct_reads ? "1" : "0",
                                   "--disabled-mask",
                                   std::to_string(config.disabled_ops)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // exec at once: the parent may have threads (an Env's background
    // thread, the watchdog), which a forked child would not have.
    ::execv(config.self_exe.c_str(), argv.data());
    std::_Exit(127);
  }
  return pid;
}

// How a child ended, for a report: an exit status, or the signal (a crash
// of the engine in the victim shows as SIGSEGV, SIGABRT, ...).
std::string DescribeExit(int status) {
  if (WIFEXITED(status))
    return absl::StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                        ::strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("wait status ", status);
}

// Run the workload in a child and SIGKILL it at the planned moment.
void RunKill(const RunConfig& config, uint64_t seed, const RoundPlan& plan,
             Reporter* reporter) {
  const pid_t pid = SpawnChild(config, seed);
  if (pid < 0) {
    reporter->Error("fork", absl::InternalError("fork failed"));
    return;
  }
  // A victim that exits on its own found a failure (status 3, already
  // printed) or could not run.
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(plan.crash_after_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      reporter->Error("kill round", absl::InternalError(absl::StrCat(
                                        "the victim ended before the kill: ",
                                        DescribeExit(status))));
      return;
    }
    SleepMs(std::min<uint64_t>(5, plan.crash_after_ms));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    reporter->Error("kill round", absl::InternalError(absl::StrCat(
                                      "the victim ended before the kill: ",
                                      DescribeExit(status))));
  }
}

// Run the workload here on a FaultInjectionEnv and cut the power.
void RunPowerLoss(const RunConfig& config, uint64_t seed, const RoundPlan& plan,
                  ExpectedState* state, Reporter* reporter) {
  FaultInjectionEnv env(Env::Default());
  Options options = plan.run.options;
  options.env = &env;
  auto db = DB::Open(options, config.db_dir());
  if (!db.ok()) {
    reporter->Error("open before the power cut", db.status());
    return;
  }
  Workload w;
  w.db = db->get();
  w.env = &env;
  w.drawn = &plan.run;
  w.state = state;
  w.reporter = reporter;
  w.mix = plan.mix;
  w.seed = seed;
  w.scratch_dir = config.scratch_dir();
  std::vector<std::thread> threads;
  for (int t = 0; t < config.threads; ++t) {
    threads.emplace_back(RunWorker, &w, t);
  }
  for (uint64_t ms = 0; ms < plan.crash_after_ms && !reporter->failed();
       ms += 5) {
    SleepMs(5);
  }
  // The machine stops: from now on every file operation fails, and what
  // was not synced is gone.
  w.crashed = true;
  env.FailAfter(FaultInjectionEnv::OpKind::kAny, 1,
                absl::UnavailableError("power cut"), /*persistent=*/true);
  absl::Status s = env.SimulateCrash();
  w.stop = true;
  for (std::thread& t : threads) t.join();
  db->reset();
  env.ClearFaults();
  // Once more: the dying database may have created files after the cut.
  if (s.ok()) s = env.SimulateCrash();
  if (!s.ok()) reporter->Error("simulate crash", s);
}

// The power fails again during the recovery: at the n-th file operation of
// an Open with the reopen options (or later, in its background work).
// Whether that Open succeeds does not matter; the next one must.
void CrashDuringRecovery(const RunConfig& config, const RoundPlan& plan,
                         Reporter* reporter) {
  FaultInjectionEnv env(Env::Default());
  Options options = plan.reopen.options;
  options.env = &env;
  env.FailAfter(FaultInjectionEnv::OpKind::kAny,
                static_cast<int>(plan.recovery_crash_at),
                absl::UnavailableError("power cut during recovery"),
                /*persistent=*/true);
  {
    auto db = DB::Open(options, config.db_dir());
    absl::Status s = env.SimulateCrash();
    if (!s.ok()) reporter->Error("simulate crash during recovery", s);
  }
  env.ClearFaults();
  absl::Status s = env.SimulateCrash();
  if (!s.ok()) reporter->Error("simulate crash during recovery", s);
}

// --plant torn_batch: a batch that committed with two keys put at their
// batch versions; the second goes back one version, as if its part of the
// batch were lost. Returns false if no batch suits it yet.
bool PlantTornBatch(DB* db, const ExpectedState& state) {
  for (const std::vector<BatchWrite>& batch : state.Batches()) {
    std::vector<const BatchWrite*> visible;
    for (const BatchWrite& w : batch) {
      std::string value;
      uint64_t version = 0;
      if (w.write.present() &&
          db->Get(ReadOptions(), KeyOf(w.key), &value).ok() &&
          ParseValue(w.key, value, &version) && version == w.write.version) {
        visible.push_back(&w);
      }
    }
    if (visible.size() < 2 || visible[1]->write.version < 2) continue;
    const BatchWrite& b = *visible[1];
    WriteOptions wo;
    wo.sync = true;
    const absl::Status s =
        db->Put(wo, KeyOf(b.key), ValueOf(b.key, b.write.version - 1));
    std::printf(
        "sift_stress: planted torn_batch: rewrote %s with version %llu under "
        "its batch's version %llu, %s keeping the batch's (%s)\n",
        KeyOf(b.key).c_str(),
        static_cast<unsigned long long>(b.write.version - 1),
        static_cast<unsigned long long>(b.write.version),
        KeyOf(visible[0]->key).c_str(), s.ToString().c_str());
    return true;
  }
  std::printf("sift_stress: no key suits --plant torn_batch yet\n");
  return false;
}

// Plant `defect` in the reopened database before it is checked, to show
// that the check catches it. Returns false if no key suits it yet.
bool Plant(const std::string& defect, DB* db, const ExpectedState& state,
           CrashKind kind, Rng* rng) {
  if (defect == "torn_batch") return PlantTornBatch(db, state);
  const uint32_t n = state.num_keys();
  const uint32_t start = static_cast<uint32_t>(rng->Uniform(n));
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t k = (start + i) % n;
    const KeyWindow w = state.WindowAfterCrash(k, kind);
    std::string what;
    absl::Status s;
    WriteOptions wo;
    wo.sync = true;
    if (defect == "drop_acked" && w.floor.present()) {
      // A lost write: the durable acknowledged version disappears.
      s = db->Delete(wo, KeyOf(k));
      what = absl::StrCat("deleted ", KeyOf(k), ", durable version ",
                          w.floor.version);
    } else if (defect == "stale_value" && w.floor.present() &&
               w.floor.version >= 2) {
      s = db->Put(wo, KeyOf(k), ValueOf(k, w.floor.version - 1));
      what = absl::StrCat("rewrote ", KeyOf(k), " with version ",
                          w.floor.version - 1, " over durable version ",
                          w.floor.version);
    } else if (defect == "resurrect" && w.floor.deleted &&
               w.floor.version >= 2) {
      s = db->Put(wo, KeyOf(k), ValueOf(k, w.floor.version - 1));
      what = absl::StrCat("brought back version ", w.floor.version - 1, " of ",
                          KeyOf(k), ", durably deleted by version ",
                          w.floor.version);
    } else if (defect == "phantom") {
      s = db->Put(wo, KeyOf(k), ValueOf(k, w.max_started + 1000));
      what = absl::StrCat("wrote version ", w.max_started + 1000, " of ",
                          KeyOf(k), ", never written");
    } else {
      continue;
    }
    std::printf("sift_stress: planted %s: %s (%s)\n", defect.c_str(),
                what.c_str(), s.ToString().c_str());
    return true;
  }
  std::printf("sift_stress: no key suits --plant %s yet\n", defect.c_str());
  return false;
}

}  // namespace

CrashKind CrashKindOf(uint64_t seed) {
  return (seed & 1) != 0 ? CrashKind::kKill : CrashKind::kPowerLoss;
}

absl::Status Prepare(const RunConfig& config, ExpectedState* state) {
  absl::Status s = DestroyDB(config.db_dir(), Options());
  if (!s.ok()) return s;
  std::error_code ec;
  std::filesystem::remove_all(config.scratch_dir(), ec);
  std::filesystem::create_directories(config.scratch_dir(), ec);
  if (ec) return absl::InternalError(ec.message());
  Options options;
  options.create_if_missing = true;
  auto db = DB::Open(options, config.db_dir());
  if (!db.ok()) return db.status();
  const uint32_t n = state->num_keys();
  for (uint32_t base = 0; base < n; base += 500) {
    WriteBatch batch;
    std::vector<uint32_t> keys;
    std::vector<uint64_t> versions;
    for (uint32_t k = base; k < std::min(n, base + 500); ++k) {
      std::lock_guard<std::mutex> l(state->KeyLock(k));
      versions.push_back(state->BeginWrite(k, false));
      keys.push_back(k);
      batch.Put(KeyOf(k), ValueOf(k, versions.back()));
    }
    s = (*db)->Write(WriteOptions(), &batch);
    if (!s.ok()) return s;
    const uint64_t ticket = state->NewTicket();
    for (size_t i = 0; i < keys.size(); ++i) {
      std::lock_guard<std::mutex> l(state->KeyLock(keys[i]));
      state->AckWrite(keys[i], versions[i], false, false, ticket);
    }
  }
  const uint64_t start = state->TicketNow();
  s = (*db)->Flush();
  if (s.ok()) state->SyncPoint(start);
  return s;
}

void RunRound(const RunConfig& config, ExpectedState* state, uint64_t number,
              uint64_t seed, Reporter* reporter, Totals* totals) {
  const RoundPlan plan = PlanRound(config, seed);
  const bool kill = plan.kind == CrashKind::kKill;
  std::printf(
      "round %llu seed %llu crash=%s after=%llums%s | run: %s | reopen: %s"
      " | ops: %s\n",
      static_cast<unsigned long long>(number),
      static_cast<unsigned long long>(seed), kill ? "kill" : "power_loss",
      static_cast<unsigned long long>(plan.crash_after_ms),
      plan.recovery_crash_at == 0
          ? ""
          : absl::StrCat(" again_in_recovery_at_op=", plan.recovery_crash_at)
                .c_str(),
      plan.run.text.c_str(), plan.reopen.text.c_str(), plan.mix.text.c_str());
  std::fflush(stdout);
  const uint64_t tickets_before = state->TicketNow();
  if (kill) {
    RunKill(config, seed, plan, reporter);
    totals->kills++;
  } else {
    RunPowerLoss(config, seed, plan, state, reporter);
    totals->power_cuts++;
    if (plan.recovery_crash_at != 0 && reporter->errors() == 0) {
      CrashDuringRecovery(config, plan, reporter);
      totals->power_cuts++;
    }
  }
  totals->option_sets++;
  if (reporter->errors() > 0) return;

  Options options = plan.reopen.options;
  options.env = Env::Default();
  auto db = DB::Open(options, config.db_dir());
  totals->option_sets++;
  if (!db.ok()) {
    reporter->Error("reopen after the crash", db.status());
    return;
  }
  Rng rng(SubSeed(seed, 5));
  if (!config.plant.empty()) {
    Plant(config.plant, db->get(), *state, plan.kind, &rng);
  }
  std::vector<KeyWrite> found;
  totals->keys_verified +=
      VerifyAfterCrash(db->get(), *state, plan.kind, &rng, reporter, &found,
                       &totals->batches_checked);
  totals->acked_checked += state->TicketNow() - tickets_before;
  for (uint32_t k = 0; k < state->num_keys(); ++k) {
    const KeyWrite acked = state->LastAcked(k);
    if (!kill && (acked.deleted != found[k].deleted ||
                  (!acked.deleted && acked.version != found[k].version))) {
      totals->unsynced_lost++;
    }
    state->Settle(k, found[k]);
  }
  state->ClearBatches();  // judged; versions before the settle are history
  db->reset();
  totals->rounds++;
  // External tables and checkpoints of the round.
  std::error_code ec;
  std::filesystem::remove_all(config.scratch_dir(), ec);
  std::filesystem::create_directories(config.scratch_dir(), ec);
}

int ChildMain(const RunConfig& config, uint64_t seed) {
  auto state = ExpectedState::Open(config.state_path(), config.num_keys,
                                   /*create=*/false);
  if (!state.ok()) {
    std::fprintf(stderr, "sift_stress child: %s\n",
                 state.status().ToString().c_str());
    return 2;
  }
  const RoundPlan plan = PlanRound(config, seed);
  Reporter reporter(seed, /*exit_on_failure=*/true);
  Options options = plan.run.options;
  options.env = Env::Default();
  auto db = DB::Open(options, config.db_dir());
  if (!db.ok()) {
    reporter.Error("open in the victim", db.status());
    return 3;
  }
  Workload w;
  w.db = db->get();
  w.env = Env::Default();
  w.drawn = &plan.run;
  w.state = state->get();
  w.reporter = &reporter;
  w.mix = plan.mix;
  w.seed = seed;
  w.scratch_dir = config.scratch_dir();
  std::vector<std::thread> threads;
  for (int t = 0; t < config.threads; ++t) {
    threads.emplace_back(RunWorker, &w, t);
  }
  // The parent kills us within seconds; if it is gone, do not run forever.
  SleepMs(120'000);
  std::fprintf(stderr, "sift_stress child: not killed after 120 s\n");
  std::_Exit(4);
}

}  // namespace sift::stress
