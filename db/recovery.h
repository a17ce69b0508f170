#ifndef SIFT_DB_RECOVERY_H_
#define SIFT_DB_RECOVERY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "db/db_state.h"
#include "db/version_edit.h"
#include "sift/env.h"

namespace sift {

// Brings a database directory to a state the DB can serve from, for Open:
//
//   1. create the directory (create_if_missing) and take the LOCK file: a
//      database held by another process or DB object fails at once, saying
//      so;
//   2. no CURRENT: create a new database (create_if_missing), unless tables
//      or logs are present, which means CURRENT was lost: DataLossError,
//      never an empty database over existing data. With CURRENT:
//      error_if_exists fails, else VersionSet::Recover (a missing or damaged
//      MANIFEST is DataLossError) and a check that every table the version
//      names exists;
//   3. replay the WALs not yet covered by tables (IsLiveLog) in order into
//      memtables, flushing each full one to a level-0 table. A record cut
//      short at the end of a log (a write torn by a crash) ends the log
//      cleanly. Replay is point-in-time (wal_replay.h): it stops at the
//      first damaged record and replays nothing after it, in that log or a
//      later one, so the state is a prefix of what was written. What was
//      left out is reported in the LOG file and in state.recovery (the
//      sift.recovery property), and the logs not fully replayed are copied
//      to NNNNNN.log.damaged before the originals become obsolete. Under
//      paranoid_checks damage fails Open with DataLossError instead;
//   4. flush what is left, record the tables, the last sequence and a fresh
//      WAL number in a new MANIFEST, create that WAL and delete obsolete
//      files.
//
// Thread safety: runs before any other thread can reach the DB; holds
// state.mutex as the VersionSet requires.
class Recovery {
 public:
  // `state` is not owned and must outlive this object.
  explicit Recovery(DBState& state) : state_(state) {}
  Recovery(const Recovery&) = delete;
  Recovery& operator=(const Recovery&) = delete;

  // Steps 1-4. On success *lock holds the LOCK file and *wal is the new WAL,
  // numbered state.logfile_number(); state.mem() is an empty memtable. On
  // failure *lock may hold the lock (the caller releases it).
  absl::Status Run(std::unique_ptr<FileLock>* lock,
                   std::unique_ptr<WritableFile>* wal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

 private:
  // Step 1, and the "no database here" check that comes before the lock.
  absl::Status PrepareDirectory(std::unique_ptr<FileLock>* lock);
  absl::Status Lock(std::unique_ptr<FileLock>* lock);
  void OpenInfoLog();
  // Step 2: load the version, or start *edit for a new database.
  absl::Status LoadVersion(const std::vector<std::string>& children,
                           VersionEdit* edit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Step 2 when CURRENT is missing: is there data without it?
  absl::Status CheckNoOrphanedData(const std::vector<std::string>& children);
  absl::Status CheckTablesPresent(const std::vector<std::string>& children)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Step 3: replay the live WALs into tables recorded in *edit, and raise
  // the last sequence.
  absl::Status ReplayLogs(const std::vector<std::string>& children,
                          VersionEdit* edit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Copy each log the replay did not finish to NNNNNN.log.damaged. Runs
  // before the new MANIFEST makes the originals obsolete, so a crash at any
  // point leaves either the original or the copy.
  absl::Status KeepAsideUnreplayedLogs()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Step 4 up to the new WAL: MANIFEST edit, WAL file, state.mem.
  absl::Status InstallNewLog(VersionEdit* edit,
                             std::unique_ptr<WritableFile>* wal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  DBState& state_;
  // Guards of the tables the replay wrote, until the edit naming them is
  // applied. Destroyed with state_.mutex held (Run's caller holds it).
  std::vector<PendingOutput> replayed_tables_;
};

}  // namespace sift

#endif  // SIFT_DB_RECOVERY_H_
