// RepairDB: rebuild the MANIFEST of a database from the tables and WALs in
// its directory (doc/durability.md, "Repair").
//
// The engine's own parts do the work, so repair reads and writes exactly what
// Open does: WALs are replayed by ReplayWals into memtables that
// WriteMemTableToTable turns into tables, tables are read through the
// TableCache, and the new MANIFEST and CURRENT are written by
// VersionSet::LogAndApply on a fresh VersionSet (as for a new database).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "db/db_state.h"
#include "db/dbformat.h"
#include "db/filename.h"
#include "db/flush.h"
#include "db/options_check.h"
#include "db/version_edit.h"
#include "db/wal_replay.h"
#include "sift/db.h"
#include "sift/env.h"
#include "util/logging.h"
#include "util/mutex.h"

namespace sift {
namespace {

// Where damaged files and old MANIFESTs go, inside the database directory.
// The engine never looks inside it, and DestroyDB leaves it alone.
constexpr char kLostDir[] = "lost";

// A table that read back whole, as the new MANIFEST will name it.
struct GoodTable {
  FileMetaData meta;
  SequenceNumber max_sequence = 0;
  // Every entry is stored at sequence 0: an ingested table, whose sequence
  // number lived only in the lost MANIFEST (db/global_seqno.h).
  bool ingested = false;
};

// Replayed batches go into a memtable; a full one becomes a level-0 table
// added to *edit. Unlike recovery's target it keeps its own errors apart, so
// that a failure to write a table (fatal for repair) is not mistaken for a
// WAL that cannot be read (which only sets that WAL aside).
class RepairTarget final : public ReplayTarget {
 public:
  RepairTarget(DBState& state, VersionEdit* edit,
               std::vector<PendingOutput>* tables)
      : state_(state), edit_(edit), tables_(tables) {}

  MemTable* MemTableForInsert() override {
    if (mem_ == nullptr) mem_ = state_.NewMemTable();
    return mem_.get();
  }

  absl::Status BatchApplied() override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex) {
    if (mem_->ApproximateMemoryUsage() <= state_.options.write_buffer_size) {
      return absl::OkStatus();
    }
    return Flush();
  }

  // Write what is left in the memtable to a table.
  absl::Status Flush() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex) {
    if (mem_ == nullptr || mem_->NumEntries() == 0) return absl::OkStatus();
    absl::Status s = WriteMemTableToTable(state_, mem_.get(), edit_,
                                          /*base=*/nullptr, tables_);
    mem_.reset();
    if (!s.ok() && write_error_.ok()) write_error_ = s;
    return s;
  }

  const absl::Status& write_error() const { return write_error_; }

 private:
  DBState& state_;
  VersionEdit* const edit_;
  std::vector<PendingOutput>* const tables_;
  std::shared_ptr<MemTable> mem_;
  absl::Status write_error_;
};

class Repairer {
 public:
  Repairer(std::string dbname, const Options& options)
      : dbname_(std::move(dbname)),
        options_(options),
        env_(options.env),
        lost_dir_(absl::StrCat(dbname_, "/", kLostDir)) {}

  absl::Status Run() {
    absl::StatusOr<std::vector<std::string>> children =
        env_->GetChildren(dbname_);
    if (!children.ok()) {
      if (absl::IsNotFound(children.status())) {
        return absl::NotFoundError(absl::StrCat(
            "RepairDB: ", dbname_, " does not exist: nothing to repair"));
      }
      return children.status();
    }
    if (absl::Status s = ListFiles(*children); !s.ok()) return s;

    absl::StatusOr<std::unique_ptr<FileLock>> lock =
        env_->LockFile(LockFileName(dbname_));
    if (!lock.ok()) {
      return absl::Status(
          lock.status().code(),
          absl::StrCat("RepairDB: cannot lock ", dbname_,
                       " (is it open in another process or DB object?): ",
                       lock.status().message()));
    }
    absl::Status s = Rebuild();
    absl::Status unlock = env_->UnlockFile(*std::move(lock));
    if (s.ok()) s = unlock;
    // Once the MANIFEST is written the database opens, whatever comes next:
    // merging level 0 only makes point reads of old tables exact.
    if (s.ok()) s = MergeLevel0();
    Note(s.ok()
             ? absl::StrCat("repair of ", dbname_, " done")
             : absl::StrCat("repair of ", dbname_, " failed: ", s.ToString()));
    WriteSummaryToLog();
    return s;
  }

