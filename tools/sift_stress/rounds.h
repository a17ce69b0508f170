#ifndef SIFT_TOOLS_SIFT_STRESS_ROUNDS_H_
#define SIFT_TOOLS_SIFT_STRESS_ROUNDS_H_

// One round of the soak, from its seed alone:
//   1. draw the options the round runs with, the options it reopens with,
//      the operation mix and the moment of the crash, and print them;
//   2. run the workload until the crash:
//      kill round: a child process (this program, --child) opens the
//        database and runs the workload; the parent SIGKILLs it;
//      power round: in this process, through a FaultInjectionEnv over the
//        POSIX Env; at the crash every file operation starts failing and
//        SimulateCrash drops what was not synced (data and directory
//        entries), then the database object goes away;
//   3. reopen with the second option set, plant a defect if asked, check
//      every key (VerifyAfterCrash) and settle the expected state on what
//      was found.
// The database and the expected state carry over from round to round.

#include <cstdint>
#include <string>

#include "tools/sift_stress/expected_state.h"
#include "tools/sift_stress/stress_options.h"
#include "tools/sift_stress/verify.h"

namespace sift::stress {

struct RunConfig {
  std::string dir;  // absolute; holds db/, expected_state, scratch/
  uint32_t num_keys = 20000;
  int threads = 4;
  Capabilities caps;
  std::string plant;          // a defect to plant (see --plant), or empty
  uint32_t disabled_ops = 0;  // bit (1 << Op): never drawn (--disable)
  std::string self_exe;

  std::string db_dir() const { return dir + "/db"; }
  std::string state_path() const { return dir + "/expected_state"; }
  std::string scratch_dir() const { return dir + "/scratch"; }
};

struct Totals {
  uint64_t rounds = 0, kills = 0, power_cuts = 0, option_sets = 0;
  uint64_t keys_verified = 0, acked_checked = 0;
  uint64_t lost = 0, resurrected = 0, wrong = 0, errors = 0;
  // Keys whose last acknowledged write was not found after a power cut:
  // unsynced writes lost as the rule allows. Shows the rule is exercised.
  uint64_t unsynced_lost = 0;
  // Batches known to have committed (a key holds the batch's version), each
  // checked all or nothing; shows that check is exercised.
  uint64_t batches_checked = 0;
};

// The crash a round with this seed ends with (its lowest bit).
CrashKind CrashKindOf(uint64_t seed);

// Start a fresh database and expected state: every key written once,
// flushed (durable).
absl::Status Prepare(const RunConfig& config, ExpectedState* state);

// Run round `number` with `seed`; failures go to `reporter`.
void RunRound(const RunConfig& config, ExpectedState* state, uint64_t number,
              uint64_t seed, Reporter* reporter, Totals* totals);

// The victim of a kill round: run the round's workload until killed.
// Returns the process exit status (it only returns on an error).
int ChildMain(const RunConfig& config, uint64_t seed);

}  // namespace sift::stress

#endif  // SIFT_TOOLS_SIFT_STRESS_ROUNDS_H_
