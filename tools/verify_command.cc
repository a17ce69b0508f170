// kvtool verify DB: read every block of every live table and every record
// of the MANIFEST and the live logs, check every checksum and every
// cross-reference between the MANIFEST and the files, and print each thing
// that is wrong with its file and offset. Exit 1 if anything is.

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/wal_link.h"
#include "db/write_batch_internal.h"
#include "sift/env.h"
#include "tools/command.h"
#include "tools/db_files.h"
#include "tools/log_scan.h"
#include "tools/output.h"
#include "tools/table_inspect.h"

namespace sift::tools {

namespace {

struct VerifyArgs {
  OutputOptions out;
  std::string db;
};

struct Finding {
  std::string file;
  std::optional<uint64_t> offset;
  std::string message;
  bool warning = false;
};

struct Checked {
  uint64_t tables = 0;
  uint64_t blocks = 0;
  uint64_t entries = 0;
  uint64_t logs = 0;
  uint64_t log_records = 0;
  uint64_t manifest_edits = 0;
};

class Verifier {
 public:
  Verifier(Env* env, std::string dbname, const OutputOptions& out)
      : env_(env), dbname_(std::move(dbname)), out_(out) {}

  void Run() {
    if (!CheckManifest()) return;
    absl::StatusOr<DirListing> listing = ListDatabase(env_, dbname_);
    if (!listing.ok()) {
      Error(dbname_, std::nullopt, FromAbsl(listing.status().message()));
      return;
    }
    CheckTables(*listing);
    CheckLevelOrder();
    CheckLogs(*listing);
  }

  // Set if the database could not be read at all (no CURRENT or MANIFEST).
  const absl::Status& fatal() const { return fatal_; }
  const std::vector<Finding>& findings() const { return findings_; }
  const Checked& checked() const { return checked_; }
  size_t num_errors() const {
    size_t n = 0;
    for (const Finding& f : findings_) n += f.warning ? 0 : 1;
    return n;
  }

 private:
  void Error(std::string file, std::optional<uint64_t> offset,
             std::string_view message) {
    findings_.push_back({std::move(file), offset, std::string(message), false});
  }
  void Warning(std::string file, std::optional<uint64_t> offset,
               std::string_view message) {
    findings_.push_back({std::move(file), offset, std::string(message), true});
  }

  // False if the MANIFEST cannot be read at all (nothing else can be
  // checked against it).
  bool CheckManifest() {
    absl::Status s = ReplayManifest(env_, dbname_, &state_);
    if (!s.ok()) {
      // The status names the file (CURRENT, the MANIFEST or the directory).
      fatal_ = s;
      return false;
    }
    manifest_path_ = absl::StrCat(dbname_, "/", state_.manifest_name);
    checked_.manifest_edits = state_.num_edits;
    for (const Problem& p : state_.scan.problems) {
      if (p.torn_tail) {
        Warning(manifest_path_, p.offset, p.message);
      } else {
        Error(manifest_path_, p.offset, p.message);
      }
    }
    for (const Problem& p : state_.edit_problems) {
      Error(manifest_path_, p.offset, p.message);
    }
    if (state_.comparator && *state_.comparator != "sift.BytewiseComparator") {
      Error(manifest_path_, std::nullopt,
            absl::StrCat("unknown comparator \"", Escape(*state_.comparator),
                         "\""));
    }
    return true;
  }

  void CheckTables(const DirListing& listing) {
    const uint64_t next_file = state_.next_file_number.value_or(UINT64_MAX);
    const SequenceNumber last_seq = state_.last_sequence.value_or(UINT64_MAX);
    std::set<uint64_t> referenced;
    for (int level = 0; level < config::kNumLevels; ++level) {
      for (const auto& [number, meta] : state_.levels[level]) {
        referenced.insert(number);
        const std::string fname = TableFileName(dbname_, number);
        if (number >= next_file) {
          Error(manifest_path_, std::nullopt,
                absl::StrFormat("table %06d is numbered at or above the next "
                                "file number %d",
                                number, next_file));
        }
        auto it = listing.tables.find(number);
        if (it == listing.tables.end()) {
          Error(fname, std::nullopt,
                absl::StrFormat("missing, but the MANIFEST lists it at level "
                                "%d",
                                level));
          continue;
        }
        if (it->second != meta.file_size) {
          Error(fname, std::nullopt,
                absl::StrFormat("%d bytes, but the MANIFEST says %d",
                                it->second, meta.file_size));
        }
        CheckTable(fname, level, meta, last_seq);
      }
    }
    for (const auto& [number, size] : listing.tables) {
      if (referenced.count(number) == 0) {
        Warning(TableFileName(dbname_, number), std::nullopt,
                "not referenced by the MANIFEST (obsolete, or being written)");
      }
    }
  }

