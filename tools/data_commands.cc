// get, put, delete, scan and compact. put, delete and compact open the
// database with the engine (taking its LOCK); get and scan read it without
// opening it (tools/readonly_db.h), so they never change it and work while
// another process has it open.

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/dbformat.h"
#include "sift/db.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "tools/command.h"
#include "tools/output.h"
#include "tools/readonly_db.h"

namespace sift::tools {

namespace {

absl::StatusOr<std::unique_ptr<DB>> OpenDB(const std::string& path,
                                           bool create_if_missing) {
  Options options;
  options.create_if_missing = create_if_missing;
  return DB::Open(options, path);
}

absl::StatusOr<std::unique_ptr<ReadOnlyDB>> OpenReadOnly(
    const char* command, const std::string& path) {
  absl::StatusOr<std::unique_ptr<ReadOnlyDB>> db = ReadOnlyDB::Open(path);
  if (db.ok()) {
    // Recovery would skip the same damage; say so rather than hide it.
    for (const std::string& damage : (*db)->log_damage()) {
      std::cerr << "kvtool " << command << ": warning: " << damage << "\n";
    }
  }
  return db;
}

// ---- get ----

struct GetArgs {
  OutputOptions out;
  std::string db;
  std::string key;
};

int RunGet(const GetArgs& args) {
  absl::StatusOr<std::string> key = ArgBytes(args.key, args.out);
  if (!key.ok()) return ReportUsageError("get", key.status(), args.out);
  auto db = OpenReadOnly("get", args.db);
  if (!db.ok()) return ReportError("get", db.status(), args.out);
  std::string value;
  absl::Status s = (*db)->Get(*key, &value);
  if (absl::IsNotFound(s)) {
    std::cerr << "kvtool get: key \"" << ShowBytes(*key, args.out)
              << "\" not found in " << args.db << "\n";
    if (args.out.json) {
      PrintJson(Json{{"key", ShowBytes(*key, args.out)}, {"found", false}});
    }
    return kExitDataError;
  }
  if (!s.ok()) return ReportError("get", s, args.out);
  if (args.out.json) {
    PrintJson(Json{{"key", ShowBytes(*key, args.out)},
                   {"found", true},
                   {"value", ShowBytes(value, args.out)}});
  } else {
    std::cout << ShowBytes(value, args.out) << "\n";
  }
  return kExitOk;
}

// ---- put / delete ----

struct WriteArgs {
  OutputOptions out;
  std::string db;
  std::string key;
  std::string value;
  bool create = false;
  bool sync = false;
};

int RunWrite(const char* command, const WriteArgs& args, bool is_put) {
  absl::StatusOr<std::string> key = ArgBytes(args.key, args.out);
  if (!key.ok()) return ReportUsageError(command, key.status(), args.out);
  std::string value;
  if (is_put) {
    absl::StatusOr<std::string> v = ArgBytes(args.value, args.out);
    if (!v.ok()) return ReportUsageError(command, v.status(), args.out);
    value = *std::move(v);
  }
  auto db = OpenDB(args.db, is_put && args.create);
  if (!db.ok()) return ReportError(command, db.status(), args.out);
  WriteOptions wo;
  wo.sync = args.sync;
  absl::Status s =
      is_put ? (*db)->Put(wo, *key, value) : (*db)->Delete(wo, *key);
  if (!s.ok()) return ReportError(command, s, args.out);
  if (args.out.json) {
    PrintJson(Json{{"ok", true}, {"key", ShowBytes(*key, args.out)}});
  } else {
    std::cout << "ok\n";
  }
  return kExitOk;
}

// ---- scan ----

struct ScanArgs {
  OutputOptions out;
  std::string db;
  std::string from;
  std::string to;
  CLI::Option* from_opt = nullptr;
  CLI::Option* to_opt = nullptr;
  uint64_t limit = 0;
  bool reverse = false;
};

int RunScan(const ScanArgs& args) {
  std::optional<std::string> from, to;
  if (args.from_opt->count() > 0) {
    auto b = ArgBytes(args.from, args.out);
    if (!b.ok()) return ReportUsageError("scan", b.status(), args.out);
    from = *std::move(b);
  }
  if (args.to_opt->count() > 0) {
    auto b = ArgBytes(args.to, args.out);
    if (!b.ok()) return ReportUsageError("scan", b.status(), args.out);
    to = *std::move(b);
  }
  auto db = OpenReadOnly("scan", args.db);
  if (!db.ok()) return ReportError("scan", db.status(), args.out);
  // The range is [from, to): --from is inclusive, --to exclusive, both ways.
  // They are the iterator's bounds, so tables and blocks outside the range
  // are never read.
  ReadOptions ro;
  if (from) ro.iterate_lower_bound = *from;
  if (to) ro.iterate_upper_bound = *to;
  std::unique_ptr<Iterator> it = (*db)->NewIterator(ro);
  if (args.reverse) {
    it->SeekToLast();
  } else {
    it->SeekToFirst();
  }

  Json entries = Json::array();
  uint64_t count = 0;
  bool truncated = false;
  for (; it->Valid(); args.reverse ? it->Prev() : it->Next()) {
    const std::string_view k = it->key();
    if (args.limit > 0 && count == args.limit) {
      truncated = true;
      break;
    }
    ++count;
    if (args.out.json) {
      entries.push_back(Json{{"key", ShowBytes(k, args.out)},
                             {"value", ShowBytes(it->value(), args.out)}});
    } else {
      // Escaped and hex text never holds a tab, so the line splits cleanly.
      std::cout << ShowBytes(k, args.out) << "\t"
                << ShowBytes(it->value(), args.out) << "\n";
    }
  }
  if (!it->status().ok()) return ReportError("scan", it->status(), args.out);
  if (args.out.json) {
    PrintJson(Json{{"count", count},
                   {"truncated", truncated},
                   {"entries", std::move(entries)}});
  }
  return kExitOk;
}

// ---- compact ----

struct CompactArgs {
  OutputOptions out;
  std::string db;
  std::string from;
  std::string to;
  CLI::Option* from_opt = nullptr;
  CLI::Option* to_opt = nullptr;
};

// Files per level from the engine's properties.
Json LevelCounts(DB* db) {
  Json levels = Json::array();
  for (int level = 0; level < config::kNumLevels; ++level) {
    std::optional<std::string> n =
        db->GetProperty(absl::StrCat("sift.num-files-at-level", level));
    levels.push_back(n ? std::stoll(*n) : -1);
  }
  return levels;
}

int RunCompact(const CompactArgs& args) {
  std::optional<std::string> from, to;
  if (args.from_opt->count() > 0) {
    auto b = ArgBytes(args.from, args.out);
    if (!b.ok()) return ReportUsageError("compact", b.status(), args.out);
    from = *std::move(b);
  }
  if (args.to_opt->count() > 0) {
    auto b = ArgBytes(args.to, args.out);
    if (!b.ok()) return ReportUsageError("compact", b.status(), args.out);
    to = *std::move(b);
  }
  auto db = OpenDB(args.db, false);
  if (!db.ok()) return ReportError("compact", db.status(), args.out);
  Json before = LevelCounts(db->get());
  absl::Status s =
      (*db)->CompactRange(from ? &*from : nullptr, to ? &*to : nullptr);
  if (!s.ok()) return ReportError("compact", s, args.out);
  Json after = LevelCounts(db->get());
  if (args.out.json) {
    PrintJson(Json{{"ok", true},
                   {"from", from ? Json(ShowBytes(*from, args.out)) : Json()},
                   {"to", to ? Json(ShowBytes(*to, args.out)) : Json()},
                   {"files_per_level_before", before},
                   {"files_per_level_after", after}});
    return kExitOk;
  }
  std::cout << "compacted "
            << (from ? "\"" + ShowBytes(*from, args.out) + "\"" : "(start)")
            << " .. " << (to ? "\"" + ShowBytes(*to, args.out) + "\"" : "(end)")
            << "\nfiles per level before: " << before.dump()
            << "\nfiles per level after:  " << after.dump() << "\n";
  return kExitOk;
}

}  // namespace

void AddDataCommands(CommandSet* commands) {
  {
    auto args = std::make_shared<GetArgs>();
    CLI::App* sub = commands->Add(
        "get", "Print the value stored for KEY (exit 1 if it is absent)",
        &args->out, [args] { return RunGet(*args); });
    sub->add_option("db", args->db, "Database directory")->required();
    sub->add_option("key", args->key, "Key")->required();
  }
  for (const bool is_put : {true, false}) {
    auto args = std::make_shared<WriteArgs>();
    const char* name = is_put ? "put" : "delete";
    CLI::App* sub = commands->Add(
        name,
        is_put ? "Store VALUE for KEY (opens the database for writing)"
               : "Delete KEY (opens the database for writing)",
        &args->out,
        [args, name, is_put] { return RunWrite(name, *args, is_put); });
    sub->add_option("db", args->db, "Database directory")->required();
    sub->add_option("key", args->key, "Key")->required();
    if (is_put) {
      sub->add_option("value", args->value, "Value")->required();
      sub->add_flag("--create", args->create,
                    "Create the database if it does not exist");
    }
    sub->add_flag("--sync", args->sync,
                  "Sync the write-ahead log before returning");
  }
  {
    auto args = std::make_shared<ScanArgs>();
    CLI::App* sub = commands->Add(
        "scan",
        "Print keys and values (tab-separated) in order over [--from, --to)",
        &args->out, [args] { return RunScan(*args); });
    sub->add_option("db", args->db, "Database directory")->required();
    args->from_opt =
        sub->add_option("--from", args->from, "First key (inclusive)");
    args->to_opt = sub->add_option("--to", args->to, "End key (exclusive)");
    sub->add_option("--limit", args->limit,
                    "Print at most N entries (0: no limit)");
    sub->add_flag("--reverse", args->reverse,
                  "Go from the end of the range to its start");
  }
  {
    auto args = std::make_shared<CompactArgs>();
    CLI::App* sub = commands->Add(
        "compact",
        "Compact the tables overlapping [--from, --to] (default: everything)",
        &args->out, [args] { return RunCompact(*args); });
    sub->add_option("db", args->db, "Database directory")->required();
    args->from_opt =
        sub->add_option("--from", args->from, "First key (inclusive)");
    args->to_opt = sub->add_option("--to", args->to, "Last key (inclusive)");
  }
}

}  // namespace sift::tools
