#include "db/recovery.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "db/flush.h"
#include "db/log_reader.h"
#include "db/obsolete_files.h"
#include "db/write_batch_internal.h"
#include "sift/write_batch.h"

namespace sift {
namespace {

// Collects the damage a log::Reader reports while a WAL is replayed.
class ReplayReporter final : public log::Reader::Reporter {
 public:
  ReplayReporter(const DBState& state, std::string fname, bool paranoid)
      : state_(state), fname_(std::move(fname)), paranoid_(paranoid) {}

  void Corruption(size_t bytes, const absl::Status& status) override {
    bytes_dropped_ += bytes;
    const std::string what =
        absl::StrCat(fname_, ": ", paranoid_ ? "" : "dropping ", bytes,
                     " bytes: ", status.message());
    state_.Log(absl::StrCat("WAL damage: ", what));
    if (first_error_.empty()) first_error_ = what;
    if (paranoid_ && status_.ok()) status_ = absl::DataLossError(what);
  }

  // Under paranoid_checks, the first damage as an error; else OK.
  const absl::Status& status() const { return status_; }
  uint64_t bytes_dropped() const { return bytes_dropped_; }
  const std::string& first_error() const { return first_error_; }

 private:
  const DBState& state_;
  const std::string fname_;
  const bool paranoid_;
  absl::Status status_;
  uint64_t bytes_dropped_ = 0;
  std::string first_error_;
};

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
  Env* const env = state_.env;
  const Options& options = state_.options;
  const std::string& dbname = state_.dbname;

  if (options.create_if_missing) {
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

  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(dbname);
  if (!children.ok()) return children.status();

  VersionEdit edit;
  absl::StatusOr<bool> current_exists =
      FileExistsOrError(env, CurrentFileName(dbname));
  if (!current_exists.ok()) return current_exists.status();
  if (!*current_exists) {
    if (absl::Status s = CheckNoOrphanedData(*children); !s.ok()) return s;
    if (!options.create_if_missing) {
      return absl::InvalidArgumentError(absl::StrCat(
          dbname, ": no database here (create_if_missing is false)"));
    }
    // The first LogAndApply below writes the first MANIFEST and CURRENT.
    edit.SetComparatorName(state_.icmp.user_comparator()->Name());
    state_.Log(absl::StrCat("creating database ", dbname));
  } else {
    if (options.error_if_exists) {
      return absl::InvalidArgumentError(
          absl::StrCat(dbname, ": database exists (error_if_exists is true)"));
    }
    bool save_manifest = false;
    if (absl::Status s = state_.versions->Recover(&save_manifest); !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckTablesPresent(*children); !s.ok()) return s;
  }

  // WALs newer than the last flush, oldest first. Also make sure no file
  // number on disk is handed out again.
  std::vector<uint64_t> logs;
  for (const std::string& name : *children) {
    uint64_t number = 0;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    state_.versions->MarkFileNumberUsed(number);
    if (type == FileType::kLogFile &&
        (number >= state_.versions->LogNumber() ||
         number == state_.versions->PrevLogNumber())) {
      logs.push_back(number);
    }
  }
  std::sort(logs.begin(), logs.end());

  std::shared_ptr<MemTable> mem;
  SequenceNumber max_sequence = state_.versions->LastSequence();
  for (uint64_t number : logs) {
    if (absl::Status s = ReplayLog(number, &mem, &max_sequence, &edit);
        !s.ok()) {
      return s;
    }
  }
  if (mem != nullptr && mem->NumEntries() > 0) {
    if (absl::Status s = WriteMemTableToTable(state_, mem.get(), &edit,
                                              /*base=*/nullptr);
        !s.ok()) {
      return s;
    }
  }
  if (max_sequence > state_.versions->LastSequence()) {
    state_.versions->SetLastSequence(max_sequence);
  }

  // The new MANIFEST names the WAL to come; the replayed WALs are now in
  // tables and become obsolete. The WAL itself is created after the MANIFEST
  // is durable: a crash in between leaves a database with no WAL to replay,
  // which is fine, where the other order could leave a WAL without CURRENT.
  const uint64_t log_number = state_.versions->NewFileNumber();
  edit.SetLogNumber(log_number);
  edit.SetPrevLogNumber(0);
  absl::Status s = state_.versions->LogAndApply(&edit, &state_.mutex);
  for (const auto& [level, meta] : edit.new_files()) {
    if (s.ok()) state_.pending_outputs.erase(meta.number);
  }
  if (!s.ok()) return s;

  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(LogFileName(dbname, log_number));
  if (!file.ok()) return file.status();
  // The WAL's name must be durable before a synced write to it counts.
  if (s = env->SyncDir(dbname); !s.ok()) return s;
  *wal = *std::move(file);
  state_.logfile_number = log_number;
  state_.mem = std::make_shared<MemTable>(state_.icmp);

  DeleteObsoleteFiles(state_);
  state_.Log(absl::StrCat(
      "opened ", dbname, ": replayed ", logs.size(), " WALs, last sequence ",
      state_.versions->LastSequence(), "; ", state_.versions->LevelSummary()));
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
    if (type == FileType::kTableFile || type == FileType::kLogFile) {
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

absl::Status Recovery::ReplayLog(uint64_t number,
                                 std::shared_ptr<MemTable>* mem,
                                 SequenceNumber* max_sequence,
                                 VersionEdit* edit) {
  const std::string fname = LogFileName(state_.dbname, number);
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      state_.env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();

  ReplayReporter reporter(state_, fname, state_.options.paranoid_checks);
  log::Reader reader(file->get(), &reporter, /*verify_checksums=*/true);
  std::string scratch;
  std::string_view record;
  WriteBatch batch;
  uint64_t records = 0;
  absl::Status s;
  while (reader.ReadRecord(&record, &scratch) && reporter.status().ok()) {
    const uint64_t offset = reader.LastRecordOffset();
    s = WriteBatchInternal::SetContents(&batch, record);
    if (*mem == nullptr) *mem = std::make_shared<MemTable>(state_.icmp);
    if (s.ok()) s = WriteBatchInternal::InsertInto(&batch, mem->get());
    if (!s.ok()) {
      // The record passed its checksum, so this is damage from before it
      // was written; treat it like other damage. InsertInto applied nothing.
      reporter.Corruption(record.size(), absl::DataLossError(absl::StrCat(
                                             "bad batch in record at offset ",
                                             offset, ": ", s.message())));
      s = absl::OkStatus();
      continue;
    }
    ++records;
    const uint32_t count = WriteBatchInternal::Count(&batch);
    if (count > 0) {
      *max_sequence = std::max(
          *max_sequence, WriteBatchInternal::Sequence(&batch) + count - 1);
    }
    if ((*mem)->ApproximateMemoryUsage() > state_.options.write_buffer_size) {
      s = WriteMemTableToTable(state_, mem->get(), edit, /*base=*/nullptr);
      mem->reset();
      if (!s.ok()) return s;
    }
  }
  if (!reporter.status().ok()) return reporter.status();
  if (!reader.status().ok()) return reader.status();

  RecoveryReport& report = state_.recovery;
  report.logs_replayed += 1;
  report.records_replayed += records;
  report.bytes_dropped += reporter.bytes_dropped();
  if (report.first_error.empty()) report.first_error = reporter.first_error();
  return absl::OkStatus();
}

}  // namespace sift
