#ifndef SIFT_BENCH_KVBENCH_SWEEP_H_
#define SIFT_BENCH_KVBENCH_SWEEP_H_

// --sweep_bits: what each bit per key of filter buys. For every setting and
// filter layout a fresh database is filled and measured with readmissing and
// readrandom; the rows go to a table on stdout, sweep.csv and sweep.svg.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/kvbench/report.h"
#include "bench/kvbench/runner.h"

namespace sift::bench {

struct SweepRow {
  double bits_per_key = 0;
  FilterChoice filter = FilterChoice::kNone;
  FilterAllocation allocation = FilterAllocation::kUniform;
  uint32_t num_probes = 0;
  double theoretical_fpr = 0;  // 1 without a filter
  uint64_t filter_memory_bytes = 0;
  WorkloadResult fill;
  std::vector<int> files_per_level;  // shape the reads ran on
  WorkloadResult missing;            // readmissing
  WorkloadResult present;            // readrandom
};

// Parse "0,2,4" into bits-per-key settings (each 0..100).
absl::StatusOr<std::vector<double>> ParseBitsList(const std::string& text);

// Another engine's block reads per absent-key Get at one filter setting,
// from a peer_bench JSON document (the reference series of the allocation
// panel).
struct ReferencePoint {
  std::string engine;
  double bits_per_key = 0;
  double block_reads_per_get = 0;
  uint64_t num = 0;  // keys in that run
};

// Every engine's readmissing row of each peer_bench --json output file.
// A file that is not such a document: InvalidArgument naming it.
absl::StatusOr<std::vector<ReferencePoint>> LoadReferences(
    const std::vector<std::string>& paths);

// Run the sweep (0 bits/key: once, without a filter; otherwise once per
// variant: standard and blocked Bloom with uniform allocation, the layouts'
// theory check; blocked Bloom and binary fuse with optimal allocation, the
// allocation panel). `base` supplies every other setting. With `compact`, the
// tree is compacted after the fill so that every row reads the same shape (left
// to background compaction, the tables per level after a fill vary from run to
// run, and with them the tables each Get probes).
absl::StatusOr<std::vector<SweepRow>> RunSweep(const BenchConfig& base,
                                               const std::vector<double>& bits,
                                               bool compact);

void PrintSweep(const std::vector<SweepRow>& rows, std::FILE* out);
std::string SweepCsv(const std::vector<SweepRow>& rows);
std::string SweepSvg(const BenchConfig& base, const std::vector<SweepRow>& rows,
                     const std::vector<ReferencePoint>& references,
                     bool compacted);
Json SweepJson(const std::vector<SweepRow>& rows);

// Write sweep.csv and sweep.svg into `dir` (created if missing).
absl::Status WriteSweepFiles(const BenchConfig& base,
                             const std::vector<SweepRow>& rows,
                             const std::vector<ReferencePoint>& references,
                             const std::string& dir, bool compacted);

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_SWEEP_H_
