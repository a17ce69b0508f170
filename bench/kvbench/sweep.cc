#include "bench/kvbench/sweep.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/kvbench/filter_theory.h"
#include "bench/kvbench/svg_plot.h"

namespace sift::bench {
namespace {

const char* kStandardColor = "#1f77b4";
const char* kBlockedColor = "#d62728";

absl::StatusOr<WorkloadResult> RunOne(Runner* runner, const char* name) {
  return runner->Run(name, nullptr);
}

}  // namespace

absl::StatusOr<std::vector<double>> ParseBitsList(const std::string& text) {
  std::vector<double> bits;
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(text.data(), text.size()), ',',
                      absl::SkipWhitespace())) {
    double v;
    if (!absl::SimpleAtod(part, &v) || v < 0 || v > 100) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--sweep_bits: '", part, "' is not a number from 0 to 100"));
    }
    bits.push_back(v);
  }
  if (bits.empty()) {
    return absl::InvalidArgumentError("--sweep_bits: empty list");
  }
  return bits;
}

absl::StatusOr<std::vector<SweepRow>> RunSweep(const BenchConfig& base,
                                               const std::vector<double>& bits,
                                               bool compact) {
  std::vector<SweepRow> rows;
  for (double b : bits) {
    std::vector<FilterChoice> kinds;
    if (b == 0) {
      kinds = {FilterChoice::kNone};
    } else {
      kinds = {FilterChoice::kStandard, FilterChoice::kBlocked};
    }
    for (FilterChoice kind : kinds) {
      BenchConfig config = base;
      config.bits_per_key = b;
      config.filter = kind;
      config.use_existing_db = false;
      std::fprintf(stderr, "sweep: %g bits/key, %s filter\n", b,
                   FilterChoiceName(kind));
      SweepRow row;
      row.bits_per_key = b;
      row.filter = kind;
      row.theoretical_fpr = 1.0;
      if (kind != FilterChoice::kNone) {
        absl::StatusOr<FilterShape> shape = ShapeOfFilter(
            kind == FilterChoice::kStandard ? FilterKind::kStandardBloom
                                            : FilterKind::kBlockedBloom,
            b);
        if (!shape.ok()) return shape.status();
        row.num_probes = shape->num_probes;
        row.theoretical_fpr = shape->theoretical_fpr;
      }
      absl::StatusOr<std::unique_ptr<Runner>> runner = Runner::Open(config);
      if (!runner.ok()) return runner.status();
      absl::StatusOr<WorkloadResult> fill = RunOne(runner->get(), "fillrandom");
      if (!fill.ok()) return fill.status();
      row.fill = *std::move(fill);
      if (compact) {
        absl::StatusOr<WorkloadResult> c = RunOne(runner->get(), "compact");
        if (!c.ok()) return c.status();
      }
      absl::StatusOr<WorkloadResult> missing =
          RunOne(runner->get(), "readmissing");
      if (!missing.ok()) return missing.status();
      row.missing = *std::move(missing);
      absl::StatusOr<WorkloadResult> present =
          RunOne(runner->get(), "readrandom");
      if (!present.ok()) return present.status();
      row.present = *std::move(present);
      row.files_per_level = row.present.files_per_level;
      // Read before the runner closes the database.
      if (std::optional<std::string> mem =
              (*runner)->Property("sift.filter-memory-bytes")) {
        row.filter_memory_bytes = std::strtoull(mem->c_str(), nullptr, 10);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

void PrintSweep(const std::vector<SweepRow>& rows, std::FILE* out) {
  std::fprintf(out,
               "\nFilter sweep (readmissing = absent keys, readrandom = "
               "present keys):\n");
  std::fprintf(out, "%8s %-9s %3s %10s %10s %12s %10s %12s %12s %12s  %s\n",
               "bits/key", "filter", "k", "FPR theory", "FPR meas",
               "miss blk/Get", "miss tbl/G", "miss ops/s", "hit blk/Get",
               "hit ops/s", "tables per level");
  for (const SweepRow& r : rows) {
    const ReadStats& m = r.missing.stats;
    std::fprintf(
        out,
        "%8g %-9s %3u %9.4f%% %9.4f%% %12.4f %10.3f %12.0f %12.4f %12.0f  %s\n",
        r.bits_per_key, FilterChoiceName(r.filter), r.num_probes,
        r.theoretical_fpr * 100,
        r.filter == FilterChoice::kNone ? 100.0 : m.MeasuredFpr() * 100,
        r.missing.PerGet(m.block_reads), r.missing.PerGet(m.tables_probed),
        r.missing.OpsPerSecond(), r.present.PerGet(r.present.stats.block_reads),
        r.present.OpsPerSecond(),
        absl::StrJoin(r.files_per_level, " ").c_str());
  }
}

std::string SweepCsv(const std::vector<SweepRow>& rows) {
  std::string csv =
      "bits_per_key,filter_kind,num_probes,theoretical_fpr,measured_fpr,"
      "readmissing_block_reads_per_get,readmissing_tables_probed_per_get,"
      "readmissing_filter_negatives_per_get,readmissing_false_positives,"
      "readmissing_ops_per_sec,readrandom_block_reads_per_get,"
      "readrandom_measured_fpr,readrandom_ops_per_sec,fillrandom_ops_per_sec,"
      "filter_memory_bytes,files_per_level\n";
  for (const SweepRow& r : rows) {
    const ReadStats& m = r.missing.stats;
    const ReadStats& p = r.present.stats;
    absl::StrAppendFormat(
        &csv,
        "%g,%s,%u,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.0f,%.6g,%.6g,%.0f,%.0f,%d,%s\n",
        r.bits_per_key, FilterChoiceName(r.filter), r.num_probes,
        r.theoretical_fpr,
        r.filter == FilterChoice::kNone ? 1.0 : m.MeasuredFpr(),
        r.missing.PerGet(m.block_reads), r.missing.PerGet(m.tables_probed),
        r.missing.PerGet(m.filter_negatives), m.filter_false_positives,
        r.missing.OpsPerSecond(), r.present.PerGet(p.block_reads),
        r.filter == FilterChoice::kNone ? 1.0 : p.MeasuredFpr(),
        r.present.OpsPerSecond(), r.fill.OpsPerSecond(), r.filter_memory_bytes,
        absl::StrJoin(r.files_per_level, " "));
  }
  return csv;
}

std::string SweepSvg(const BenchConfig& base, const std::vector<SweepRow>& rows,
                     bool compacted) {
  PlotPanel reads;
  reads.title = "Block reads per Get";
  reads.x_label = "filter bits per key";
  reads.y_label = "blocks read from table files per Get (log scale)";
  // Log scale: the interesting part, readmissing near 0.01 and below, would
  // be a flat line on a linear axis next to readrandom's ~1.
  reads.log_y = true;
  reads.legend_bottom_left = true;
  PlotPanel fpr;
  fpr.title = "False-positive rate";
  fpr.x_label = "filter bits per key";
  fpr.y_label = "false-positive rate (log scale)";
  fpr.log_y = true;

  // Without a filter (0 bits/key) both layouts start from the same point.
  std::optional<SweepRow> none;
  for (const SweepRow& r : rows) {
    if (r.filter == FilterChoice::kNone) none = r;
  }
  for (FilterChoice kind : {FilterChoice::kStandard, FilterChoice::kBlocked}) {
    const std::string name = FilterChoiceName(kind);
    const char* color =
        kind == FilterChoice::kStandard ? kStandardColor : kBlockedColor;
    PlotSeries miss{"readmissing, " + name, color, false, true, {}};
    PlotSeries hit{"readrandom, " + name, color, true, true, {}};
    PlotSeries measured{"measured, " + name, color, false, true, {}};
    PlotSeries theory{"theory, " + name, color, true, false, {}};
    if (none) {
      miss.points.emplace_back(
          0, none->missing.PerGet(none->missing.stats.block_reads));
      hit.points.emplace_back(
          0, none->present.PerGet(none->present.stats.block_reads));
    }
    for (const SweepRow& r : rows) {
      if (r.filter != kind) continue;
      miss.points.emplace_back(r.bits_per_key,
                               r.missing.PerGet(r.missing.stats.block_reads));
      hit.points.emplace_back(r.bits_per_key,
                              r.present.PerGet(r.present.stats.block_reads));
      measured.points.emplace_back(r.bits_per_key,
                                   r.missing.stats.MeasuredFpr());
      theory.points.emplace_back(r.bits_per_key, r.theoretical_fpr);
    }
    reads.series.push_back(std::move(miss));
    reads.series.push_back(std::move(hit));
    fpr.series.push_back(std::move(measured));
    fpr.series.push_back(std::move(theory));
  }
  const std::string caption = absl::StrFormat(
      "%d keys in random order, %d reads per point, %d B keys, %d B values, "
      "%s compression, %.0f MiB cache, %.0f MiB write buffer, %.0f MiB "
      "tables%s",
      base.num, base.reads, base.key_size, base.value_size,
      base.compression == Compression::kNone ? "no" : "snappy",
      base.cache_size / 1048576.0, base.write_buffer_size / 1048576.0,
      base.max_file_size / 1048576.0,
      compacted ? "; compacted before the reads" : "");
  return RenderSvg("What each bit per key of filter buys", {reads, fpr},
                   caption);
}

Json SweepJson(const std::vector<SweepRow>& rows) {
  Json j = Json::array();
  for (const SweepRow& r : rows) {
    Json row;
    row["bits_per_key"] = r.bits_per_key;
    row["filter_kind"] = FilterChoiceName(r.filter);
    row["num_probes"] = r.num_probes;
    row["theoretical_fpr"] = r.theoretical_fpr;
    row["filter_memory_bytes"] = r.filter_memory_bytes;
    row["fillrandom"] = ResultToJson(r.fill);
    row["readmissing"] = ResultToJson(r.missing);
    row["readrandom"] = ResultToJson(r.present);
    j.push_back(std::move(row));
  }
  return j;
}

absl::Status WriteSweepFiles(const BenchConfig& base,
                             const std::vector<SweepRow>& rows,
                             const std::string& dir, bool compacted) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"sweep.csv", SweepCsv(rows)},
        {"sweep.svg", SweepSvg(base, rows, compacted)}}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace sift::bench
