// DestroyDB: remove a closed database's files and its directory.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "db/options_check.h"
#include "sift/db.h"
#include "sift/env.h"

namespace sift {

absl::Status DestroyDB(const std::string& dbname, const Options& options) {
  Env* const env = SanitizeOptions(options).env;
  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(dbname);
  if (!children.ok()) {
    // Nothing to destroy.
    if (absl::IsNotFound(children.status())) return absl::OkStatus();
    return children.status();
  }
  if (children->empty()) {
    env->RemoveDir(dbname).IgnoreError();  // may not exist at all
    return absl::OkStatus();
  }

  // Holding the lock makes sure no DB has the database open meanwhile.
  const std::string lock_name = LockFileName(dbname);
  absl::StatusOr<std::unique_ptr<FileLock>> lock = env->LockFile(lock_name);
  if (!lock.ok()) {
    return absl::Status(
        lock.status().code(),
        absl::StrCat("cannot destroy database ", dbname,
                     " (is it open?): ", lock.status().message()));
  }
  absl::Status result;
  for (const std::string& name : *children) {
    uint64_t number = 0;
    FileType type;
    // Only sift's own files: a wrong path must not wipe someone's directory.
    if (!ParseFileName(name, &number, &type) || type == FileType::kDBLockFile) {
      continue;
    }
    absl::Status s = env->RemoveFile(absl::StrCat(dbname, "/", name));
    if (result.ok() && !s.ok()) result = s;
  }
  absl::Status s = env->UnlockFile(*std::move(lock));
  if (result.ok()) result = s;
  s = env->RemoveFile(lock_name);
  if (result.ok() && !s.ok() && !absl::IsNotFound(s)) result = s;
  // Fails if foreign files remain; the database itself is gone either way.
  env->RemoveDir(dbname).IgnoreError();
  return result;
}

}  // namespace sift
