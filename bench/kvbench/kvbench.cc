// kvbench: throughput, latency and read amplification of sift on a fresh
// database, and the filter sweep (--sweep_bits). See doc/benchmarks.md.

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/kvbench/report.h"
#include "bench/kvbench/runner.h"
#include "bench/kvbench/sweep.h"

namespace sift::bench {
namespace {

constexpr const char* kDefaultWorkloads =
    "fillrandom,readrandom,readmissing,readhot,seekrandom,readseq,compact,"
    "readrandom,readmissing";

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "kvbench: %s\n", s.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  BenchConfig config;
  std::string filter_kind = "blocked";
  std::string filter_allocation = "optimal";
  std::string compression = "none";
  std::string benchmarks = kDefaultWorkloads;
  std::string sweep_bits;
  std::string sweep_out = "kvbench-sweep";
  bool json = false;
  bool no_settle = false;
  bool sweep_keep_shape = false;
  std::vector<std::string> sweep_reference;

  CLI::App app{
      "kvbench: throughput, latency and read amplification of sift.\n"
      "Workloads: " +
      absl::StrJoin(AllWorkloads(), ", ")};
  app.option_defaults()->always_capture_default();
  app.add_option("--num", config.num, "Keys written by the fills");
  app.add_option("--reads", config.reads, "Operations per read workload");
  app.add_option("--key_size", config.key_size, "Key bytes");
  app.add_option("--value_size", config.value_size, "Value bytes");
  std::string key_format = "decimal";
  app.add_option("--key_format", key_format,
                 "Keys as zero-padded decimal numbers, or as big-endian "
                 "integers with 2^16 - 1 absent integers after each key "
                 "(seekempty needs them)")
      ->check(CLI::IsMember({"decimal", "binary"}));
  app.add_option("--range_len", config.range_len,
                 "Consecutive integers in each range of seekempty");
  app.add_option("--range_filter_bits", config.range_filter_bits,
                 "Range filter bits per key in every table "
                 "(Options::range_filter_bits_per_key; 0: none)");
  app.add_option("--filter_memory_limit", config.filter_memory_limit,
                 "Bytes of table filters kept in memory "
                 "(Options::filter_memory_limit; 0: no limit)");
  app.add_option("--prefix_len", config.prefix_len,
                 "Prefix filters on the first N key bytes "
                 "(Options::prefix_extractor, fixed length; 0: none); the "
                 "seekprefix workloads scan one such prefix");
  app.add_flag("--incompressible_values", config.incompressible_values,
               "Values of random bytes, which --compression cannot shrink (by "
               "default values compress to about half)");
  app.add_option("--bits_per_key", config.bits_per_key,
                 "Filter bits per key (0: no filter)");
  app.add_option("--filter_kind", filter_kind, "Filter layout")
      ->check(CLI::IsMember({"none", "standard", "blocked", "binary_fuse"}));
  app.add_option("--filter_allocation", filter_allocation,
                 "How --bits_per_key (the average) is shared among tables: "
                 "the same everywhere, or sized per level from the tree's "
                 "shape (doc/filters.md)")
      ->check(CLI::IsMember({"uniform", "optimal"}));
  app.add_option("--compression", compression, "Block compression")
      ->check(CLI::IsMember({"none", "snappy"}));
  app.add_option("--cache_size", config.cache_size,
                 "Block cache bytes (suffixes KiB/MiB accepted)")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--write_buffer_size", config.write_buffer_size,
                 "Memtable bytes")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--max_file_size", config.max_file_size, "Table bytes")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--block_restart_interval", config.block_restart_interval,
                 "Entries between full keys in a data block")
      ->check(CLI::Range(1, 1 << 16));
  app.add_flag("--use_direct_reads", config.use_direct_reads,
               "Read tables with O_DIRECT (Options::use_direct_reads): the "
               "block cache is the only cache and block reads are device "
               "reads");
  app.add_option("--max_open_files", config.max_open_files,
                 "Options::max_open_files (tables kept open: filters and "
                 "indexes in memory)")
      ->check(CLI::Range(20, 1000000));
  app.add_option("--threads", config.threads, "Threads per workload")
      ->check(CLI::Range(1, 256));
  app.add_option("--batch_size", config.batch_size,
                 "Keys per MultiGet in multireadrandom and multireadmissing")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--seed", config.seed, "Seed of keys, values and order");
  app.add_option("--db", config.db,
                 "Database directory (default: a fresh temporary directory, "
                 "removed afterwards; a given one is cleared first)");
  app.add_flag("--use_existing_db", config.use_existing_db,
               "Keep what --db holds (reads assume it was filled with the "
               "same --num, --key_size and --seed)");
  app.add_option("--benchmarks", benchmarks,
                 "Comma-separated workloads, run in order on one database");
  app.add_flag("--json", json, "One JSON document on stdout instead of tables");
  app.add_flag("--no_settle", no_settle,
               "Do not wait for compactions to settle after a fill");
  app.add_option("--sweep_bits", sweep_bits,
                 "Comma-separated bits/key settings, e.g. 0,2,4,...,20: run "
                 "readmissing and readrandom per setting and filter layout "
                 "instead of --benchmarks, write sweep.csv and sweep.svg");
  app.add_option("--sweep_out", sweep_out, "Directory for the sweep files");
  app.add_option("--sweep_reference", sweep_reference,
                 "Sweep: peer_bench --json output files (one per bits/key "
                 "setting) whose engines' readmissing block reads join the "
                 "allocation panel as reference lines")
      ->delimiter(',');
  app.add_flag("--sweep_keep_shape", sweep_keep_shape,
               "Sweep: read the tree as the fill left it instead of compacting "
               "it first (rows then differ in tables probed per Get)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  config.filter = filter_kind == "none"          ? FilterChoice::kNone
                  : filter_kind == "standard"    ? FilterChoice::kStandard
                  : filter_kind == "binary_fuse" ? FilterChoice::kBinaryFuse
                                                 : FilterChoice::kBlocked;
  if (config.bits_per_key <= 0) config.filter = FilterChoice::kNone;
  config.binary_keys = key_format == "binary";
  config.filter_allocation = filter_allocation == "uniform"
                                 ? FilterAllocation::kUniform
                                 : FilterAllocation::kOptimal;
  if (config.bits_per_key < 0 || config.bits_per_key > 100) {
    std::fprintf(stderr, "kvbench: --bits_per_key must be in [0, 100]\n");
    return 2;
  }
  config.compression =
      compression == "snappy" ? Compression::kSnappy : Compression::kNone;
  config.settle = !no_settle;
  config.progress = isatty(STDERR_FILENO) == 1;

  if (!sweep_bits.empty()) {
    absl::StatusOr<std::vector<double>> bits = ParseBitsList(sweep_bits);
    if (!bits.ok()) return Fail(bits.status());
    if (!config.db.empty()) {
      std::fprintf(stderr,
                   "kvbench: --sweep_bits uses fresh temporary "
                   "databases; --db is ignored\n");
      config.db.clear();
    }
    absl::StatusOr<std::vector<ReferencePoint>> references =
        LoadReferences(sweep_reference);
    if (!references.ok()) return Fail(references.status());
    for (const ReferencePoint& p : *references) {
      if (p.num != config.num) {
        std::fprintf(stderr,
                     "kvbench: warning: reference %s at %g bits/key ran %llu "
                     "keys, the sweep runs %llu\n",
                     p.engine.c_str(), p.bits_per_key,
                     static_cast<unsigned long long>(p.num),
                     static_cast<unsigned long long>(config.num));
      }
    }
    absl::StatusOr<std::vector<SweepRow>> rows =
        RunSweep(config, *bits, !sweep_keep_shape);
    if (!rows.ok()) return Fail(rows.status());
    if (absl::Status s = WriteSweepFiles(config, *rows, *references, sweep_out,
                                         !sweep_keep_shape);
        !s.ok()) {
      return Fail(s);
    }
    if (json) {
      Json doc;
      doc["config"] = ConfigToJson(config);
      doc["sweep"] = SweepJson(*rows);
      std::printf("%s\n", doc.dump(2).c_str());
    } else {
      std::printf("kvbench: %s\n", DescribeConfig(config).c_str());
      PrintSweep(*rows, stdout);
      std::printf("\nwrote %s/sweep.csv and %s/sweep.svg\n", sweep_out.c_str(),
                  sweep_out.c_str());
    }
    return 0;
  }

  std::vector<std::string> names;
  for (absl::string_view n :
       absl::StrSplit(benchmarks, ',', absl::SkipWhitespace())) {
    const std::string name(n.data(), n.size());
    bool known = false;
    for (const std::string& w : AllWorkloads()) known |= w == name;
    if (!known) {
      std::fprintf(stderr, "kvbench: unknown workload '%s' (known: %s)\n",
                   name.c_str(), absl::StrJoin(AllWorkloads(), ", ").c_str());
      return 2;
    }
    names.push_back(name);
  }

  absl::StatusOr<std::unique_ptr<Runner>> runner = Runner::Open(config);
  if (!runner.ok()) return Fail(runner.status());
  std::vector<WorkloadResult> results;
  for (const std::string& name : names) {
    std::optional<WorkloadResult> load;
    absl::StatusOr<WorkloadResult> r = (*runner)->Run(name, &load);
    if (!r.ok()) return Fail(r.status());
    if (load.has_value()) results.push_back(*std::move(load));
    results.push_back(*std::move(r));
  }
  if (json) {
    Json doc;
    doc["config"] = ConfigToJson(config);
    Json arr = Json::array();
    for (const WorkloadResult& r : results) arr.push_back(ResultToJson(r));
    doc["results"] = std::move(arr);
    const RunSummary sum = (*runner)->Summary();
    doc["filter_memory_bytes"] = sum.filter_bytes;
    doc["summary"] = SummaryToJson(config, sum);
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    PrintReport(config, results, stdout);
    if (std::optional<std::string> mem =
            (*runner)->Property("sift.filter-memory-bytes")) {
      std::printf("\nfilter memory (sift.filter-memory-bytes): %s bytes\n",
                  mem->c_str());
    }
    if (std::optional<std::string> stats = (*runner)->Property("sift.stats")) {
      // The per-level sections of sift.stats: files, bytes, and compaction
      // time, bytes read and bytes written into each level since open (the
      // split of write amplification), then the filters.
      std::printf(
          "\nLevels (sift.stats; Read and Write: compaction input "
          "and output into the level since open)\n");
      const size_t begin = stats->find("Level  Files");
      const size_t end = stats->find("Read stats since open:");
      if (begin != std::string::npos && end != std::string::npos) {
        std::printf("%s", stats->substr(begin, end - begin).c_str());
      }
      // What writes waited for: count, total and longest stall per cause.
      const size_t stalls = stats->find("Write stalls since open:");
      const size_t stalls_end = stats->find("Memory: filters");
      if (stalls != std::string::npos && stalls_end != std::string::npos) {
        std::printf("\n%s", stats->substr(stalls, stalls_end - stalls).c_str());
      }
    }
    PrintSummary(config, (*runner)->Summary(), stdout);
  }
  return 0;
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) { return sift::bench::Main(argc, argv); }
