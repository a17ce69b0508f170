#include "db/obsolete_files.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/filename.h"

namespace sift {
namespace {

// The deletion pass proper, without the mutex: every file of the database
// directory that `live`, `log_number` and `manifest_number` do not keep.
void DeleteFilesNotIn(DBState& state, const std::set<uint64_t>& live,
                      uint64_t log_number, uint64_t manifest_number) {
  absl::StatusOr<std::vector<std::string>> children =
      state.env->GetChildren(state.dbname);
  if (!children.ok()) {
    state.Log(absl::StrCat("cannot list files to delete: ",
                           children.status().ToString()));
    return;
  }
  for (const std::string& name : *children) {
    uint64_t number = 0;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    bool keep = true;
    switch (type) {
      case FileType::kLogFile:
        keep = IsLiveLog(number, log_number);
        break;
      case FileType::kDamagedLogFile:
        // Kept aside by recovery for the user to inspect; never ours to
        // delete (DestroyDB removes it with the rest).
        keep = true;
        break;
      case FileType::kDescriptorFile:
        keep = number >= manifest_number;
        break;
      case FileType::kTableFile:
      case FileType::kTempFile:
        keep = live.count(number) > 0;
        break;
      case FileType::kCurrentFile:
      case FileType::kDBLockFile:
      case FileType::kInfoLogFile:
        keep = true;
        break;
    }
    if (keep) continue;
    if (type == FileType::kTableFile) state.table_cache->Evict(number);
    const std::string path = absl::StrCat(state.dbname, "/", name);
    absl::Status s = state.env->RemoveFile(path);
    state.Log(s.ok()
                  ? absl::StrCat("deleted ", name)
                  : absl::StrCat("cannot delete ", name, ": ", s.ToString()));
  }
}

}  // namespace

void DeleteObsoleteFiles(DBState& state) {
  if (!state.bg_error.ok() || state.file_deletion_pauses > 0) return;

  // Snapshot what is live while holding the mutex. Files created after this
  // point while the mutex is released are safe: new WALs and MANIFESTs get
  // numbers above the ones read here, and a new table's number cannot be
  // registered until this pass ends (DBState::NewPendingOutput waits for
  // it).
  std::set<uint64_t> live = state.pending_outputs();
  state.versions->AddLiveFiles(&live);
  const uint64_t log_number = state.versions->LogNumber();
  const uint64_t manifest_number = state.versions->ManifestFileNumber();

  state.deleting_files = true;
  state.mutex.Unlock();
  DeleteFilesNotIn(state, live, log_number, manifest_number);
  state.mutex.Lock();
  state.deleting_files = false;
  state.bg_cv.SignalAll();  // a FileDeletionPause may be waiting
}

FileDeletionPause::FileDeletionPause(DBState& state) : state_(state) {
  MutexLock lock(&state_.mutex);
  while (state_.deleting_files) state_.bg_cv.Wait(&state_.mutex);
  ++state_.file_deletion_pauses;
}

FileDeletionPause::~FileDeletionPause() {
  MutexLock lock(&state_.mutex);
  --state_.file_deletion_pauses;
}

}  // namespace sift
