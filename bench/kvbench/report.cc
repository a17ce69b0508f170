#include "bench/kvbench/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace sift::bench {
namespace {

std::string Shape(const std::vector<int>& files) {
  if (files.empty()) return "-";
  return absl::StrJoin(files, " ");
}

std::string Percent(double fraction, int decimals) {
  return absl::StrFormat("%.*f%%", decimals, fraction * 100);
}

}  // namespace

std::string ShortCount(double v) {
  if (v >= 1e6) return absl::StrFormat("%.2fM", v / 1e6);
  if (v >= 1e3) return absl::StrFormat("%.1fK", v / 1e3);
  return absl::StrFormat("%.0f", v);
}

std::string DescribeConfig(const BenchConfig& c) {
  std::string filter =
      c.filter == FilterChoice::kNone || c.bits_per_key <= 0
          ? "none"
          : absl::StrFormat("%s %g bits/key %s", FilterChoiceName(c.filter),
                            c.bits_per_key,
                            FilterAllocationName(c.filter_allocation));
  return absl::StrFormat(
      "keys %d x %d B, values %d B%s, reads %d, filter %s, compression %s, "
      "cache %s, write buffer %s, tables %s, threads %d, seed %d, reads %s, "
      "max open files %d",
      c.num, c.key_size, c.value_size,
      c.incompressible_values ? " (incompressible)" : "", c.reads, filter,
      c.compression == Compression::kNone ? "none" : "snappy",
      absl::StrFormat("%.1f MiB", c.cache_size / 1048576.0),
      absl::StrFormat("%.1f MiB", c.write_buffer_size / 1048576.0),
      absl::StrFormat("%.1f MiB", c.max_file_size / 1048576.0), c.threads,
      c.seed, c.use_direct_reads ? "direct" : "buffered/mmap",
      c.max_open_files);
}

