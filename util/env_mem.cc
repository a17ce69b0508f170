// NewMemEnv: files and directories kept in memory; threads and the clock come
// from the base Env.
//
// Model: a file is a shared, lock-protected byte string; a path maps to one.
// Open file objects hold the byte string, so removing or renaming a path does
// not disturb them (like an unlinked-but-open file on POSIX). Directories are
// implicit: a directory exists if it was created with CreateDir or if a file
// or created directory lies below it. Paths are normalized (repeated and
// trailing slashes dropped) before use.

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "sift/env.h"
#include "util/mutex.h"

namespace sift {
namespace {

// The contents of one file. Readers copy out under the file's lock, so a file
// may be read from many threads while another thread appends to it.
class FileData {
 public:
  size_t Size() const {
    MutexLock lock(&mu_);
    return bytes_.size();
  }

  // Copy up to `n` bytes at `offset` to `dst`; returns the count copied.
  size_t Read(uint64_t offset, size_t n, char* dst) const {
    MutexLock lock(&mu_);
    if (offset >= bytes_.size()) return 0;
    const size_t count =
        std::min<uint64_t>(n, bytes_.size() - static_cast<size_t>(offset));
    std::memcpy(dst, bytes_.data() + offset, count);
    return count;
  }

  void Append(std::string_view data) {
    MutexLock lock(&mu_);
    bytes_.append(data.data(), data.size());
  }

  void Truncate() {
    MutexLock lock(&mu_);
    bytes_.clear();
  }

 private:
  mutable Mutex mu_;
  std::string bytes_ ABSL_GUARDED_BY(mu_);
};

using FileRef = std::shared_ptr<FileData>;

absl::Status NoSuchFile(std::string_view fname) {
  return absl::NotFoundError(
      absl::StrCat(absl::string_view(fname.data(), fname.size()),
                   ": No such file or directory"));
}

class MemSequentialFile final : public SequentialFile {
 public:
  explicit MemSequentialFile(FileRef file) : file_(std::move(file)) {}

  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    const size_t got = file_->Read(pos_, n, scratch);
    pos_ += got;
    *result = std::string_view(scratch, got);
    return absl::OkStatus();
  }

  absl::Status Skip(uint64_t n) override {
    pos_ = std::min<uint64_t>(pos_ + n, file_->Size());
    return absl::OkStatus();
  }

 private:
  const FileRef file_;
  uint64_t pos_ = 0;
};

class MemRandomAccessFile final : public RandomAccessFile {
 public:
  explicit MemRandomAccessFile(FileRef file) : file_(std::move(file)) {}

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    *result = std::string_view(scratch, file_->Read(offset, n, scratch));
    return absl::OkStatus();
  }

 private:
  const FileRef file_;
};

// Appends go straight to the file's bytes: there is no buffer to lose, so
// Flush and Sync have nothing to do.
class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(std::string fname, FileRef file)
      : fname_(std::move(fname)), file_(std::move(file)) {}

  absl::Status Append(std::string_view data) override {
    if (closed_) return ClosedError();
    file_->Append(data);
    return absl::OkStatus();
  }
  absl::Status Flush() override {
    return closed_ ? ClosedError() : absl::OkStatus();
  }
  absl::Status Sync() override {
    return closed_ ? ClosedError() : absl::OkStatus();
  }
  absl::Status Close() override {
    if (closed_) return ClosedError();
    closed_ = true;
    return absl::OkStatus();
  }

 private:
  absl::Status ClosedError() const {
    return absl::FailedPreconditionError(
        absl::StrCat(fname_, ": file is already closed"));
  }

  const std::string fname_;
  const FileRef file_;
  bool closed_ = false;
};

class MemEnv;

class MemFileLock final : public FileLock {
 public:
  MemFileLock(MemEnv* env, std::string fname)
      : env_(env), fname_(std::move(fname)) {}
  ~MemFileLock() override;
  const std::string& fname() const { return fname_; }

 private:
  friend class MemEnv;
  MemEnv* env_;  // nullptr once released
  const std::string fname_;
};

