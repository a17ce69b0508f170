// DB::CreateCheckpoint: a consistent, openable copy of the database at one
// point in time (doc/scale-out.md).

#include "absl/strings/str_cat.h"
#include "db/checkpoint_files.h"
#include "db/db_impl.h"
#include "db/obsolete_files.h"

namespace sift {

absl::Status DBImpl::CreateCheckpoint(const std::string& dir) {
  if (dir.empty()) {
    return absl::InvalidArgumentError(
        "CreateCheckpoint: dir is empty (give a directory that does not "
        "exist yet)");
  }
  if (state_.env->FileExists(dir)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "CreateCheckpoint: ", dir,
        " already exists (a checkpoint goes into a new directory)"));
  }
  // From here until the files are copied none of them may be deleted, however
  // far flushes and compactions move on.
  FileDeletionPause pause(state_);
  CheckpointFiles files;
  {
    MutexLock lock(&state_.mutex);
    // The point in time: the current version, the MANIFEST records that make
    // it, and the WAL bytes of every write acknowledged so far (a write
    // group's record reaches the OS before the group is acknowledged, so
    // LoggedBytes covers every acknowledged write).
    const std::shared_ptr<const Version> current = state_.versions->current();
    for (int level = 0; level < config::kNumLevels; ++level) {
      for (const auto& f : current->files(level)) {
        files.tables.push_back(f->number);
      }
    }
    files.manifest_number = state_.versions->ManifestFileNumber();
    files.manifest_size = state_.versions->ManifestFileSize();
    files.min_log_number = state_.versions->LogNumber();
    files.active_log_number = state_.logfile_number();
    files.active_log_size = write_path_.LoggedBytes();
  }
  absl::StatusOr<CheckpointReport> report =
      WriteCheckpoint(state_.env, state_.dbname, files, dir);
  if (!report.ok()) {
    state_.Log(absl::StrCat("checkpoint ", dir,
                            " failed: ", report.status().ToString()));
    return report.status();
  }
  state_.Log(absl::StrCat("checkpoint ", dir, ": ", report->tables_linked,
                          " tables linked, ", report->tables_copied,
                          " copied, ", report->logs_copied, " WALs, ",
                          report->bytes_copied, " bytes copied"));
  return absl::OkStatus();
}

}  // namespace sift