void PrintReport(const BenchConfig& config,
                 const std::vector<WorkloadResult>& results, std::FILE* out) {
  std::fprintf(out, "kvbench: %s\n\n", DescribeConfig(config).c_str());
  std::fprintf(out, "%-12s %10s %11s %8s %9s %9s %9s %9s %8s  %s\n", "workload",
               "ops", "ops/s", "MB/s", "p50 us", "p99 us", "p99.9 us", "found",
               "settle s", "tables per level");
  for (const WorkloadResult& r : results) {
    std::fprintf(
        out, "%-12s %10s %11.*f %8.1f %9.2f %9.2f %9.2f %9s %8.2f  %s\n",
        r.name.c_str(), ShortCount(double(r.ops)).c_str(),
        r.OpsPerSecond() < 100 ? 2 : 0, r.OpsPerSecond(),
        r.seconds > 0 ? r.bytes / 1048576.0 / r.seconds : 0.0,
        r.latency_us.Percentile(50), r.latency_us.Percentile(99),
        r.latency_us.Percentile(99.9),
        r.point_reads || r.entries > 0 ? ShortCount(double(r.found)).c_str()
                                       : "-",
        r.settle_seconds, Shape(r.files_per_level).c_str());
  }

  bool any_writes = false;
  for (const WorkloadResult& r : results) any_writes |= r.writes > 0;
  if (any_writes) {
    std::fprintf(out,
                 "\nWrites (bytes the engine wrote during the workload, its "
                 "settling included; the longest single Put):\n");
    std::fprintf(out, "%-12s %10s %12s %12s %12s %16s\n", "workload", "puts",
                 "MB to tables", "MB to logs", "per user MB", "longest Put ms");
    for (const WorkloadResult& r : results) {
      if (r.writes == 0) continue;
      const double user_mb = double(r.writes) *
                             double(config.key_size + config.value_size) /
                             1048576.0;
      const double table_mb = r.io.table_bytes_written / 1048576.0;
      const double log_mb = r.io.log_bytes_written / 1048576.0;
      std::fprintf(out, "%-12s %10s %12.1f %12.1f %12.2f %16.2f\n",
                   r.name.c_str(), ShortCount(double(r.writes)).c_str(),
                   table_mb, log_mb, (table_mb + log_mb) / user_mb,
                   r.longest_write_us / 1e3);
    }
  }

  auto filtered = [](const WorkloadResult& r) {
    return r.name == "seekprefix" || r.name == "seekprefixmissing" ||
           r.name == "seekempty";
  };
  bool any_filtered = false;
  for (const WorkloadResult& r : results) any_filtered |= filtered(r);
  if (any_filtered) {
    std::fprintf(out,
                 "\nFiltered seeks (a bounded iterator per Seek: one whole "
                 "prefix, or an empty range):\n");
    std::fprintf(out, "%-18s %10s %11s %14s %11s %11s %11s %11s %9s\n",
                 "workload", "seeks/s", "entries/op", "blk reads/Seek",
                 "pfx probes", "pfx skips", "rng probes", "rng skips",
                 "rng FPR");
    for (const WorkloadResult& r : results) {
      if (!filtered(r)) continue;
      const double ops = double(std::max<uint64_t>(r.ops, 1));
      const uint64_t range_absent =
          r.stats.range_filter_negatives + r.stats.range_filter_false_positives;
      const std::string range_fpr =
          range_absent == 0
              ? std::string("-")
              : absl::StrFormat(
                    "%.4f%%", 100.0 *
                                  double(r.stats.range_filter_false_positives) /
                                  double(range_absent));
      std::fprintf(out,
                   "%-18s %10.0f %11.2f %14.4f %11.3f %11.3f %11.3f %11.3f "
                   "%9s\n",
                   r.name.c_str(), r.OpsPerSecond(), double(r.entries) / ops,
                   double(r.stats.iterator_block_reads) /
                       double(std::max<uint64_t>(r.stats.seeks, 1)),
                   double(r.stats.prefix_filter_probes) / ops,
                   double(r.stats.prefix_filter_negatives) / ops,
                   double(r.stats.range_filter_probes) / ops,
                   double(r.stats.range_filter_negatives) / ops,
                   range_fpr.c_str());
    }
    std::fprintf(out,
                 "(probes and skips: tables per Seek; rng FPR: range filter "
                 "false positives over tables holding no key in range, "
                 "judged at Seek(lower bound))\n");
  }

  bool any_scans = false;
  for (const WorkloadResult& r : results) any_scans |= r.entries > 0;
  if (any_scans) {
    std::fprintf(out,
                 "\nScans (an iterator per scan; readseq/readreverse: "
                 "one walk of every entry):\n");
    std::fprintf(out, "%-12s %12s %12s %14s %14s\n", "workload", "entries/s",
                 "entries/op", "blk reads/Seek", "cache hits/Seek");
    for (const WorkloadResult& r : results) {
      if (r.entries == 0) continue;
      const double seeks = double(std::max<uint64_t>(r.stats.seeks, 1));
      std::fprintf(out, "%-12s %12.0f %12.2f %14.4f %14.4f\n", r.name.c_str(),
                   r.seconds > 0 ? double(r.entries) / r.seconds : 0.0,
                   double(r.entries) / double(std::max<uint64_t>(r.ops, 1)),
                   double(r.stats.iterator_block_reads) / seeks,
                   double(r.stats.iterator_block_cache_hits) / seeks);
    }
  }

  bool any_reads = false;
  for (const WorkloadResult& r : results) any_reads |= r.point_reads;
  if (!any_reads) return;
  std::fprintf(out, "\nRead amplification (per Get, from DB::GetReadStats):\n");
  std::fprintf(out, "%-12s %9s %9s %9s %9s %10s %10s %10s %9s %9s %9s %9s\n",
               "workload", "blk reads", "tables", "filter no", "memtable",
               "FPR meas", "FPR theory", "false pos", "cache hit", "dev reads",
               "dev KiB", "tbl loads");
  for (const WorkloadResult& r : results) {
    if (!r.point_reads) continue;
    const ReadStats& s = r.stats;
    const uint64_t absent = s.filter_negatives + s.filter_false_positives;
    std::fprintf(
        out, "%-12s %9.4f %9.3f %9.3f %9.3f %10s %10s %10s %9s %9s %9s %9.4f\n",
        r.name.c_str(), r.PerGet(s.block_reads), r.PerGet(s.tables_probed),
        r.PerGet(s.filter_negatives), r.PerGet(s.memtable_hits),
        absent == 0 ? "-" : Percent(s.MeasuredFpr(), 3).c_str(),
        r.theoretical_fpr ? Percent(*r.theoretical_fpr, 3).c_str() : "-",
        ShortCount(double(s.filter_false_positives)).c_str(),
        s.block_cache_hits + s.block_reads == 0
            ? "-"
            : Percent(r.CacheHitRate(), 1).c_str(),
        config.use_direct_reads
            ? absl::StrFormat("%.4f", r.PerGet(r.io.direct_reads)).c_str()
            : "-",
        r.device_read_bytes < 0
            ? "-"
            : absl::StrFormat("%.2f",
                              r.PerGet(uint64_t(r.device_read_bytes)) / 1024.0)
                  .c_str(),
        r.PerGet(s.table_loads));
  }
  std::fprintf(out,
               "\nblk reads: blocks read from table files per Get (read "
               "amplification); tables: tables whose key range covered the "
               "key;\nfilter no: tables skipped by their filter; FPR meas: "
               "false positives / (negatives + false positives); cache hit: "
               "block cache hits / block lookups;\ndev reads: reads of table "
               "files opened for direct reads (device reads) per Get; dev "
               "KiB: KiB this process read from storage per Get "
               "(/proc/self/io read_bytes, all threads, compaction "
               "included);\ntbl loads: tables opened again per Get (footer, "
               "index, filter re-read) because max_open_files keeps fewer "
               "open.\n");
}

