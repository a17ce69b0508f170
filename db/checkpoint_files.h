#ifndef SIFT_DB_CHECKPOINT_FILES_H_
#define SIFT_DB_CHECKPOINT_FILES_H_

// Writing a checkpoint: the file work behind DB::CreateCheckpoint, given the
// files of the database at the checkpoint's point in time.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sift/env.h"

namespace sift {

// The files of a database at one point in time, as recorded under the DB
// mutex. Together they hold exactly the state of that moment: the tables of
// the current version, the MANIFEST records up to that version, and the WALs
// holding the writes not yet in those tables, the active one up to its last
// committed record.
struct CheckpointFiles {
  std::vector<uint64_t> tables;
  uint64_t manifest_number = 0;
  // The MANIFEST's prefix to copy (VersionSet::ManifestFileSize).
  uint64_t manifest_size = 0;
  // WALs from min_log_number (the version set's log number) up to the active
  // one; those below active_log_number are closed and copied whole.
  uint64_t min_log_number = 0;
  uint64_t active_log_number = 0;
  // The active WAL's prefix to copy (WritePath::LoggedBytes).
  uint64_t active_log_size = 0;
};

// What WriteCheckpoint did, for the LOG file.
struct CheckpointReport {
  uint64_t tables_linked = 0;
  uint64_t tables_copied = 0;  // where the Env could not link
  uint64_t logs_copied = 0;
  uint64_t bytes_copied = 0;  // tables, MANIFEST and WALs
};

// Write the checkpoint of database `dbname` described by `files` into the
// new directory `dir`: tables hard-linked (Env::LinkFile) or, where the Env
// or file system cannot link them, copied; the MANIFEST's and the active
// WAL's prefixes and the older live WALs copied; every copy synced; then
// CURRENT written (temp file, sync, rename, sync of `dir`) and the parent of
// `dir` synced, so the checkpoint is durable and complete once CURRENT
// exists. On error whatever was created is removed, `dir` included, and the
// error is returned (naming the file).
//
// REQUIRES: `dir` does not exist; every file named by `files` stays in
// `dbname` for the duration of the call (FileDeletionPause).
absl::StatusOr<CheckpointReport> WriteCheckpoint(Env* env,
                                                 const std::string& dbname,
                                                 const CheckpointFiles& files,
                                                 const std::string& dir);

}  // namespace sift

#endif  // SIFT_DB_CHECKPOINT_FILES_H_