 private:
  // Sort the directory's files by kind. An error if none of them is sift's:
  // repair never turns a directory without data into a database.
  absl::Status ListFiles(const std::vector<std::string>& children) {
    for (const std::string& name : children) {
      uint64_t number = 0;
      FileType type;
      if (!ParseFileName(name, &number, &type)) continue;
      max_number_ = std::max(max_number_, number);
      switch (type) {
        case FileType::kLogFile:
          logs_.push_back(number);
          break;
        case FileType::kTableFile:
          tables_.push_back(number);
          break;
        case FileType::kDescriptorFile:
          manifests_.push_back(name);
          break;
        default:
          break;
      }
    }
    std::sort(logs_.begin(), logs_.end());
    std::sort(tables_.begin(), tables_.end());
    std::sort(manifests_.begin(), manifests_.end());
    if (logs_.empty() && tables_.empty() && manifests_.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "RepairDB: ", dbname_,
          " holds no tables, WALs or MANIFESTs: nothing to repair"));
    }
    return absl::OkStatus();
  }

  // Everything done under the LOCK: the new MANIFEST and CURRENT, with the
  // damaged files and old MANIFESTs set aside.
  absl::Status Rebuild() {
    DBState state(options_, dbname_);
    // Numbers of files found on disk are never handed out again.
    state.versions->MarkFileNumberUsed(max_number_);
    MutexLock l(&state.mutex);
    std::vector<PendingOutput> new_tables;
    VersionEdit log_tables;
    SequenceNumber log_max_sequence = 0;
    if (absl::Status s =
            ConvertLogs(state, &log_tables, &new_tables, &log_max_sequence);
        !s.ok()) {
      return s;
    }
    std::vector<GoodTable> good;
    for (uint64_t number : tables_) {
      if (absl::Status s = ScanTable(state, number, &good); !s.ok()) return s;
    }
    const SequenceNumber last_sequence =
        AssignIngestedSequences(&good, log_max_sequence);

    VersionEdit edit;
    edit.SetComparatorName(state.icmp.user_comparator()->Name());
    // The WAL the next Open starts numbers above every file here, so the
    // WALs just converted are obsolete and Open deletes them.
    edit.SetLogNumber(state.versions->NewFileNumber());
    for (const GoodTable& t : good) edit.AddFile(0, t.meta);
    for (const auto& [level, meta] : log_tables.new_files()) {
      edit.AddFile(level, meta);
    }
    state.versions->SetLastSequence(last_sequence);
    if (absl::Status s = state.versions->LogAndApply(&edit, &state.mutex);
        !s.ok()) {
      // The tables made from WALs stay: an abandoned MANIFEST may name them,
      // and a second repair picks them up.
      for (PendingOutput& t : new_tables) t.KeepPending();
      return absl::Status(s.code(),
                          absl::StrCat("RepairDB: writing the new MANIFEST of ",
                                       dbname_, " failed: ", s.message()));
    }
    new_tables.clear();  // named by the version now
    Note(absl::StrCat(
        "new MANIFEST-", state.versions->ManifestFileNumber(), ": ",
        good.size() + log_tables.new_files().size(), " tables in level 0 (",
        good.size(), " found, ", log_tables.new_files().size(),
        " made from WALs), last sequence ", last_sequence,
        ", next file number ", edit.next_file_number().value_or(0)));

    // The old MANIFESTs go last: until CURRENT names the new one they are
    // all a reader of the directory has.
    for (const std::string& name : manifests_) {
      if (absl::Status s = SetAside(name, "old MANIFEST"); !s.ok()) return s;
    }
    if (set_aside_ > 0) {
      if (absl::Status s = env_->SyncDir(lost_dir_); !s.ok()) return s;
    }
    return env_->SyncDir(dbname_);
  }

  // Replay each WAL on its own into level-0 tables recorded in *edit. A WAL
  // damaged or unreadable somewhere keeps the records before the damage and
  // is set aside. Unlike Open, repair does not stop at the first damaged
  // WAL: every intact record of the later ones is kept too.
  absl::Status ConvertLogs(DBState& state, VersionEdit* edit,
                           std::vector<PendingOutput>* new_tables,
                           SequenceNumber* max_sequence)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mutex) {
    WalReplayOptions options;
    options.info = [this](const std::string& line) { Note(line); };
    // Without a MANIFEST nothing says which WALs were live: every WAL found
    // is replayed, and the links between WALs (db/wal_link.h), which
    // assume the live chain, are not checked.
    options.min_log_number = std::numeric_limits<uint64_t>::max();
    for (uint64_t number : logs_) {
      RepairTarget target(state, edit, new_tables);
      RecoveryReport report;
      const size_t tables_before = edit->new_files().size();
      absl::Status s = ReplayWals(state.env, dbname_, {number}, options,
                                  &target, max_sequence, &report);
      if (target.write_error().ok()) target.Flush().IgnoreError();
      if (!target.write_error().ok()) {
        return absl::Status(
            target.write_error().code(),
            absl::StrCat("RepairDB: writing a table from ",
                         LogFileName(dbname_, number),
                         " failed: ", target.write_error().message()));
      }
      const size_t tables_made = edit->new_files().size() - tables_before;
      const std::string name = LogFileName("", number).substr(1);
      if (!s.ok() || report.stopped_at_damage) {
        Note(absl::StrCat("WAL ", name, ": kept ", report.records_replayed,
                          " records before the damage in ", tables_made,
                          " table(s); ",
                          s.ok() ? report.first_error : s.ToString()));
        if (absl::Status m = SetAside(name, "damaged WAL"); !m.ok()) return m;
        ++logs_damaged_;
      } else {
        Note(absl::StrCat("WAL ", name, ": ", report.records_replayed,
                          " records into ", tables_made, " table(s)"));
      }
    }
    return absl::OkStatus();
  }

  // Read table `number` whole, every block checked: on success its key
  // range and largest sequence go to *good; a table that does not read back
  // whole is set aside.
  absl::Status ScanTable(DBState& state, uint64_t number,
                         std::vector<GoodTable>* good) {
    const std::string name = TableFileName("", number).substr(1);
    GoodTable t;
    t.meta.number = number;
    absl::Status s = ReadTable(state, &t);
    if (s.ok()) {
      good->push_back(std::move(t));
      return absl::OkStatus();
    }
    state.table_cache->Evict(number);
    Note(absl::StrCat("table ", name, ": ", s.ToString()));
    return SetAside(name, "damaged table");
  }

  absl::Status ReadTable(DBState& state, GoodTable* t) {
    const std::string fname = TableFileName(dbname_, t->meta.number);
    absl::StatusOr<uint64_t> size = env_->GetFileSize(fname);
    if (!size.ok()) return size.status();
    t->meta.file_size = *size;
    ReadOptions read;
    read.verify_checksums = true;
    read.fill_cache = false;  // read once; no use to the cache
    std::unique_ptr<Iterator> it =
        state.table_cache->NewIterator(read, t->meta.number, *size);
    uint64_t entries = 0;
    std::string previous;
    bool all_at_zero = true;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view key = it->key();
      ParsedInternalKey parsed;
      if (!ParseInternalKey(key, &parsed)) {
        return absl::DataLossError(absl::StrCat(
            fname, ": entry ", entries, " has a malformed internal key"));
      }
      if (entries > 0 && state.icmp.Compare(previous, key) >= 0) {
        return absl::DataLossError(
            absl::StrCat(fname, ": entry ", entries, " is out of order"));
      }
      if (entries == 0) t->meta.smallest.DecodeFrom(key);
      previous.assign(key);
      t->max_sequence = std::max(t->max_sequence, parsed.sequence);
      all_at_zero = all_at_zero && parsed.sequence == 0;
      ++entries;
    }
    if (!it->status().ok()) return it->status();
    if (entries == 0) {
      // The engine never writes an empty table: this one lost its data.
      return absl::DataLossError(absl::StrCat(fname, ": holds no entries"));
    }
    t->meta.largest.DecodeFrom(previous);
    t->ingested = all_at_zero;
    ++tables_kept_;
    return absl::OkStatus();
  }

  // Give each ingested table a global sequence number, and return the last
  // sequence of the repaired database. An ingested table's sequence was one
  // above the last sequence of the database when it was ingested, and every
  // table numbered below it existed then (an output is numbered when it is
  // started, and ingestion numbers its tables above every other file), so
  // it gets one above the largest sequence of the tables numbered below it:
  // newer than everything it was ingested over, older than what was written
  // after it.
  SequenceNumber AssignIngestedSequences(std::vector<GoodTable>* good,
                                         SequenceNumber log_max_sequence) {
    // *good is in file number order (tables_ is sorted).
    SequenceNumber below = 0;
    for (GoodTable& t : *good) {
      if (!t.ingested) {
        below = std::max(below, t.max_sequence);
        continue;
      }
      const SequenceNumber seq = below + 1;
      FileMetaData& m = t.meta;
      m.global_seqno = seq;
      ParsedInternalKey smallest;
      ParsedInternalKey largest;
      ParseInternalKey(m.smallest.Encode(), &smallest);
      ParseInternalKey(m.largest.Encode(), &largest);
      m.smallest = InternalKey(smallest.user_key, seq, smallest.type);
      m.largest = InternalKey(largest.user_key, seq, largest.type);
      t.max_sequence = seq;
      below = seq;
      Note(absl::StrCat("table ", TableFileName("", m.number).substr(1),
                        ": ingested (all entries at sequence 0); reads as "
                        "sequence ",
                        seq));
    }
    SequenceNumber last = log_max_sequence;
    for (const GoodTable& t : *good) last = std::max(last, t.max_sequence);
    return last;
  }

  // Level 0 is read newest file number first, and the numbers of tables
  // from different levels (and of the tables made from WALs) do not follow
  // the age of their entries: a point read could find an older version of
  // a key first. A compaction of the whole key range merges the tables by
  // sequence number, newest version first, so every read is exact again.
  absl::Status MergeLevel0() {
    Options options = options_;
    options.create_if_missing = false;
    options.error_if_exists = false;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dbname_);
    absl::Status s = db.status();
    if (s.ok()) s = (*db)->CompactRange(nullptr, nullptr);
    if (!s.ok()) {
      return absl::Status(
          s.code(),
          absl::StrCat("RepairDB: ", dbname_,
                       " has a new MANIFEST, but compacting it after the "
                       "repair failed: ",
                       s.message()));
    }
    db->reset();
    Note("compacted the repaired tables into one sorted run");
    return absl::OkStatus();
  }

  // Move `name` (a file of the database directory) into lost/, under a name
  // no earlier repair used.
  absl::Status SetAside(const std::string& name, const char* what) {
    if (absl::Status s = env_->CreateDir(lost_dir_); !s.ok()) return s;
    std::string to = absl::StrCat(lost_dir_, "/", name);
    for (int i = 1; env_->FileExists(to); ++i) {
      to = absl::StrCat(lost_dir_, "/", name, ".", i);
    }
    absl::Status s = env_->RenameFile(absl::StrCat(dbname_, "/", name), to);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("RepairDB: cannot set ", what, " ", name,
                                       " aside as ", to, ": ", s.message()));
    }
    ++set_aside_;
    Note(absl::StrCat("set ", what, " ", name, " aside as ", to));
    return absl::OkStatus();
  }

  void Note(std::string line) { summary_.push_back(std::move(line)); }

  // Append the summary to the LOG file. After the compaction's Open: that
  // Open starts a new LOG, which would otherwise hide the summary in
  // LOG.old. The LOG is informational; failing to write it fails nothing.
  void WriteSummaryToLog() {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        env_->NewAppendableFile(InfoLogFileName(dbname_));
    if (!file.ok()) return;
    Logger log(*std::move(file));
    log.Log(absl::StrCat(
        "repair of ", dbname_, ": ", tables_.size(), " tables found, ",
        tables_kept_, " kept; ", logs_.size(), " WALs found, ", logs_damaged_,
        " damaged; ", set_aside_, " files set aside in ", lost_dir_));
    for (const std::string& line : summary_) log.Log(line);
  }

  const std::string dbname_;
  const Options options_;
  Env* const env_;
  const std::string lost_dir_;

  std::vector<uint64_t> logs_;
  std::vector<uint64_t> tables_;
  std::vector<std::string> manifests_;
  uint64_t max_number_ = 0;

  uint64_t tables_kept_ = 0;
  uint64_t logs_damaged_ = 0;
  uint64_t set_aside_ = 0;
  std::vector<std::string> summary_;
};

}  // namespace

absl::Status RepairDB(const std::string& path, const Options& options) {
  const Options sanitized = SanitizeOptions(options);
  if (absl::Status s = CheckOptions(sanitized); !s.ok()) return s;
  return Repairer(path, sanitized).Run();
}

}  // namespace sift
