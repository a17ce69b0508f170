#include "db/db_properties.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/filter_report.h"
#include "db/probe_shares.h"
#include "db/version.h"
#include "filter/filter.h"
#include "table/table.h"
#include "table/table_properties.h"
#include "util/logging.h"

namespace sift {
namespace {

constexpr double kMiB = 1048576.0;

// Per-level filter figures from the filters of the tables open now; a table
// not yet opened is left out (reading it here would cost I/O).
std::string FilterStatsText(DBState& state, const Version& current) {
  // Probe shares come from every table's key range (no I/O).
  std::vector<std::vector<KeySpan>> spans(config::kNumLevels);
  for (int level = 0; level < config::kNumLevels; ++level) {
    for (const auto& f : current.files(level)) {
      spans[level].push_back(SpanOf(*f));
    }
  }
  const std::vector<std::vector<double>> shares = TreeProbeShares(spans);
  std::vector<TableFilterFacts> facts;
  int not_open = 0;
  for (int level = 0; level < config::kNumLevels; ++level) {
    for (size_t i = 0; i < current.files(level).size(); ++i) {
      const auto& f = current.files(level)[i];
      const TableCache::TableRef ref =
          state.table_cache->LookupOpenTable(f->number);
      if (!ref.valid()) {
        ++not_open;
        continue;
      }
      TableFilterFacts t;
      t.level = level;
      t.entries = ref.table().properties().num_entries;
      t.probe_share = shares[level][i];
      if (const FilterReader* filter = ref.table().filter();
          filter != nullptr) {
        t.has_filter = true;
        t.filter = filter->info();
      }
      facts.push_back(t);
    }
  }
  std::string out = FilterReportText(SummarizeFilters(facts));
  if (not_open > 0) {
    absl::StrAppend(&out, "  (", not_open,
                    " tables not open yet are not counted)\n");
  }
  return out;
}

// Filter memory of level `level`'s tables that are open now (a table not
// yet opened holds none).
TableCache::FilterBytes LevelFilterBytes(DBState& state, const Version& current,
                                         int level) {
  TableCache::FilterBytes sum;
  for (const auto& f : current.files(level)) {
    const TableCache::FilterBytes b =
        state.table_cache->FilterMemoryUsageOf(f->number);
    sum.total += b.total;
    sum.range += b.range;
  }
  return sum;
}

// The level N named by `name` = `prefix` + decimal N, if it is one.
std::optional<int> LevelOfProperty(std::string_view name,
                                   std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = name.substr(prefix.size());
  uint64_t level = 0;
  if (!ConsumeDecimalNumber(&rest, &level) || !rest.empty() ||
      level >= static_cast<uint64_t>(config::kNumLevels)) {
    return std::nullopt;
  }
  return static_cast<int>(level);
}

std::string StatsText(DBState& state) {
  std::shared_ptr<const Version> current;
  std::array<CompactionStats, config::kNumLevels> level_stats;
  RecoveryReport recovery;
  absl::Status bg_error;
  WriteStalls stalls;
  {
    MutexLock lock(&state.mutex);
    current = state.versions->current();
    level_stats = state.level_stats;
    stalls = state.write_stalls;
    recovery = state.recovery;
    bg_error = state.bg_error;
  }

  std::string out;
  absl::StrAppend(&out,
                  "Level  Files   Size(MiB)  Filter(KiB)  Range(KiB)    "
                  "Time(s)  Read(MiB)  Write(MiB)\n"
                  "-----  -----  ----------  -----------  ----------  "
                  "---------  ---------  ----------\n");
  for (int level = 0; level < config::kNumLevels; ++level) {
    const CompactionStats& cs = level_stats[level];
    if (current->NumFiles(level) == 0 && cs.micros == 0 &&
        cs.output_files == 0) {
      continue;
    }
    // Filter is point and range filters together, Range the range
    // filters' part.
    const TableCache::FilterBytes filter =
        LevelFilterBytes(state, *current, level);
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "%5d  %5d  %10.2f  %11.1f  %10.1f  %9.2f  %9.2f  %10.2f\n", level,
            current->NumFiles(level), current->NumLevelBytes(level) / kMiB,
            filter.total / 1024.0, filter.range / 1024.0, cs.micros / 1e6,
            cs.bytes_read / kMiB, cs.bytes_written / kMiB));
  }

  absl::StrAppend(&out, FilterStatsText(state, *current));

