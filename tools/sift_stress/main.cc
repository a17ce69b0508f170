// sift_stress: a randomized-options crash soak (doc/durability.md,
// "sift_stress"). Rounds of several threads doing every kind of operation
// over a shared key space, each round with options drawn from its seed and
// ending in a SIGKILL or a simulated power loss, then a check of every key
// against an expected state kept outside the database.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/sift_stress/expected_state.h"
#include "tools/sift_stress/random.h"
#include "tools/sift_stress/rounds.h"
#include "tools/sift_stress/verify.h"

namespace sift::stress {
namespace {

constexpr char kUsage[] =
    "usage: sift_stress --db DIR --seconds N [--seed S] [--rounds R]\n"
    "                   [--threads T] [--keys K] [--long-seconds N]\n"
    "                   [--replay SEED] [--plant DEFECT] [--disable OP,...]\n"
    "  --db DIR          working directory (database, expected state, "
    "scratch);\n"
    "                    its database is recreated\n"
    "  --seconds N       time budget: rounds start until it is spent\n"
    "  --long-seconds N  budget instead of --seconds when SIFT_LONG=1\n"
    "  --rounds R        stop after R rounds (0: no limit)\n"
    "  --seed S          master seed (default: from the clock); printed\n"
    "  --threads T       worker threads per round (default 4)\n"
    "  --keys K          size of the key space (default 20000)\n"
    "  --replay SEED     run the one round with this round seed (as printed\n"
    "                    on its 'round K seed S' line) on a fresh database\n"
    "  --plant DEFECT    self-test: plant a defect the check must catch:\n"
    "                    drop_acked, stale_value, resurrect, phantom,\n"
    "                    torn_batch\n"
    "  --disable OP,...  never run these operations (put, delete, batch, get,\n"
    "                    multiget, iter_forward, iter_backward, snapshot, "
    "flush,\n"
    "                    compact_range, ingest, checkpoint), e.g. to soak on\n"
    "                    while a known defect of one of them is open\n";

struct Flags {
  std::string db;
  uint64_t seconds = 0, long_seconds = 0, rounds = 0, seed = 0, replay = 0;
  bool has_seconds = false, has_seed = false, has_replay = false;
  uint64_t threads = 4, keys = 20000;
  std::string plant;
  uint64_t disabled_ops = 0;
  bool child = false;
  uint64_t child_seed = 0, direct_reads = 0;
};

[[noreturn]] void Usage(const std::string& error) {
  std::fprintf(stderr, "sift_stress: %s\n%s", error.c_str(), kUsage);
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    }
    if (flag == "--child") {
      f.child = true;
      continue;
    }
    if (i + 1 >= argc) Usage(flag + " needs a value");
    const std::string value = argv[++i];
    auto number = [&](uint64_t* out) {
      if (!absl::SimpleAtoi(value, out)) {
        Usage(
            absl::StrCat(flag, ": not a non-negative integer: '", value, "'"));
      }
    };
    if (flag == "--db") {
      f.db = value;
    } else if (flag == "--seconds") {
      number(&f.seconds);
      f.has_seconds = true;
    } else if (flag == "--long-seconds") {
      number(&f.long_seconds);
    } else if (flag == "--rounds") {
      number(&f.rounds);
    } else if (flag == "--seed") {
      number(&f.seed);
      f.has_seed = true;
    } else if (flag == "--threads") {
      number(&f.threads);
      if (f.threads < 1 || f.threads > 64) Usage("--threads: 1 to 64");
    } else if (flag == "--keys") {
      number(&f.keys);
      if (f.keys < 100 || f.keys > 10'000'000) {
        Usage("--keys: 100 to 10000000");
      }
    } else if (flag == "--replay") {
      number(&f.replay);
      f.has_replay = true;
    } else if (flag == "--plant") {
      f.plant = value;
      if (f.plant != "drop_acked" && f.plant != "stale_value" &&
          f.plant != "resurrect" && f.plant != "phantom" &&
          f.plant != "torn_batch") {
        Usage(
            "--plant: one of drop_acked, stale_value, resurrect, phantom, "
            "torn_batch");
      }
    } else if (flag == "--disable") {
      for (absl::string_view name : absl::StrSplit(value, ',')) {
        int op = 0;
        while (op < static_cast<int>(Op::kCount) &&
               name != OpName(static_cast<Op>(op))) {
          ++op;
        }
        if (op == static_cast<int>(Op::kCount)) {
          Usage(absl::StrCat("--disable: unknown operation '", name, "'"));
        }
        f.disabled_ops |= uint64_t{1} << op;
      }
    } else if (flag == "--disabled-mask") {  // from the parent, to --child
      number(&f.disabled_ops);
    } else if (flag == "--child-seed") {
      number(&f.child_seed);
    } else if (flag == "--direct-reads") {
      number(&f.direct_reads);
    } else {
      Usage("unknown flag " + flag);
    }
  }
  if (f.db.empty()) Usage("--db is required");
  if (f.disabled_ops + 1 == uint64_t{1} << static_cast<int>(Op::kCount)) {
    Usage("--disable: at least one operation must stay");
  }
  if (!f.child && !f.has_seconds && f.rounds == 0 && !f.has_replay) {
    Usage("--seconds (or --rounds, or --replay) is required");
  }
  return f;
}

