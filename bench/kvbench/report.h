#ifndef SIFT_BENCH_KVBENCH_REPORT_H_
#define SIFT_BENCH_KVBENCH_REPORT_H_

// kvbench's output: the human-readable tables and the JSON document.

#include <cstdio>
#include <string>
#include <vector>

#include "bench/kvbench/runner.h"
#include "nlohmann/json.hpp"

namespace sift::bench {

using Json = nlohmann::ordered_json;

// One line describing the settings of the run.
std::string DescribeConfig(const BenchConfig& config);

// Throughput and latency of every workload, then the read-amplification table
// of the point-read workloads, then the shape of the tree.
void PrintReport(const BenchConfig& config,
                 const std::vector<WorkloadResult>& results, std::FILE* out);

// Write and space amplification, filter and index memory, peak RSS and
// the memory budget they add up to (doc/benchmarks.md).
void PrintSummary(const BenchConfig& config, const RunSummary& sum,
                  std::FILE* out);
Json SummaryToJson(const BenchConfig& config, const RunSummary& sum);

Json ConfigToJson(const BenchConfig& config);
Json ResultToJson(const WorkloadResult& r);

// "1.23M", "456.7K", "89": short counts for tables.
std::string ShortCount(double v);

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_REPORT_H_