  const ReadStats rs = state.super_versions.Total();
  absl::StrAppend(
      &out, "Read stats since open:\n",
      absl::StrFormat("  gets %u, memtable hits %u, tables probed %u\n",
                      rs.gets, rs.memtable_hits, rs.tables_probed),
      absl::StrFormat("  filter: %u negatives, %u positives, %u false "
                      "positives; measured FPR %.4f%%\n",
                      rs.filter_negatives, rs.filter_positives,
                      rs.filter_false_positives, 100.0 * rs.MeasuredFpr()),
      absl::StrFormat("  blocks: %u read from files (%u bytes), %u block "
                      "cache hits; block reads per Get %.4f\n",
                      rs.block_reads, rs.bytes_read, rs.block_cache_hits,
                      rs.ReadAmplification()),
      absl::StrFormat("  tables loaded again (not open): %u\n", rs.table_loads),
      absl::StrFormat("  filter units loaded from files: %u\n",
                      rs.filter_unit_loads),
      absl::StrFormat("  iterators: %u seeks, %u blocks read from files, %u "
                      "block cache hits\n",
                      rs.seeks, rs.iterator_block_reads,
                      rs.iterator_block_cache_hits),
      absl::StrFormat("  prefix filter: %u probes, %u negatives\n",
                      rs.prefix_filter_probes, rs.prefix_filter_negatives),
      absl::StrFormat("  range filter: %u probes, %u negatives, %u false "
                      "positives\n",
                      rs.range_filter_probes, rs.range_filter_negatives,
                      rs.range_filter_false_positives));
  absl::StrAppend(&out, "Write stalls since open:\n");
  for (int i = 0; i < WriteStalls::kNumCauses; ++i) {
    const auto cause = static_cast<WriteStalls::Cause>(i);
    absl::StrAppend(
        &out, absl::StrFormat("  %-16s %8u, %10.1f ms, longest %8.1f ms\n",
                              WriteStalls::Name(cause), stalls.count(cause),
                              stalls.micros(cause) / 1e3,
                              stalls.longest_micros(cause) / 1e3));
  }
  absl::StrAppend(&out, "Memory: filters ",
                  state.table_cache->FilterMemoryUsage(), " bytes, indexes ",
                  state.table_cache->IndexMemoryUsage(), " bytes, ",
                  state.table_cache->NumOpenTables(), " open tables\n");
  if (recovery.logs_replayed > 0) {
    absl::StrAppend(&out, "Recovery: ", recovery.logs_replayed, " WALs, ",
                    recovery.records_replayed, " records replayed");
    if (recovery.stopped_at_damage) {
      absl::StrAppend(&out, "; stopped at damage, ", recovery.records_dropped,
                      " records in ", recovery.bytes_dropped,
                      " bytes not replayed (", recovery.first_error, ")");
    }
    absl::StrAppend(&out, "\n");
  }
  if (!bg_error.ok()) {
    absl::StrAppend(
        &out, "Background error (writes fail): ", bg_error.ToString(), "\n");
  }
  return out;
}

}  // namespace

std::optional<std::string> GetDBProperty(DBState& state,
                                         std::string_view name) {
  constexpr std::string_view kPrefix = "sift.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());

  if (const std::optional<int> level =
          LevelOfProperty(name, "num-files-at-level")) {
    MutexLock lock(&state.mutex);
    return absl::StrCat(state.versions->NumLevelFiles(*level));
  }
  if (const std::optional<int> level =
          LevelOfProperty(name, "filter-memory-bytes-at-level")) {
    std::shared_ptr<const Version> current;
    {
      MutexLock lock(&state.mutex);
      current = state.versions->current();
    }
    return absl::StrCat(LevelFilterBytes(state, *current, *level).total);
  }
  if (name == "stats") return StatsText(state);
  if (name == "recovery") {
    MutexLock lock(&state.mutex);
    return RecoveryReportText(state.recovery);
  }
  if (name == "write-stalls") {
    MutexLock lock(&state.mutex);
    return state.write_stalls.ToString();
  }
  if (name == "bytes-written") {
    MutexLock lock(&state.mutex);
    uint64_t total = state.wal_bytes_written;
    for (const CompactionStats& cs : state.level_stats) {
      total += cs.bytes_written;
    }
    return absl::StrCat(total);
  }
  if (name == "filter-memory-bytes") {
    return absl::StrCat(state.table_cache->FilterMemoryUsage());
  }
  if (name == "index-memory-bytes") {
    return absl::StrCat(state.table_cache->IndexMemoryUsage());
  }
  if (name == "sstables") {
    std::shared_ptr<const Version> current;
    {
      MutexLock lock(&state.mutex);
      current = state.versions->current();
    }
    return current->DebugString();
  }
  if (name == "approximate-memory-usage") {
    size_t total = 0;
    {
      MutexLock lock(&state.mutex);
      total += state.mem()->ApproximateMemoryUsage();
      if (state.imm() != nullptr)
        total += state.imm()->ApproximateMemoryUsage();
    }
    if (state.block_cache != nullptr) {
      total += state.block_cache->TotalCharge();
    }
    return absl::StrCat(total);
  }
  return std::nullopt;
}

}  // namespace sift