// Whether O_DIRECT opens work in `dir` (tmpfs refuses them).
bool DirectReadsWork(const std::string& dir) {
  const std::string probe = dir + "/.direct_probe";
  const int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0644);
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  return fd >= 0;
}

// A round that takes far longer than any should is a hang (a deadlock in
// the engine or the soak): say which round, and stop.
std::atomic<int64_t> g_round_deadline{0};  // seconds, steady clock; 0: none
std::atomic<uint64_t> g_round_seed{0};

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A fatal signal in the soak's own process (the engine runs here in
// power-loss rounds) would end the run without a word: the handler says
// which round it was, from a line formatted before the round began (a
// handler may only call async-signal-safe functions), then dies of the
// signal as it would have.
char g_crash_line[160];
std::atomic<size_t> g_crash_line_size{0};

void SetCrashLine(uint64_t seed) {
  const int n = std::snprintf(
      g_crash_line, sizeof(g_crash_line),
      "sift_stress: FAILED (crash) seed=%llu: a fatal signal in the round; "
      "rerun it with --replay %llu\n",
      static_cast<unsigned long long>(seed),
      static_cast<unsigned long long>(seed));
  g_crash_line_size =
      n > 0 ? std::min(static_cast<size_t>(n), sizeof(g_crash_line) - 1) : 0;
}

void OnFatalSignal(int sig) {
  const size_t n = g_crash_line_size.load();
  if (n > 0) (void)!::write(STDERR_FILENO, g_crash_line, n);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void InstallCrashHandler() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    ::signal(sig, OnFatalSignal);
  }
}

void StartWatchdog() {
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const int64_t deadline = g_round_deadline.load();
      if (deadline != 0 && NowSeconds() > deadline) {
        std::fprintf(stderr,
                     "sift_stress: FAILED (hang) seed=%llu: the round did not "
                     "finish in 300 s\n",
                     static_cast<unsigned long long>(g_round_seed.load()));
        std::_Exit(2);
      }
    }
  }).detach();
}