std::string Normalize(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// "dir/" for a normalized dir, so that "a/b" is under "a" but "ab" is not.
std::string DirPrefix(const std::string& dir) {
  return dir == "/" ? dir : dir + "/";
}

bool HasPrefix(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

class MemEnv final : public EnvWrapper {
 public:
  explicit MemEnv(Env* base) : EnvWrapper(base) {}

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) override {
    MutexLock lock(&mu_);
    auto it = files_.find(Normalize(fname));
    if (it == files_.end()) return NoSuchFile(fname);
    return std::make_unique<MemSequentialFile>(it->second);
  }

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) override {
    MutexLock lock(&mu_);
    auto it = files_.find(Normalize(fname));
    if (it == files_.end()) return NoSuchFile(fname);
    return std::make_unique<MemRandomAccessFile>(it->second);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) override {
    MutexLock lock(&mu_);
    FileRef& file = files_[Normalize(fname)];
    if (file == nullptr) {
      file = std::make_shared<FileData>();
    } else {
      file->Truncate();  // like O_TRUNC: open readers see the empty file
    }
    return std::make_unique<MemWritableFile>(fname, file);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) override {
    MutexLock lock(&mu_);
    FileRef& file = files_[Normalize(fname)];
    if (file == nullptr) file = std::make_shared<FileData>();
    return std::make_unique<MemWritableFile>(fname, file);
  }

  bool FileExists(const std::string& fname) override {
    MutexLock lock(&mu_);
    const std::string path = Normalize(fname);
    return files_.contains(path) || DirExists(path);
  }

  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) override {
    MutexLock lock(&mu_);
    const std::string path = Normalize(dir);
    if (!DirExists(path)) return NoSuchFile(dir);
    const std::string prefix = DirPrefix(path);
    // The first path component below `prefix` of every file and directory.
    std::set<std::string> names;
    auto add = [&](const std::string& p) {
      if (!HasPrefix(p, prefix) || p.size() == prefix.size()) return;
      const std::string_view rest = std::string_view(p).substr(prefix.size());
      names.emplace(rest.substr(0, rest.find('/')));
    };
    for (const auto& [p, file] : files_) add(p);
    for (const std::string& d : dirs_) add(d);
    return std::vector<std::string>(names.begin(), names.end());
  }

  absl::Status RemoveFile(const std::string& fname) override {
    MutexLock lock(&mu_);
    if (files_.erase(Normalize(fname)) == 0) return NoSuchFile(fname);
    return absl::OkStatus();
  }

  absl::Status CreateDir(const std::string& dir) override {
    MutexLock lock(&mu_);
    const std::string path = Normalize(dir);
    if (files_.contains(path)) {
      return absl::InternalError(absl::StrCat(dir, ": File exists"));
    }
    dirs_.insert(path);
    return absl::OkStatus();
  }

  absl::Status RemoveDir(const std::string& dir) override {
    MutexLock lock(&mu_);
    const std::string path = Normalize(dir);
    if (!DirExists(path)) return NoSuchFile(dir);
    if (HasEntriesBelow(path)) {
      return absl::InternalError(absl::StrCat(dir, ": Directory not empty"));
    }
    dirs_.erase(path);
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> GetFileSize(const std::string& fname) override {
    MutexLock lock(&mu_);
    auto it = files_.find(Normalize(fname));
    if (it == files_.end()) return NoSuchFile(fname);
    return it->second->Size();
  }

  absl::Status RenameFile(const std::string& src,
                          const std::string& target) override {
    MutexLock lock(&mu_);
    auto it = files_.find(Normalize(src));
    if (it == files_.end()) {
      return absl::NotFoundError(absl::StrCat("rename ", src, " to ", target,
                                              ": No such file or directory"));
    }
    FileRef file = std::move(it->second);
    files_.erase(it);
    files_[Normalize(target)] = std::move(file);
    return absl::OkStatus();
  }

  // Both names share one FileData, as two links share an inode.
  absl::Status LinkFile(const std::string& src,
                        const std::string& target) override {
    MutexLock lock(&mu_);
    auto it = files_.find(Normalize(src));
    if (it == files_.end()) {
      return absl::NotFoundError(absl::StrCat("link ", src, " to ", target,
                                              ": No such file or directory"));
    }
    const std::string to = Normalize(target);
    if (files_.contains(to) || dirs_.contains(to)) {
      return absl::InternalError(
          absl::StrCat("link ", src, " to ", target, ": File exists"));
    }
    FileRef file = it->second;  // the insertion may move the map's entries
    files_[to] = std::move(file);
    return absl::OkStatus();
  }

  absl::Status SyncDir(const std::string& dir) override {
    MutexLock lock(&mu_);
    if (!DirExists(Normalize(dir))) return NoSuchFile(dir);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& fname) override {
    MutexLock lock(&mu_);
    const std::string path = Normalize(fname);
    if (!locked_.insert(path).second) {
      return absl::FailedPreconditionError(
          absl::StrCat("lock ", fname, ": already held"));
    }
    FileRef& file = files_[path];
    if (file == nullptr) file = std::make_shared<FileData>();
    return std::make_unique<MemFileLock>(this, path);
  }

  absl::Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    auto* l = static_cast<MemFileLock*>(lock.get());
    Unlock(l->fname());
    l->env_ = nullptr;
    return absl::OkStatus();
  }

  void Unlock(const std::string& path) {
    MutexLock lock(&mu_);
    locked_.erase(path);
  }

 private:
  bool DirExists(const std::string& path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return path == "/" || path == "." || dirs_.contains(path) ||
           HasEntriesBelow(path);
  }

  bool HasEntriesBelow(const std::string& path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::string prefix = DirPrefix(path);
    for (const auto& [p, file] : files_) {
      if (HasPrefix(p, prefix)) return true;
    }
    for (const std::string& d : dirs_) {
      if (HasPrefix(d, prefix)) return true;
    }
    return false;
  }

  Mutex mu_;
  absl::flat_hash_map<std::string, FileRef> files_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> dirs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> locked_ ABSL_GUARDED_BY(mu_);
};

MemFileLock::~MemFileLock() {
  // Dropped without UnlockFile: release anyway.
  if (env_ != nullptr) env_->Unlock(fname_);
}

}  // namespace

std::unique_ptr<Env> NewMemEnv(Env* base) {
  return std::make_unique<MemEnv>(base);
}

}  // namespace sift
