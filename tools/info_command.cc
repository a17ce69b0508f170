// kvtool info DB: the shape of a database read from its files (MANIFEST,
// tables, logs) without opening it: levels, tables, bytes, key ranges, filter
// memory, per-level filter bits/key, FPR and expected false positives per
// absent Get (db/filter_report.h, shared with sift.stats), sequence numbers,
// live logs; optionally the engine's own sift.stats.

#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/filter_report.h"
#include "db/probe_shares.h"
#include "db/wal_link.h"
#include "db/write_batch_internal.h"
#include "filter/filter.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tools/command.h"
#include "tools/db_files.h"
#include "tools/log_scan.h"
#include "tools/output.h"
#include "tools/table_inspect.h"

namespace sift::tools {

namespace {

struct InfoArgs {
  OutputOptions out;
  std::string db;
  bool tables = false;
  bool engine_stats = false;
};

struct TableInfo {
  int level = 0;
  FileMetaData meta;
  uint64_t entries = 0;
  uint64_t filter_memory = 0;  // what the parsed filter holds in memory
  uint64_t filter_keys = 0;
  double filter_bits_per_key = 0;
  std::optional<FilterInfo> filter;  // the parsed filter's header, if any
  std::string error;                 // why the table could not be read
};

struct LevelInfo {
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t entries = 0;
  uint64_t filter_memory = 0;
  std::string smallest;  // user keys
  std::string largest;
};

struct LogInfo {
  uint64_t number = 0;
  uint64_t size = 0;
  uint64_t records = 0;
  uint64_t ops = 0;
  SequenceNumber first_seq = 0;
  SequenceNumber last_seq = 0;
  std::vector<Problem> problems;
};

TableInfo ReadTable(Env* env, const std::string& dbname, int level,
                    const FileMetaData& meta) {
  TableInfo t;
  t.level = level;
  t.meta = meta;
  TableReport report;
  InspectOptions options;
  options.read_data_blocks = false;
  absl::Status s =
      InspectTable(env, TableFileName(dbname, meta.number), options, &report);
  if (!s.ok()) {
    t.error = std::string(s.message());
    return t;
  }
  if (!report.problems.empty()) {
    t.error = absl::StrFormat("at offset %d: %s", report.problems[0].offset,
                              report.problems[0].message);
  }
  t.entries = report.properties.num_entries;
  if (!report.filter_contents.empty()) {
    auto filter = FilterReader::Parse(report.filter_contents);
    if (filter.ok()) {
      t.filter_memory = (*filter)->MemoryUsage();
      t.filter_keys = (*filter)->info().num_keys;
      t.filter_bits_per_key = (*filter)->info().bits_per_key();
      t.filter = (*filter)->info();
    } else if (t.error.empty()) {
      t.error = std::string(filter.status().message());
    }
  }
  return t;
}

LogInfo ReadLog(Env* env, const std::string& dbname, uint64_t number,
                uint64_t size) {
  LogInfo info;
  info.number = number;
  info.size = size;
  LogScanResult scan;
  bool any = false;
  absl::Status s = ScanLog(
      env, LogFileName(dbname, number),
      [&](uint64_t, std::string_view record) {
        if (WalLink::IsLink(record)) return;  // names the log before
        WriteBatch batch;
        if (!WriteBatchInternal::SetContents(&batch, record).ok()) return;
        const SequenceNumber seq = WriteBatchInternal::Sequence(&batch);
        const uint32_t count = WriteBatchInternal::Count(&batch);
        if (!any) info.first_seq = seq;
        any = true;
        if (count > 0) info.last_seq = std::max(info.last_seq, seq + count - 1);
        info.ops += count;
      },
      &scan);
  info.records = scan.num_records;
  info.problems = scan.problems;
  if (!s.ok()) info.problems.push_back({0, std::string(s.message()), false});
  return info;
}

// Everything info reports, gathered from the files.
struct InfoData {
  ManifestState state;
  DirListing listing;
  std::vector<TableInfo> tables;
  std::array<LevelInfo, config::kNumLevels> levels;
  FilterReport filters;  // per level, from the tables' filters
  LevelInfo total;
  std::vector<LogInfo> logs;
  SequenceNumber last_seq = 0;  // the larger of the MANIFEST's and the logs'
  std::optional<std::string> engine_stats;
  std::vector<std::string> problems;  // damage, one line each
};

void CollectManifestProblems(InfoData* d) {
  const ManifestState& state = d->state;
  for (const Problem& p : state.scan.problems) {
    if (!p.torn_tail) {
      d->problems.push_back(absl::StrFormat(
          "%s at offset %d: %s", state.manifest_name, p.offset, p.message));
    }
  }
  for (const Problem& p : state.edit_problems) {
    d->problems.push_back(absl::StrFormat(
        "%s at offset %d: %s", state.manifest_name, p.offset, p.message));
  }
}

// Read every table the MANIFEST names; per-level and total figures.
void CollectTables(Env* env, const std::string& dbname, InfoData* d) {
  const Comparator* ucmp = BytewiseComparator();
  for (int level = 0; level < config::kNumLevels; ++level) {
    LevelInfo& li = d->levels[level];
    for (const auto& [number, meta] : d->state.levels[level]) {
      TableInfo t = ReadTable(env, dbname, level, meta);
      if (!t.error.empty()) {
        d->problems.push_back(absl::StrFormat("%06d.sst: %s", number, t.error));
      }
      const std::string smallest(meta.smallest.user_key());
      const std::string largest(meta.largest.user_key());
      if (li.files == 0 || ucmp->Compare(smallest, li.smallest) < 0) {
        li.smallest = smallest;
      }
      if (li.files == 0 || ucmp->Compare(largest, li.largest) > 0) {
        li.largest = largest;
      }
      ++li.files;
      li.bytes += meta.file_size;
      li.entries += t.entries;
      li.filter_memory += t.filter_memory;
      d->tables.push_back(std::move(t));
    }
    d->total.files += li.files;
    d->total.bytes += li.bytes;
    d->total.entries += li.entries;
    d->total.filter_memory += li.filter_memory;
  }
  std::vector<std::vector<KeySpan>> spans(config::kNumLevels);
  for (const TableInfo& t : d->tables) {
    spans[t.level].push_back(SpanOf(t.meta));
  }
  const std::vector<std::vector<double>> shares = TreeProbeShares(spans);
  std::array<size_t, config::kNumLevels> next{};
  std::vector<TableFilterFacts> facts;
  for (const TableInfo& t : d->tables) {
    // A table that could not be read has no known filter: counted as
    // answering "maybe".
    TableFilterFacts f;
    f.level = t.level;
    f.entries = t.entries;
    f.has_filter = t.filter.has_value();
    if (t.filter) f.filter = *t.filter;
    f.probe_share = shares[t.level][next[t.level]++];
    facts.push_back(f);
  }
  d->filters = SummarizeFilters(facts);
}

// Read the live logs; the last sequence they and the MANIFEST reach.
void CollectLogs(Env* env, const std::string& dbname, InfoData* d) {
  SequenceNumber last_in_logs = 0;
  for (uint64_t number : LiveLogs(d->state, d->listing)) {
    d->logs.push_back(ReadLog(env, dbname, number, d->listing.logs[number]));
    last_in_logs = std::max(last_in_logs, d->logs.back().last_seq);
    for (const Problem& p : d->logs.back().problems) {
      if (!p.torn_tail) {
        d->problems.push_back(absl::StrFormat("%06d.log at offset %d: %s",
                                              number, p.offset, p.message));
      }
    }
  }
  d->last_seq = std::max(d->state.last_sequence.value_or(0), last_in_logs);
}

void PrintInfoJson(const InfoArgs& args, const InfoData& d) {
  const bool hex = args.out.hex;
  OutputOptions key_out;
  key_out.hex = hex;
  Json jl = Json::array();
  for (int level = 0; level < config::kNumLevels; ++level) {
    const LevelInfo& li = d.levels[level];
    const LevelFilterReport& lf = d.filters.levels[level];
    Json j{{"level", level},
           {"files", li.files},
           {"bytes", li.bytes},
           {"entries", li.entries},
           {"filter_memory_bytes", li.filter_memory},
           {"filter_bits_per_key", lf.bits_per_key()},
           {"filter_fpr_theory", lf.fpr},
           {"probe_share", lf.probe_share},
           {"false_positives_per_absent_get", lf.expected_false_positives}};
    if (li.files > 0) {
      j["smallest"] = ShowBytes(li.smallest, key_out);
      j["largest"] = ShowBytes(li.largest, key_out);
    }
    jl.push_back(std::move(j));
  }
  Json jt = Json::array();
  for (const TableInfo& t : d.tables) {
    Json j{{"level", t.level},
           {"number", t.meta.number},
           {"size", t.meta.file_size},
           {"entries", t.entries},
           {"smallest", ShowInternalKey(t.meta.smallest.Encode(), hex)},
           {"largest", ShowInternalKey(t.meta.largest.Encode(), hex)},
           {"filter_memory_bytes", t.filter_memory},
           {"filter_keys", t.filter_keys},
           {"filter_bits_per_key", t.filter_bits_per_key}};
    if (!t.error.empty()) j["error"] = t.error;
    jt.push_back(std::move(j));
  }
  Json jlogs = Json::array();
  for (const LogInfo& l : d.logs) {
    jlogs.push_back(Json{{"number", l.number},
                         {"file", absl::StrFormat("%06d.log", l.number)},
                         {"size", l.size},
                         {"records", l.records},
                         {"ops", l.ops},
                         {"first_sequence", l.first_seq},
                         {"last_sequence", l.last_seq}});
  }
  Json jdamaged = Json::array();
  for (const auto& [number, size] : d.listing.damaged_logs) {
    jdamaged.push_back(Json{
        {"file", absl::StrFormat("%06d.log.damaged", number)}, {"size", size}});
  }
  const ManifestState& state = d.state;
  auto opt = [](const auto& v) { return v ? Json(*v) : Json(); };
  Json j{{"db", Escape(args.db)},
         {"manifest",
          {{"file", state.manifest_name},
           {"size", state.scan.file_size},
           {"edits", state.num_edits}}},
         {"comparator",
          state.comparator ? Json(Escape(*state.comparator)) : Json()},
         {"last_sequence", d.last_seq},
         {"manifest_last_sequence", opt(state.last_sequence)},
         {"next_file_number", opt(state.next_file_number)},
         {"log_number", opt(state.log_number)},
         {"live_logs", std::move(jlogs)},
         {"damaged_logs", std::move(jdamaged)},
         {"levels", std::move(jl)},
         {"total",
          {{"files", d.total.files},
           {"bytes", d.total.bytes},
           {"entries", d.total.entries},
           {"filter_memory_bytes", d.total.filter_memory},
           {"false_positives_per_absent_get",
            d.filters.expected_false_positives}}},
         {"lock_file_present", d.listing.has_lock}};
  if (args.tables) j["tables"] = std::move(jt);
  if (d.engine_stats) j["engine_stats"] = *d.engine_stats;
  j["problems"] = d.problems;
  PrintJson(j);
}

void PrintLogsText(const InfoData& d) {
  std::cout << "\n  live logs:       ";
  if (d.logs.empty()) std::cout << "none";
  for (size_t i = 0; i < d.logs.size(); ++i) {
    const LogInfo& l = d.logs[i];
    std::cout << (i > 0 ? "\n                   " : "")
              << absl::StrFormat("%06d.log: %d bytes, %d batches, %d ops",
                                 l.number, l.size, l.records, l.ops);
    if (l.records > 0) {
      std::cout << absl::StrFormat(", seq %d..%d", l.first_seq, l.last_seq);
    }
  }
  std::cout << "\n";
  for (const auto& [number, size] : d.listing.damaged_logs) {
    std::cout << absl::StrFormat(
        "  kept aside:      %06d.log.damaged: %d bytes (not replayed by "
        "recovery; kvtool wal decodes it)\n",
        number, size);
  }
}

void PrintInfoText(const InfoArgs& args, const InfoData& d) {
  const bool hex = args.out.hex;
  OutputOptions key_out;
  key_out.hex = hex;
  const ManifestState& state = d.state;
  std::cout << "database " << args.db << "\n"
            << "  MANIFEST:        " << state.manifest_name << " ("
            << state.scan.file_size << " bytes, " << state.num_edits
            << " edits)\n"
            << "  comparator:      "
            << (state.comparator ? Escape(*state.comparator) : "?") << "\n"
            << "  last sequence:   " << d.last_seq << " ("
            << state.last_sequence.value_or(0) << " in MANIFEST)\n"
            << "  next file:       " << state.next_file_number.value_or(0)
            << "\n"
            << "  log number:      " << state.log_number.value_or(0);
  PrintLogsText(d);
  std::cout << absl::StrFormat(
      "\nLevel  Files   Size(MiB)  Filter(KiB)     Entries  Key range\n"
      "-----  -----  ----------  -----------  ----------  ---------\n");
  for (int level = 0; level < config::kNumLevels; ++level) {
    const LevelInfo& li = d.levels[level];
    if (li.files == 0) continue;
    std::cout << absl::StrFormat(
        "%5d  %5d  %10.2f  %11.1f  %10d  \"%s\" .. \"%s\"\n", level, li.files,
        li.bytes / 1048576.0, li.filter_memory / 1024.0, li.entries,
        ShowBytes(li.smallest, key_out), ShowBytes(li.largest, key_out));
  }
  std::cout << absl::StrFormat("Total  %5d  %10.2f  %11.1f  %10d\n",
                               d.total.files, d.total.bytes / 1048576.0,
                               d.total.filter_memory / 1024.0, d.total.entries);
  std::cout << "\n" << FilterReportText(d.filters);
  if (args.tables) {
    std::cout << "\ntables:\n";
    for (const TableInfo& t : d.tables) {
      std::cout << absl::StrFormat(
          "  L%d %06d.sst  %d bytes, %d entries, filter %d bytes "
          "(%.2f bits/key), %s .. %s\n",
          t.level, t.meta.number, t.meta.file_size, t.entries, t.filter_memory,
          t.filter_bits_per_key, ShowInternalKey(t.meta.smallest.Encode(), hex),
          ShowInternalKey(t.meta.largest.Encode(), hex));
    }
  }
  if (d.engine_stats) {
    std::cout << "\nsift.stats (engine):\n" << *d.engine_stats;
  }
  for (const std::string& p : d.problems) {
    std::cout << "problem: " << p << "\n";
  }
}

int RunInfo(const InfoArgs& args) {
  Env* env = Env::Default();
  InfoData d;
  absl::Status s = ReplayManifest(env, args.db, &d.state);
  if (!s.ok()) return ReportError("info", s, args.out);
  absl::StatusOr<DirListing> listing = ListDatabase(env, args.db);
  if (!listing.ok()) return ReportError("info", listing.status(), args.out);
  d.listing = *std::move(listing);

  CollectManifestProblems(&d);
  CollectTables(env, args.db, &d);
  CollectLogs(env, args.db, &d);
  if (args.engine_stats) {
    auto db = DB::Open(Options(), args.db);
    if (!db.ok()) return ReportError("info", db.status(), args.out);
    d.engine_stats = (*db)->GetProperty("sift.stats");
  }

  if (args.out.json) {
    PrintInfoJson(args, d);
  } else {
    PrintInfoText(args, d);
  }
  if (!d.problems.empty()) {
    std::cerr << "kvtool info: " << args.db << ": " << d.problems.size()
              << " problem(s); run kvtool verify for a full check\n";
    return kExitDataError;
  }
  return kExitOk;
}

}  // namespace

void AddInfoCommand(CommandSet* commands) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* sub = commands->Add(
      "info",
      "Levels, tables, bytes, key ranges, filter memory, sequence numbers and "
      "live logs, read from the files without opening the database",
      &args->out, [args] { return RunInfo(*args); });
  sub->add_option("db", args->db, "Database directory")->required();
  sub->add_flag("--tables", args->tables, "Also list every table");
  sub->add_flag("--engine-stats", args->engine_stats,
                "Also open the database with the engine (takes its LOCK: "
                "fails if another process has it open) and print sift.stats");
}

}  // namespace sift::tools