int Main(int argc, char** argv) {
  // Whole lines as they are printed, also into a file: the last round line
  // of a run that dies is the round that died.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const Flags flags = ParseFlags(argc, argv);
  RunConfig config;
  std::error_code ec;
  std::filesystem::create_directories(flags.db, ec);
  config.dir = std::filesystem::absolute(flags.db, ec).lexically_normal();
  if (!config.dir.empty() && config.dir.back() == '/') config.dir.pop_back();
  config.num_keys = static_cast<uint32_t>(flags.keys);
  config.threads = static_cast<int>(flags.threads);
  config.plant = flags.plant;
  config.disabled_ops = static_cast<uint32_t>(flags.disabled_ops);
  config.self_exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (flags.child) {
    config.caps.direct_reads = flags.direct_reads != 0;
    return ChildMain(config, flags.child_seed);
  }
  config.caps.direct_reads = DirectReadsWork(config.dir);
  if (!config.caps.direct_reads) {
    std::printf("sift_stress: O_DIRECT refused in %s: direct reads not drawn\n",
                config.dir.c_str());
  }

  uint64_t budget = flags.seconds;
  const char* long_env = std::getenv("SIFT_LONG");
  if (long_env != nullptr && std::string(long_env) == "1" &&
      flags.long_seconds > 0) {
    budget = flags.long_seconds;
    std::printf("sift_stress: SIFT_LONG=1: %llu seconds\n",
                static_cast<unsigned long long>(budget));
  }
  const uint64_t master =
      flags.has_seed
          ? flags.seed
          : Mix64(static_cast<uint64_t>(std::chrono::system_clock::now()
                                            .time_since_epoch()
                                            .count()) ^
                  static_cast<uint64_t>(::getpid()));
  if (flags.has_replay) {
    std::printf("sift_stress: replaying the round with seed %llu\n",
                static_cast<unsigned long long>(flags.replay));
  } else {
    std::printf(
        "sift_stress: seed %llu (--replay a round's seed to rerun it)\n",
        static_cast<unsigned long long>(master));
  }

  auto state = ExpectedState::Open(config.state_path(), config.num_keys,
                                   /*create=*/true);
  if (!state.ok()) {
    std::fprintf(stderr, "sift_stress: %s\n",
                 state.status().ToString().c_str());
    return 2;
  }
  absl::Status s = Prepare(config, state->get());
  if (!s.ok()) {
    std::fprintf(stderr, "sift_stress: preparing %s: %s\n",
                 config.db_dir().c_str(), s.ToString().c_str());
    return 2;
  }

  StartWatchdog();
  InstallCrashHandler();
  Totals totals;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::seconds>(
            std::chrono::steady_clock::now() - start)
            .count());
  };
  bool failed = false;
  for (uint64_t round = 0;; ++round) {
    if (flags.has_replay && round == 1) break;
    if (flags.rounds > 0 && round >= flags.rounds) break;
    // A round takes a few seconds: do not start one that would overrun.
    if (flags.has_seconds && round > 0 && elapsed() + 3 > budget) break;
    // Round seeds alternate the crash kind (lowest bit) so every budget
    // gets both; the rest of the seed is the master seed's.
    const uint64_t seed =
        flags.has_replay
            ? flags.replay
            : ((Mix64(master + round) & ~uint64_t{1}) | (round & 1));
    Reporter reporter(seed, /*exit_on_failure=*/false);
    g_round_seed = seed;
    SetCrashLine(seed);
    g_round_deadline = NowSeconds() + 300;
    RunRound(config, state->get(), round, seed, &reporter, &totals);
    g_round_deadline = 0;
    if (reporter.failed()) {
      std::printf(
          "sift_stress: round %llu FAILED: lost=%llu resurrected=%llu "
          "wrong=%llu errors=%llu; rerun it with --replay %llu\n",
          static_cast<unsigned long long>(round),
          static_cast<unsigned long long>(reporter.count(Verdict::kLost)),
          static_cast<unsigned long long>(
              reporter.count(Verdict::kResurrected)),
          static_cast<unsigned long long>(reporter.count(Verdict::kWrong)),
          static_cast<unsigned long long>(reporter.errors()),
          static_cast<unsigned long long>(seed));
      totals.lost += reporter.count(Verdict::kLost);
      totals.resurrected += reporter.count(Verdict::kResurrected);
      totals.wrong += reporter.count(Verdict::kWrong);
      totals.errors += reporter.errors();
      failed = true;
      break;
    }
  }

  uint64_t ops = 0;
  std::string by_kind;
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const uint64_t c = (*state)->OpCount(static_cast<Op>(i));
    ops += c;
    absl::StrAppend(&by_kind, " ", OpName(static_cast<Op>(i)), "=", c);
  }
  // Every checkpoint opened was checked key by key.
  totals.keys_verified += (*state)->OpCount(Op::kCheckpoint) * config.num_keys;
  std::printf("sift_stress: ops by kind:%s\n", by_kind.c_str());
  std::printf(
      "sift_stress: keys found without their last acknowledged write after a "
      "power cut (unsynced, allowed): %llu\n",
      static_cast<unsigned long long>(totals.unsynced_lost));
  std::printf(
      "sift_stress: batches known to have committed, checked all or "
      "nothing: %llu\n",
      static_cast<unsigned long long>(totals.batches_checked));
  if (totals.errors > 0) {
    std::printf("sift_stress: errors=%llu\n",
                static_cast<unsigned long long>(totals.errors));
  }
  std::printf(
      "sift_stress: rounds=%llu kills=%llu power_cuts=%llu option_sets=%llu "
      "ops=%llu keys_verified=%llu acked_checked=%llu lost=%llu "
      "resurrected=%llu wrong=%llu\n",
      static_cast<unsigned long long>(totals.rounds),
      static_cast<unsigned long long>(totals.kills),
      static_cast<unsigned long long>(totals.power_cuts),
      static_cast<unsigned long long>(totals.option_sets),
      static_cast<unsigned long long>(ops),
      static_cast<unsigned long long>(totals.keys_verified),
      static_cast<unsigned long long>(totals.acked_checked),
      static_cast<unsigned long long>(totals.lost),
      static_cast<unsigned long long>(totals.resurrected),
      static_cast<unsigned long long>(totals.wrong));
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace sift::stress

int main(int argc, char** argv) { return sift::stress::Main(argc, argv); }
