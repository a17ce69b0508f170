#ifndef SIFT_TOOLS_SIFT_STRESS_WORKLOAD_H_
#define SIFT_TOOLS_SIFT_STRESS_WORKLOAD_H_

// The operations of a round: several threads over one shared key space,
// every operation checked as it runs.
//
// Writes (Put, Delete, Write of a mixed batch, IngestExternalFiles of a
// table written by TableFileWriter) hold the locks of their keys and follow
// ExpectedState's protocol. Checks while the database runs:
//   - Get and MultiGet hold their keys' locks and must see exactly the last
//     acknowledged write;
//   - iterators (forward and backward, with and without bounds) run without
//     locks: each key must hold what was acknowledged before the scan began
//     or a write begun before it ended (ExpectedState::WindowSince);
//   - a snapshot is held across other operations: reads and scans at it
//     must give the same answers every time, and its scans must agree with
//     its point reads;
//   - a checkpoint is opened as a database and every key checked like a
//     scan (what was acknowledged before the call, or a racing write).
// Flush, CompactRange and a successful ingestion are sync points.

#include <atomic>
#include <cstdint>
#include <string>

#include "sift/db.h"
#include "tools/sift_stress/expected_state.h"
#include "tools/sift_stress/random.h"
#include "tools/sift_stress/stress_options.h"
#include "tools/sift_stress/verify.h"

namespace sift::stress {

// Relative weights of the operations, and where keys are drawn from.
struct OpMix {
  uint32_t weight[static_cast<int>(Op::kCount)] = {};
  // Half of the keys come from a hot range of this many keys (0: none), so
  // that some keys are overwritten many times between sync points.
  uint32_t hot_keys = 0;
  uint32_t hot_base = 0;
  std::string text;
};
OpMix DrawOpMix(Rng* rng, uint32_t num_keys);

// What the worker threads of a round share.
struct Workload {
  DB* db = nullptr;
  Env* env = nullptr;  // the DB's Env (the ingested files are written there)
  const DrawnOptions* drawn = nullptr;
  ExpectedState* state = nullptr;
  Reporter* reporter = nullptr;
  OpMix mix;
  uint64_t seed = 0;
  std::string scratch_dir;  // external tables and checkpoints
  std::atomic<bool> stop{false};
  // Set before a power cut: from then on errors are expected, and a worker
  // that meets one leaves.
  std::atomic<bool> crashed{false};
};

// Run operations until w->stop, an error after w->crashed, or a failure.
void RunWorker(Workload* w, int thread);

}  // namespace sift::stress

#endif  // SIFT_TOOLS_SIFT_STRESS_WORKLOAD_H_
