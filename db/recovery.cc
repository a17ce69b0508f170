#include "db/recovery.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "db/flush.h"
#include "db/obsolete_files.h"
#include "db/wal_replay.h"

namespace sift {
namespace {

// Replayed batches go into a memtable created on demand; a full one is
// flushed to a level-0 table recorded in `edit`.
class RecoveryTarget final : public ReplayTarget {
 public:
  // The guards of the tables written are appended to *tables.
  RecoveryTarget(DBState& state, VersionEdit* edit,
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
    return s;
  }

 private:
  DBState& state_;
  VersionEdit* const edit_;
  std::vector<PendingOutput>* const tables_;
  std::shared_ptr<MemTable> mem_;
};

// Copy `from` to `to` and sync the copy.
absl::Status CopyFile(Env* env, const std::string& from,
                      const std::string& to) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> in =
      env->NewSequentialFile(from);
  if (!in.ok()) return in.status();
  absl::StatusOr<std::unique_ptr<WritableFile>> out = env->NewWritableFile(to);
  if (!out.ok()) return out.status();
  constexpr size_t kChunk = 1 << 16;
  auto scratch = std::make_unique<char[]>(kChunk);
  absl::Status s;
  while (s.ok()) {
    std::string_view got;
    s = (*in)->Read(kChunk, &got, scratch.get());
    if (!s.ok() || got.empty()) break;
    s = (*out)->Append(got);
  }
  if (s.ok()) s = (*out)->Sync();
  absl::Status close = (*out)->Close();
  return s.ok() ? close : s;
}

// Whether `fname` exists. Unlike Env::FileExists, a file that cannot be
// reached (permission denied, I/O error) is an error, not a missing file.
absl::StatusOr<bool> FileExistsOrError(Env* env, const std::string& fname) {
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (size.ok()) return true;
  if (absl::IsNotFound(size.status())) return false;
  return size.status();
}

}  // namespace

absl::Status Recovery::Run(std::unique_ptr<FileLock>* lock,
                           std::unique_ptr<WritableFile>* wal) {
  if (absl::Status s = PrepareDirectory(lock); !s.ok()) return s;
  absl::StatusOr<std::vector<std::string>> children =
      state_.env->GetChildren(state_.dbname);
  if (!children.ok()) return children.status();

  VersionEdit edit;
  if (absl::Status s = LoadVersion(*children, &edit); !s.ok()) return s;
  if (absl::Status s = ReplayLogs(*children, &edit); !s.ok()) return s;
  if (absl::Status s = KeepAsideUnreplayedLogs(); !s.ok()) return s;
  if (absl::Status s = InstallNewLog(&edit, wal); !s.ok()) return s;

  DeleteObsoleteFiles(state_);
  state_.Log(absl::StrCat(
      "opened ", state_.dbname, ": replayed ", state_.recovery.logs_replayed,
      " WALs, last sequence ", state_.versions->LastSequence(), "; ",
      state_.versions->LevelSummary()));
  return absl::OkStatus();
}

absl::Status Recovery::PrepareDirectory(std::unique_ptr<FileLock>* lock) {
  Env* const env = state_.env;
  const std::string& dbname = state_.dbname;
  if (state_.options.create_if_missing) {
    if (absl::Status s = env->CreateDir(dbname); !s.ok()) return s;
  } else if (absl::StatusOr<bool> current =
                 FileExistsOrError(env, CurrentFileName(dbname));
             !current.ok()) {
    return current.status();
  } else if (!*current) {
    // Say "no database" before trying to lock (which would create LOCK),
    // unless data files show a database that lost its CURRENT (reported as
    // damage below, under the lock).
    absl::StatusOr<std::vector<std::string>> children =
        env->GetChildren(dbname);
    if (!children.ok() && !absl::IsNotFound(children.status())) {
      return children.status();  // e.g. permission denied
    }
    if (!children.ok() || CheckNoOrphanedData(*children).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          dbname, ": no database here (create_if_missing is false)"));
    }
  }
  if (absl::Status s = Lock(lock); !s.ok()) return s;
  OpenInfoLog();
  return absl::OkStatus();
}

absl::Status Recovery::LoadVersion(const std::vector<std::string>& children,
                                   VersionEdit* edit) {
  const Options& options = state_.options;
  const std::string& dbname = state_.dbname;
  absl::StatusOr<bool> current_exists =
      FileExistsOrError(state_.env, CurrentFileName(dbname));
  if (!current_exists.ok()) return current_exists.status();
  if (!*current_exists) {
    if (absl::Status s = CheckNoOrphanedData(children); !s.ok()) return s;
    if (!options.create_if_missing) {
      return absl::InvalidArgumentError(absl::StrCat(
          dbname, ": no database here (create_if_missing is false)"));
    }
    // The first LogAndApply writes the first MANIFEST and CURRENT.
    edit->SetComparatorName(state_.icmp.user_comparator()->Name());
    state_.Log(absl::StrCat("creating database ", dbname));
    return absl::OkStatus();
  }
  if (options.error_if_exists) {
    return absl::InvalidArgumentError(
        absl::StrCat(dbname, ": database exists (error_if_exists is true)"));
  }
  if (absl::Status s = state_.versions->Recover(); !s.ok()) return s;
  return CheckTablesPresent(children);
}