void PrintSummary(const BenchConfig& config, const RunSummary& sum,
                  std::FILE* out) {
  constexpr double kMiB = 1048576.0;
  const double memtables = 2.0 * double(config.write_buffer_size);
  const double budget = double(config.cache_size) + memtables +
                        double(sum.filter_bytes) + double(sum.index_bytes);
  std::fprintf(out, "\nAmplification and memory (whole run):\n");
  std::fprintf(out,
               "  write amplification %.2f  ((table %.1f MiB + log %.1f MiB) "
               "/ user %.1f MiB written)\n",
               sum.WriteAmplification(), sum.io.table_bytes_written / kMiB,
               sum.io.log_bytes_written / kMiB, sum.user_bytes_written / kMiB);
  std::fprintf(out,
               "  space amplification %.2f  (live tables %.1f MiB / live user "
               "data %.1f MiB)\n",
               sum.SpaceAmplification(), sum.live_table_bytes / kMiB,
               sum.live_user_bytes / kMiB);
  std::fprintf(out,
               "  memory: filters %.1f MiB, indexes %.1f MiB (open tables), "
               "block cache %.1f MiB, memtables <= %.1f MiB; sum %.1f MiB\n",
               sum.filter_bytes / kMiB, sum.index_bytes / kMiB,
               config.cache_size / kMiB, memtables / kMiB, budget / kMiB);
  std::fprintf(out, "  peak RSS %.1f MiB (%+.1f MiB over the sum)\n",
               sum.peak_rss_bytes / kMiB,
               (double(sum.peak_rss_bytes) - budget) / kMiB);
}

Json SummaryToJson(const BenchConfig& config, const RunSummary& sum) {
  Json j;
  j["user_bytes_written"] = sum.user_bytes_written;
  j["table_bytes_written"] = sum.io.table_bytes_written;
  j["log_bytes_written"] = sum.io.log_bytes_written;
  j["other_bytes_written"] = sum.io.other_bytes_written;
  j["write_amplification"] = sum.WriteAmplification();
  j["live_table_bytes"] = sum.live_table_bytes;
  j["live_user_bytes"] = sum.live_user_bytes;
  j["space_amplification"] = sum.SpaceAmplification();
  j["filter_memory_bytes"] = sum.filter_bytes;
  j["index_memory_bytes"] = sum.index_bytes;
  j["block_cache_bytes"] = config.cache_size;
  j["memtable_bytes_max"] = 2 * uint64_t(config.write_buffer_size);
  j["peak_rss_bytes"] = sum.peak_rss_bytes;
  return j;
}

