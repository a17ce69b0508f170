#include "db/checkpoint_files.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "db/filename.h"

namespace sift {
namespace {

constexpr uint64_t kWholeFile = std::numeric_limits<uint64_t>::max();

// Copy the first `limit` bytes of `from` (all of it for kWholeFile) to the
// new file `to`, sync the copy and add the bytes to *copied. A file shorter
// than a given limit is an error: the checkpoint would miss recorded state.
absl::Status CopyPrefix(Env* env, const std::string& from,
                        const std::string& to, uint64_t limit,
                        uint64_t* copied) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> in =
      env->NewSequentialFile(from);
  if (!in.ok()) return in.status();
  absl::StatusOr<std::unique_ptr<WritableFile>> out = env->NewWritableFile(to);
  if (!out.ok()) return out.status();
  constexpr size_t kChunk = size_t{1} << 16;
  auto scratch = std::make_unique<char[]>(kChunk);
  uint64_t left = limit;
  absl::Status s;
  while (s.ok() && left > 0) {
    std::string_view got;
    s = (*in)->Read(static_cast<size_t>(std::min<uint64_t>(kChunk, left)), &got,
                    scratch.get());
    if (!s.ok() || got.empty()) break;
    s = (*out)->Append(got);
    left -= got.size();
    *copied += got.size();
  }
  if (s.ok() && limit != kWholeFile && left > 0) {
    s = absl::InternalError(absl::StrCat(from, ": ", limit - left,
                                         " bytes, fewer than the ", limit,
                                         " bytes recorded for the checkpoint"));
  }
  if (s.ok()) s = (*out)->Sync();
  absl::Status close = (*out)->Close();
  return s.ok() ? close : s;
}

// Link table `number` into the checkpoint, or copy it where the Env cannot
// link. A linked table needs no sync: the database synced it before any
// MANIFEST named it, and tables are never written again.
absl::Status AddTable(Env* env, const std::string& dbname,
                      const std::string& dir, uint64_t number,
                      CheckpointReport* report) {
  const std::string from = TableFileName(dbname, number);
  const std::string to = TableFileName(dir, number);
  absl::Status s = env->LinkFile(from, to);
  if (s.ok()) {
    ++report->tables_linked;
    return s;
  }
  if (!absl::IsUnimplemented(s)) return s;
  ++report->tables_copied;
  return CopyPrefix(env, from, to, kWholeFile, &report->bytes_copied);
}

// The live WALs below the active one, oldest first.
absl::StatusOr<std::vector<uint64_t>> OlderLiveLogs(
    Env* env, const std::string& dbname, const CheckpointFiles& files) {
  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(dbname);
  if (!children.ok()) return children.status();
  std::vector<uint64_t> logs;
  for (const std::string& name : *children) {
    uint64_t number = 0;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kLogFile &&
        IsLiveLog(number, files.min_log_number) &&
        number < files.active_log_number) {
      logs.push_back(number);
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// Everything but CURRENT.
absl::Status WriteFiles(Env* env, const std::string& dbname,
                        const CheckpointFiles& files, const std::string& dir,
                        CheckpointReport* report) {
  for (const uint64_t number : files.tables) {
    if (absl::Status s = AddTable(env, dbname, dir, number, report); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s =
          CopyPrefix(env, DescriptorFileName(dbname, files.manifest_number),
                     DescriptorFileName(dir, files.manifest_number),
                     files.manifest_size, &report->bytes_copied);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<uint64_t>> logs =
      OlderLiveLogs(env, dbname, files);
  if (!logs.ok()) return logs.status();
  logs->push_back(files.active_log_number);
  for (const uint64_t number : *logs) {
    const uint64_t limit =
        number == files.active_log_number ? files.active_log_size : kWholeFile;
    if (absl::Status s =
            CopyPrefix(env, LogFileName(dbname, number),
                       LogFileName(dir, number), limit, &report->bytes_copied);
        !s.ok()) {
      return s;
    }
    ++report->logs_copied;
  }
  return absl::OkStatus();
}

std::string ParentDir(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return dir.substr(0, slash);
}

// Best effort: the error that made the checkpoint fail is what the caller
// reports; a file left behind here is named in `failure`.
void RemovePartialCheckpoint(Env* env, const std::string& dir,
                             absl::Status* failure) {
  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(dir);
  absl::Status cleanup = children.status();
  if (children.ok()) {
    for (const std::string& name : *children) {
      absl::Status s = env->RemoveFile(absl::StrCat(dir, "/", name));
      if (cleanup.ok()) cleanup = s;
    }
  }
  if (cleanup.ok()) cleanup = env->RemoveDir(dir);
  if (!cleanup.ok()) {
    *failure = absl::Status(
        failure->code(),
        absl::StrCat(failure->message(), " (removing the partial checkpoint ",
                     dir, " failed too: ", cleanup.message(), ")"));
  }
}

}  // namespace

absl::StatusOr<CheckpointReport> WriteCheckpoint(Env* env,
                                                 const std::string& dbname,
                                                 const CheckpointFiles& files,
                                                 const std::string& dir) {
  if (absl::Status s = env->CreateDir(dir); !s.ok()) return s;
  CheckpointReport report;
  absl::Status s = WriteFiles(env, dbname, files, dir, &report);
  // CURRENT last: until it exists the directory is not a database, so a
  // crash before this point leaves nothing that opens as a wrong checkpoint.
  // SetCurrentFile syncs `dir`, making every name in it durable.
  if (s.ok()) s = SetCurrentFile(env, dir, files.manifest_number);
  if (s.ok()) s = env->SyncDir(ParentDir(dir));
  if (!s.ok()) {
    RemovePartialCheckpoint(env, dir, &s);
    return s;
  }
  return report;
}

}  // namespace sift