  void CheckTable(const std::string& fname, int level, const FileMetaData& meta,
                  SequenceNumber last_seq) {
    ++checked_.tables;
    SequenceNumber max_seq = 0;
    InspectOptions options;
    options.on_entry = [&](std::string_view key, std::string_view) {
      ParsedInternalKey parsed;
      if (ParseInternalKey(key, &parsed)) {
        max_seq = std::max(max_seq, parsed.sequence);
      }
    };
    TableReport report;
    absl::Status s = InspectTable(env_, fname, options, &report);
    if (!s.ok()) {
      Error(fname, std::nullopt, StripFilePrefix(FromAbsl(s.message()), fname));
      return;
    }
    checked_.blocks += report.blocks.size();
    checked_.entries += report.entries_read;
    for (const Problem& p : report.problems) Error(fname, p.offset, p.message);
    if (!report.properties_status.ok()) return;
    if (!report.internal_keys) {
      Error(fname, report.footer.properties.offset,
            absl::StrCat("keys are not internal keys (comparator \"",
                         Escape(report.properties.comparator_name),
                         "\"): not a table of a database"));
      return;
    }
    const TableProperties& p = report.properties;
    // An ingested table stores its keys at sequence 0; the MANIFEST gives
    // them its global sequence number (doc/manifest_format.md, tag 10).
    auto stored = [&meta](const InternalKey& key) {
      ParsedInternalKey parsed;
      if (meta.global_seqno == 0 || !ParseInternalKey(key.Encode(), &parsed)) {
        return std::string(key.Encode());
      }
      std::string r;
      AppendInternalKey(&r, parsed.user_key, 0, parsed.type);
      return r;
    };
    if (p.num_entries > 0 && (p.smallest_key != stored(meta.smallest) ||
                              p.largest_key != stored(meta.largest))) {
      Error(fname, std::nullopt,
            absl::StrFormat("holds %s .. %s, but the MANIFEST (level %d) says "
                            "%s .. %s",
                            ShowInternalKey(p.smallest_key, out_.hex),
                            ShowInternalKey(p.largest_key, out_.hex), level,
                            ShowInternalKey(meta.smallest.Encode(), out_.hex),
                            ShowInternalKey(meta.largest.Encode(), out_.hex)));
    }
    if (meta.global_seqno != 0 && max_seq != 0) {
      Error(fname, std::nullopt,
            absl::StrFormat("ingested table (global sequence %d) holds "
                            "sequence %d; its keys must be at 0",
                            meta.global_seqno, max_seq));
    }
    max_seq = std::max(max_seq, meta.global_seqno);
    if (max_seq > last_seq) {
      Error(fname, std::nullopt,
            absl::StrFormat("holds sequence %d, after the MANIFEST's last "
                            "sequence %d",
                            max_seq, last_seq));
    }
  }

  // Every table's range must be in order, and the tables of a level >= 1
  // disjoint.
  void CheckLevelOrder() {
    const Comparator* ucmp = BytewiseComparator();
    const InternalKeyComparator icmp(ucmp);
    for (int level = 0; level < config::kNumLevels; ++level) {
      for (const auto& [number, meta] : state_.levels[level]) {
        if (meta.smallest.empty() || meta.largest.empty() ||
            icmp.Compare(meta.smallest.Encode(), meta.largest.Encode()) > 0) {
          Error(manifest_path_, std::nullopt,
                absl::StrFormat("table %06d (level %d) has an invalid key "
                                "range",
                                number, level));
        }
      }
    }
    for (int level = 1; level < config::kNumLevels; ++level) {
      std::vector<const FileMetaData*> files;
      for (const auto& [number, meta] : state_.levels[level]) {
        files.push_back(&meta);
      }
      std::sort(files.begin(), files.end(), [&](auto* a, auto* b) {
        return ucmp->Compare(a->smallest.user_key(), b->smallest.user_key()) <
               0;
      });
      for (size_t i = 1; i < files.size(); ++i) {
        if (ucmp->Compare(files[i - 1]->largest.user_key(),
                          files[i]->smallest.user_key()) >= 0) {
          Error(manifest_path_, std::nullopt,
                absl::StrFormat("tables %06d and %06d overlap in level %d",
                                files[i - 1]->number, files[i]->number, level));
        }
      }
    }
  }

