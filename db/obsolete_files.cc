#include "db/obsolete_files.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/filename.h"

namespace sift {

void DeleteObsoleteFiles(DBState& state) {
  if (!state.bg_error.ok()) return;

  // Snapshot what is live while holding the mutex. Files created after this
  // point while the mutex is released are safe: new WALs and MANIFESTs get
  // numbers above the ones read here, and new tables are only written by the
  // caller's own thread.
  std::set<uint64_t> live = state.pending_outputs();
  state.versions->AddLiveFiles(&live);
  const uint64_t log_number = state.versions->LogNumber();
  const uint64_t manifest_number = state.versions->ManifestFileNumber();

  state.mutex.Unlock();
  absl::StatusOr<std::vector<std::string>> children =
      state.env->GetChildren(state.dbname);
  if (!children.ok()) {
    state.Log(absl::StrCat("cannot list files to delete: ",
                           children.status().ToString()));
    state.mutex.Lock();
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
  state.mutex.Lock();
}

}  // namespace sift