absl::Status Recovery::ReplayLogs(const std::vector<std::string>& children,
                                  VersionEdit* edit) {
  // WALs newer than the last flush, oldest first. Also make sure no file
  // number on disk is handed out again.
  std::vector<uint64_t> logs;
  for (const std::string& name : children) {
    uint64_t number = 0;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    state_.versions->MarkFileNumberUsed(number);
    if (type == FileType::kLogFile &&
        IsLiveLog(number, state_.versions->LogNumber())) {
      logs.push_back(number);
    }
  }
  std::sort(logs.begin(), logs.end());

  WalReplayOptions options;
  options.fail_on_damage = state_.options.paranoid_checks;
  options.min_log_number = state_.versions->LogNumber();
  options.info = [this](const std::string& line) { state_.Log(line); };
  RecoveryTarget target(state_, edit, &replayed_tables_);
  SequenceNumber max_sequence = state_.versions->LastSequence();
  absl::Status s = ReplayWals(state_.env, state_.dbname, logs, options, &target,
                              &max_sequence, &state_.recovery);
  if (s.ok()) s = target.Flush();
  if (!s.ok()) return s;
  if (max_sequence > state_.versions->LastSequence()) {
    state_.versions->SetLastSequence(max_sequence);
  }
  return absl::OkStatus();
}

absl::Status Recovery::KeepAsideUnreplayedLogs() {
  RecoveryReport& report = state_.recovery;
  for (uint64_t number : report.unreplayed_logs) {
    const std::string kept = DamagedLogFileName(state_.dbname, number);
    absl::Status s =
        CopyFile(state_.env, LogFileName(state_.dbname, number), kept);
    if (!s.ok()) {
      // Without the copy the new MANIFEST would make the only copy of the
      // dropped writes obsolete: refuse to open instead.
      return absl::Status(
          s.code(), absl::StrCat("cannot keep the log recovery stopped at "
                                 "aside as ",
                                 kept, ": ", s.message()));
    }
    report.kept_aside.push_back(kept.substr(state_.dbname.size() + 1));
    state_.Log(absl::StrCat("kept the unreplayed WAL aside as ", kept));
  }
  if (report.kept_aside.empty()) return absl::OkStatus();
  return state_.env->SyncDir(state_.dbname);
}

absl::Status Recovery::InstallNewLog(VersionEdit* edit,
                                     std::unique_ptr<WritableFile>* wal) {
  // The new MANIFEST names the WAL to come; the replayed WALs are now in
  // tables and become obsolete. The WAL itself is created after the MANIFEST
  // is durable: a crash in between leaves a database with no WAL to replay,
  // which is fine, where the other order could leave a WAL without CURRENT.
  const uint64_t log_number = state_.versions->NewFileNumber();
  edit->SetLogNumber(log_number);
  absl::Status s = state_.versions->LogAndApply(edit, &state_.mutex);
  if (!s.ok()) {
    // An abandoned MANIFEST may name the replayed tables: keep them.
    for (PendingOutput& table : replayed_tables_) table.KeepPending();
    return s;
  }
  // The version names the replayed tables now: their guards may go.
  replayed_tables_.clear();

  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      state_.env->NewLogFile(LogFileName(state_.dbname, log_number));
  if (!file.ok()) return file.status();
  // The WAL's name must be durable before a synced write to it counts.
  if (s = state_.env->SyncDir(state_.dbname); !s.ok()) return s;
  *wal = *std::move(file);
  state_.SetMemTable(state_.NewMemTable(), log_number);
  return absl::OkStatus();
}

absl::Status Recovery::Lock(std::unique_ptr<FileLock>* lock) {
  absl::StatusOr<std::unique_ptr<FileLock>> l =
      state_.env->LockFile(LockFileName(state_.dbname));
  if (!l.ok()) {
    // FailedPrecondition: another handle holds it (see DB::Open).
    const bool held = absl::IsFailedPrecondition(l.status());
    return absl::Status(
        l.status().code(),
        absl::StrCat(
            "cannot lock database ", state_.dbname,
            held ? " (is it open in another process or DB object?)" : "", ": ",
            l.status().message()));
  }
  *lock = *std::move(l);
  return absl::OkStatus();
}

void Recovery::OpenInfoLog() {
  Env* const env = state_.env;
  const std::string fname = InfoLogFileName(state_.dbname);
  if (env->FileExists(fname)) {
    env->RenameFile(fname, OldInfoLogFileName(state_.dbname)).IgnoreError();
  }
  // The LOG is informational: a database that cannot write it still opens.
  absl::StatusOr<std::unique_ptr<Logger>> logger = Logger::Open(env, fname);
  if (logger.ok()) state_.info_log = *std::move(logger);
}

absl::Status Recovery::CheckNoOrphanedData(
    const std::vector<std::string>& children) {
  for (const std::string& name : children) {
    uint64_t number = 0;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    if (type == FileType::kTableFile || type == FileType::kLogFile ||
        type == FileType::kDamagedLogFile) {
      return absl::DataLossError(absl::StrCat(
          state_.dbname, ": CURRENT is missing but the directory holds ", name,
          "; refusing to create an empty database over existing data"));
    }
  }
  return absl::OkStatus();
}

absl::Status Recovery::CheckTablesPresent(
    const std::vector<std::string>& children) {
  std::set<uint64_t> expected;
  state_.versions->AddLiveFiles(&expected);
  for (const std::string& name : children) {
    uint64_t number = 0;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kTableFile) {
      expected.erase(number);
    }
  }
  if (expected.empty()) return absl::OkStatus();
  std::string missing;
  for (uint64_t number : expected) {
    if (missing.size() > 200) {
      absl::StrAppend(&missing, " ...");
      break;
    }
    absl::StrAppend(&missing, missing.empty() ? "" : " ",
                    TableFileName(state_.dbname, number));
  }
  return absl::DataLossError(
      absl::StrCat(state_.dbname, ": ", expected.size(),
                   " table(s) named by the MANIFEST are missing: ", missing));
}

}  // namespace sift