  // A log's number may be at or past the MANIFEST's next file number: the
  // engine allocates a new log's number in memory and records the counter
  // only with the next edit. So logs are checked for content only.
  void CheckLogs(const DirListing& listing) {
    SequenceNumber prev_last = 0;
    // The log checked before this one and its intact records, for the link
    // record (db/wal_link.h) that may start this one.
    std::optional<WalLink::ReadBack> previous;
    const uint64_t min_log_number = state_.log_number.value_or(0);
    for (uint64_t number : LiveLogs(state_, listing)) {
      const std::string fname = LogFileName(dbname_, number);
      ++checked_.logs;
      LogScanResult scan;
      absl::Status s = ScanLog(
          env_, fname,
          [&](uint64_t offset, std::string_view record) {
            if (WalLink::IsLink(record)) {
              WalLink link;
              absl::Status ls = link.DecodeAt(record, offset);
              if (!ls.ok()) {
                Error(fname, offset, std::string(ls.message()));
                return;
              }
              const WalLink::Check check =
                  link.CheckAgainst(previous, min_log_number);
              if (check != WalLink::Check::kSatisfied) {
                // Like a torn tail: a machine crash lost unsynced writes.
                Warning(fname, offset,
                        absl::StrFormat(
                            "follows log %06d, which held %d records when this "
                            "log was started; %s: Open stops before this log",
                            link.previous_log(), link.previous_records(),
                            check == WalLink::Check::kPredecessorShort
                                ? absl::StrFormat("only %d are intact",
                                                  previous->records)
                                : std::string("that log is missing")));
              }
              return;
            }
            WriteBatch batch;
            absl::Status bs = WriteBatchInternal::SetContents(&batch, record);
            if (bs.ok()) {
              CountingHandler counter;
              bs = batch.Iterate(&counter);
              if (bs.ok() &&
                  counter.count != WriteBatchInternal::Count(&batch)) {
                bs = absl::DataLossError(absl::StrFormat(
                    "batch header says %d operations, it holds %d",
                    WriteBatchInternal::Count(&batch), counter.count));
              }
            }
            if (!bs.ok()) {
              Error(fname, offset,
                    absl::StrCat("bad write batch: ", bs.message()));
              return;
            }
            const SequenceNumber seq = WriteBatchInternal::Sequence(&batch);
            if (seq <= prev_last) {
              Error(fname, offset,
                    absl::StrFormat("batch sequence %d does not follow the "
                                    "previous batch's last sequence %d",
                                    seq, prev_last));
            }
            const uint32_t count = WriteBatchInternal::Count(&batch);
            if (count > 0) prev_last = std::max(prev_last, seq + count - 1);
          },
          &scan);
      if (!s.ok()) {
        Error(fname, std::nullopt,
              StripFilePrefix(FromAbsl(s.message()), fname));
        continue;
      }
      checked_.log_records += scan.num_records;
      previous = WalLink::ReadBack{number, scan.num_records};
      for (const Problem& p : scan.problems) {
        if (p.torn_tail) {
          Warning(fname, p.offset, p.message);
        } else {
          Error(fname, p.offset, p.message);
        }
      }
    }
  }

  struct CountingHandler : public WriteBatch::Handler {
    void Put(std::string_view, std::string_view) override { ++count; }
    void Delete(std::string_view) override { ++count; }
    uint32_t count = 0;
  };

  Env* const env_;
  const std::string dbname_;
  const OutputOptions& out_;
  absl::Status fatal_;
  ManifestState state_;
  std::string manifest_path_;
  std::vector<Finding> findings_;
  Checked checked_;
};

int RunVerify(const VerifyArgs& args) {
  Verifier verifier(Env::Default(), args.db, args.out);
  verifier.Run();
  if (!verifier.fatal().ok()) {
    return ReportError("verify", verifier.fatal(), args.out);
  }
  const size_t errors = verifier.num_errors();
  const size_t warnings = verifier.findings().size() - errors;
  const Checked& c = verifier.checked();
  if (args.out.json) {
    Json e = Json::array(), w = Json::array();
    for (const Finding& f : verifier.findings()) {
      Json j{{"file", Escape(f.file)},
             {"offset", f.offset ? Json(*f.offset) : Json()},
             {"message", f.message}};
      (f.warning ? w : e).push_back(std::move(j));
    }
    PrintJson(Json{{"db", Escape(args.db)},
                   {"ok", errors == 0},
                   {"errors", std::move(e)},
                   {"warnings", std::move(w)},
                   {"checked",
                    {{"tables", c.tables},
                     {"blocks", c.blocks},
                     {"entries", c.entries},
                     {"logs", c.logs},
                     {"log_records", c.log_records},
                     {"manifest_edits", c.manifest_edits}}}});
  } else {
    for (const Finding& f : verifier.findings()) {
      std::cout << (f.warning ? "warning: " : "ERROR: ") << f.file;
      if (f.offset) std::cout << " at offset " << *f.offset;
      std::cout << ": " << f.message << "\n";
    }
    std::cout << absl::StrFormat(
        "checked %d tables (%d blocks, %d entries), %d live logs (%d "
        "records), MANIFEST (%d edits)\n",
        c.tables, c.blocks, c.entries, c.logs, c.log_records, c.manifest_edits);
    std::cout << (errors == 0 ? "OK" : "DAMAGED") << ": " << errors
              << " error(s), " << warnings << " warning(s)\n";
  }
  return errors == 0 ? kExitOk : kExitDataError;
}

}  // namespace

void AddVerifyCommand(CommandSet* commands) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* sub = commands->Add(
      "verify",
      "Read every table block and log record, check every checksum and the "
      "MANIFEST against the files; print each problem with file and offset "
      "(exit 1 if any)",
      &args->out, [args] { return RunVerify(*args); });
  sub->add_option("db", args->db, "Database directory")->required();
}

}  // namespace sift::tools
