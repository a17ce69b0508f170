#include "bench/kvbench/sweep.h"

#include <algorithm>
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
const char* kOptimalBlockedColor = "#9467bd";
const char* kOptimalFuseColor = "#2ca02c";
const char* kReferenceColors[] = {"#7f7f7f", "#8c564b", "#e377c2"};

struct Variant {
  FilterChoice filter;
  FilterAllocation allocation;
};

// What each row of the panels is.
std::string VariantName(FilterChoice f, FilterAllocation a) {
  return absl::StrCat(FilterAllocationName(a), " ", FilterChoiceName(f));
}

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
    std::vector<Variant> variants;
    if (b == 0) {
      variants = {{FilterChoice::kNone, FilterAllocation::kUniform}};
    } else {
      variants = {{FilterChoice::kStandard, FilterAllocation::kUniform},
                  {FilterChoice::kBlocked, FilterAllocation::kUniform},
                  {FilterChoice::kBlocked, FilterAllocation::kOptimal},
                  {FilterChoice::kBinaryFuse, FilterAllocation::kOptimal}};
    }
    for (const Variant& v : variants) {
      BenchConfig config = base;
      config.bits_per_key = b;
      config.filter = v.filter;
      config.filter_allocation = v.allocation;
      config.use_existing_db = false;
      std::fprintf(stderr, "sweep: %g bits/key, %s filter\n", b,
                   VariantName(v.filter, v.allocation).c_str());
      SweepRow row;
      row.bits_per_key = b;
      row.filter = v.filter;
      row.allocation = v.allocation;
      row.theoretical_fpr = 1.0;
      if (v.filter != FilterChoice::kNone) {
        absl::StatusOr<FilterShape> shape =
            ShapeOfFilter(FilterKindOf(v.filter), b);
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
  std::fprintf(out, "%8s %-19s %3s %10s %10s %12s %10s %12s %12s %12s  %s\n",
               "bits/key", "filter", "k", "FPR theory", "FPR meas",
               "miss blk/Get", "miss tbl/G", "miss ops/s", "hit blk/Get",
               "hit ops/s", "tables per level");
  for (const SweepRow& r : rows) {
    const ReadStats& m = r.missing.stats;
    std::fprintf(
        out,
        "%8g %-19s %3u %9.4f%% %9.4f%% %12.4f %10.3f %12.0f %12.4f %12.0f  "
        "%s\n",
        r.bits_per_key, VariantName(r.filter, r.allocation).c_str(),
        r.num_probes, r.theoretical_fpr * 100,
        r.filter == FilterChoice::kNone ? 100.0 : m.MeasuredFpr() * 100,
        r.missing.PerGet(m.block_reads), r.missing.PerGet(m.tables_probed),
        r.missing.OpsPerSecond(), r.present.PerGet(r.present.stats.block_reads),
        r.present.OpsPerSecond(),
        absl::StrJoin(r.files_per_level, " ").c_str());
  }
}

std::string SweepCsv(const std::vector<SweepRow>& rows) {
  std::string csv =
      "bits_per_key,filter_kind,filter_allocation,num_probes,theoretical_fpr,"
      "measured_fpr,readmissing_block_reads_per_get,readmissing_tables_probed_"
      "per_get,"
      "readmissing_filter_negatives_per_get,readmissing_false_positives,"
      "readmissing_ops_per_sec,readrandom_block_reads_per_get,"
      "readrandom_measured_fpr,readrandom_ops_per_sec,fillrandom_ops_per_sec,"
      "filter_memory_bytes,files_per_level\n";
  for (const SweepRow& r : rows) {
    const ReadStats& m = r.missing.stats;
    const ReadStats& p = r.present.stats;
    absl::StrAppendFormat(
        &csv,
        "%g,%s,%s,%u,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.0f,%.6g,%.6g,%.0f,%.0f,%d,"
        "%s\n",
        r.bits_per_key, FilterChoiceName(r.filter),
        FilterAllocationName(r.allocation), r.num_probes, r.theoretical_fpr,
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
                     const std::vector<ReferencePoint>& references,
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
  PlotPanel spent;
  spent.title = "Where the bits go: absent keys";
  spent.x_label = "average filter bits per key";
  spent.y_label = "blocks read per absent-key Get (log scale)";
  spent.log_y = true;
  spent.legend_bottom_left = true;

  // Without a filter (0 bits/key) every variant starts from the same point.
  std::optional<SweepRow> none;
  for (const SweepRow& r : rows) {
    if (r.filter == FilterChoice::kNone) none = r;
  }
  auto miss_reads = [](const SweepRow& r) {
    return r.missing.PerGet(r.missing.stats.block_reads);
  };
  // The layouts against their theory: uniform allocation, where every table
  // has the setting's bits per key.
  for (FilterChoice kind : {FilterChoice::kStandard, FilterChoice::kBlocked}) {
    const std::string name = FilterChoiceName(kind);
    const char* color =
        kind == FilterChoice::kStandard ? kStandardColor : kBlockedColor;
    PlotSeries miss{"readmissing, " + name, color, false, true, {}};
    PlotSeries hit{"readrandom, " + name, color, true, true, {}};
    PlotSeries measured{"measured, " + name, color, false, true, {}};
    PlotSeries theory{"theory, " + name, color, true, false, {}};
    if (none) {
      miss.points.emplace_back(0, miss_reads(*none));
      hit.points.emplace_back(
          0, none->present.PerGet(none->present.stats.block_reads));
    }
    for (const SweepRow& r : rows) {
      if (r.filter != kind || r.allocation != FilterAllocation::kUniform) {
        continue;
      }
      miss.points.emplace_back(r.bits_per_key, miss_reads(r));
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
  // The same memory spent three ways, and the peers at the same setting.
  const Variant spent_variants[] = {
      {FilterChoice::kBlocked, FilterAllocation::kUniform},
      {FilterChoice::kBlocked, FilterAllocation::kOptimal},
      {FilterChoice::kBinaryFuse, FilterAllocation::kOptimal}};
  const char* spent_colors[] = {kBlockedColor, kOptimalBlockedColor,
                                kOptimalFuseColor};
  for (size_t i = 0; i < std::size(spent_variants); ++i) {
    const Variant& v = spent_variants[i];
    PlotSeries series{"sift, " + VariantName(v.filter, v.allocation),
                      spent_colors[i],
                      false,
                      true,
                      {}};
    for (const SweepRow& r : rows) {
      if (r.filter == v.filter && r.allocation == v.allocation) {
        series.points.emplace_back(r.bits_per_key, miss_reads(r));
      }
    }
    spent.series.push_back(std::move(series));
  }
  std::vector<std::string> engines;
  for (const ReferencePoint& p : references) {
    if (std::find(engines.begin(), engines.end(), p.engine) == engines.end()) {
      engines.push_back(p.engine);
    }
  }
  for (size_t e = 0; e < engines.size(); ++e) {
    PlotSeries series{engines[e] + " (peer_bench)",
                      kReferenceColors[e % std::size(kReferenceColors)],
                      true,
                      true,
                      {}};
    for (const ReferencePoint& p : references) {
      if (p.engine == engines[e]) {
        series.points.emplace_back(p.bits_per_key, p.block_reads_per_get);
      }
    }
    std::sort(series.points.begin(), series.points.end());
    spent.series.push_back(std::move(series));
  }

  const std::string caption = absl::StrFormat(
      "%d keys in random order, %d reads per point, %d B keys, %d B values, "
      "%s compression, %.0f MiB cache, %.0f MiB write buffer, %.0f MiB "
      "tables%s",
      base.num, base.reads, base.key_size, base.value_size,
      base.compression == Compression::kNone ? "no" : "snappy",
      base.cache_size / 1048576.0, base.write_buffer_size / 1048576.0,
      base.max_file_size / 1048576.0,
      compacted ? "; compacted before the reads"
                : "; read as the fill left the tree (after settling)");
  return RenderSvg("What each bit per key of filter buys", {reads, fpr, spent},
                   caption);
}

absl::StatusOr<std::vector<ReferencePoint>> LoadReferences(
    const std::vector<std::string>& paths) {
  std::vector<ReferencePoint> points;
  for (const std::string& path : paths) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return absl::NotFoundError(absl::StrCat("cannot read ", path));
    const Json doc = Json::parse(f, nullptr, /*allow_exceptions=*/false);
    auto bad = [&](const char* what) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": not a peer_bench --json document (", what, ")"));
    };
    if (doc.is_discarded()) return bad("unparsable JSON");
    const Json* settings =
        doc.contains("settings") ? &doc["settings"] : nullptr;
    if (settings == nullptr || !settings->contains("bits_per_key") ||
        !(*settings)["bits_per_key"].is_number() || !doc.contains("runs") ||
        !doc["runs"].is_array()) {
      return bad("no settings.bits_per_key or runs");
    }
    for (const Json& run : doc["runs"]) {
      if (!run.contains("engine") || !run["engine"].is_string() ||
          !run.contains("results") || !run["results"].contains("readmissing")) {
        continue;  // an engine that did not run readmissing
      }
      const Json& missing = run["results"]["readmissing"];
      if (!missing.contains("block_reads_per_get") ||
          !missing["block_reads_per_get"].is_number()) {
        return bad("readmissing without block_reads_per_get");
      }
      ReferencePoint p;
      p.engine = run["engine"].get<std::string>();
      p.bits_per_key = (*settings)["bits_per_key"].get<double>();
      p.block_reads_per_get = missing["block_reads_per_get"].get<double>();
      if (settings->contains("num") && (*settings)["num"].is_number()) {
        p.num = (*settings)["num"].get<uint64_t>();
      }
      points.push_back(std::move(p));
    }
  }
  return points;
}

Json SweepJson(const std::vector<SweepRow>& rows) {
  Json j = Json::array();
  for (const SweepRow& r : rows) {
    Json row;
    row["bits_per_key"] = r.bits_per_key;
    row["filter_kind"] = FilterChoiceName(r.filter);
    row["filter_allocation"] = FilterAllocationName(r.allocation);
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
                             const std::vector<ReferencePoint>& references,
                             const std::string& dir, bool compacted) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"sweep.csv", SweepCsv(rows)},
        {"sweep.svg", SweepSvg(base, rows, references, compacted)}}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace sift::bench