Json ConfigToJson(const BenchConfig& c) {
  Json j;
  j["num"] = c.num;
  j["reads"] = c.reads;
  j["key_size"] = c.key_size;
  j["value_size"] = c.value_size;
  j["incompressible_values"] = c.incompressible_values;
  j["filter_kind"] = FilterChoiceName(c.filter);
  j["bits_per_key"] = c.filter == FilterChoice::kNone ? 0.0 : c.bits_per_key;
  j["filter_allocation"] = FilterAllocationName(c.filter_allocation);
  j["compression"] = c.compression == Compression::kNone ? "none" : "snappy";
  j["cache_size"] = c.cache_size;
  j["write_buffer_size"] = c.write_buffer_size;
  j["max_file_size"] = c.max_file_size;
  j["threads"] = c.threads;
  j["seed"] = c.seed;
  j["use_direct_reads"] = c.use_direct_reads;
  j["max_open_files"] = c.max_open_files;
  return j;
}

Json ResultToJson(const WorkloadResult& r) {
  Json j;
  j["workload"] = r.name;
  j["ops"] = r.ops;
  j["seconds"] = r.seconds;
  j["ops_per_sec"] = r.OpsPerSecond();
  j["bytes"] = r.bytes;
  j["found"] = r.found;
  if (r.entries > 0) {
    j["entries"] = r.entries;
    j["seeks"] = r.stats.seeks;
    j["iterator_block_reads"] = r.stats.iterator_block_reads;
    j["iterator_block_cache_hits"] = r.stats.iterator_block_cache_hits;
  }
  if (r.name == "seekprefix" || r.name == "seekprefixmissing" ||
      r.name == "seekempty") {
    j["seeks"] = r.stats.seeks;
    j["iterator_block_reads"] = r.stats.iterator_block_reads;
    j["prefix_filter_probes"] = r.stats.prefix_filter_probes;
    j["prefix_filter_negatives"] = r.stats.prefix_filter_negatives;
    j["range_filter_probes"] = r.stats.range_filter_probes;
    j["range_filter_negatives"] = r.stats.range_filter_negatives;
    j["range_filter_false_positives"] = r.stats.range_filter_false_positives;
  }
  j["settle_seconds"] = r.settle_seconds;
  j["latency_us"] = {{"mean", r.latency_us.Mean()},
                     {"p50", r.latency_us.Percentile(50)},
                     {"p99", r.latency_us.Percentile(99)},
                     {"p99.9", r.latency_us.Percentile(99.9)},
                     {"max", r.latency_us.Max()}};
  if (r.point_reads) {
    const ReadStats& s = r.stats;
    j["read_stats"] = {{"gets", s.gets},
                       {"memtable_hits", s.memtable_hits},
                       {"tables_probed", s.tables_probed},
                       {"filter_negatives", s.filter_negatives},
                       {"filter_positives", s.filter_positives},
                       {"filter_false_positives", s.filter_false_positives},
                       {"block_cache_hits", s.block_cache_hits},
                       {"block_reads", s.block_reads},
                       {"bytes_read", s.bytes_read},
                       {"table_loads", s.table_loads},
                       {"filter_unit_loads", s.filter_unit_loads}};
    j["device_reads_per_get"] = r.PerGet(r.io.direct_reads);
    j["device_read_bytes"] = r.device_read_bytes;
    j["table_loads_per_get"] = r.PerGet(s.table_loads);
    j["block_reads_per_get"] = r.PerGet(s.block_reads);
    j["tables_probed_per_get"] = r.PerGet(s.tables_probed);
    j["filter_negatives_per_get"] = r.PerGet(s.filter_negatives);
    j["measured_fpr"] = s.MeasuredFpr();
    j["theoretical_fpr"] =
        r.theoretical_fpr ? Json(*r.theoretical_fpr) : Json(nullptr);
    j["block_cache_hit_rate"] = r.CacheHitRate();
  }
  j["writes"] = r.writes;
  j["longest_write_us"] = r.longest_write_us;
  j["table_bytes_written"] = r.io.table_bytes_written;
  j["log_bytes_written"] = r.io.log_bytes_written;
  j["files_per_level"] = r.files_per_level;
  return j;
}

}  // namespace sift::bench
