#ifndef SIFT_TESTS_RELIABILITY_WORKLOAD_H_
#define SIFT_TESTS_RELIABILITY_WORKLOAD_H_

// A deterministic, scripted workload for the power-loss and I/O-error
// campaigns, which replay it once per crash point or fault.
//
// A script is a list of space-separated steps:
//   wN  N writes: single puts, deletes and small batches over a few hundred
//       keys, a quarter of them with sync=true
//   gN  N point reads of random keys
//   s   a full scan
//   f   DB::Flush
//   c   DB::CompactRange over everything
//   r   close the DB and open it again (recovery, a new MANIFEST)
//   i   DB::IngestExternalFiles of one table written by TableFileWriter:
//       20 to 40 distinct keys, a quarter of them deletions. Counted as a
//       write (it is all or nothing, and durable when acknowledged)
// The same script and seed always give the same steps, and, as long as no
// step runs in the background on its own (flushes and compactions are asked
// for explicitly; write buffers are large enough never to fill), the same
// sequence of file operations.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/options.h"
#include "tests/reliability/journal.h"

namespace sift::reliability {

struct WorkloadStep {
  enum class Kind { kWrite, kGet, kScan, kFlush, kCompact, kReopen, kIngest };
  Kind kind = Kind::kWrite;
  // kWrite and kIngest: the updates and sync; id = index among writes.
  // kIngest's updates are sorted by key, one per key, sync always true.
  JournalOp write;
  std::string key;  // kGet
};

// REQUIRES: `script` is well formed (checked with assert).
std::vector<WorkloadStep> MakeWorkload(std::string_view script, uint64_t seed);

// Write a kIngest step's updates to an external table in directory
// kExternalDir on `env` (created and synced, so that the file survives a
// simulated crash) and ingest it into `db`.
inline constexpr char kExternalDir[] = "/external";
absl::Status RunIngestStep(DB* db, Env* env, const WorkloadStep& step);

// Options for running a workload on `env`: everything explicit, nothing
// left to chance in the background.
Options WorkloadOptions(Env* env);

// The state after each prefix of the writes: fingerprints[k] is the
// Fingerprint (reliability_util.h) of the state after the first k writes.
std::vector<uint64_t> PrefixFingerprints(
    const std::vector<WorkloadStep>& steps);
// The state after the first `k` writes.
KvMap PrefixState(const std::vector<WorkloadStep>& steps, size_t k);

}  // namespace sift::reliability

#endif  // SIFT_TESTS_RELIABILITY_WORKLOAD_H_
