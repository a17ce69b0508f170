#include "util/fault_env.h"

#include <cassert>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sift {
namespace {

std::string Normalize(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out.empty() ? "." : out;
}

// Directory of a normalized path.
std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status DeadFileError(std::string_view fname) {
  return absl::FailedPreconditionError(
      absl::StrCat(absl::string_view(fname.data(), fname.size()),
                   ": file was open during a simulated crash"));
}

}  // namespace

class FaultInjectionEnv::FaultSequentialFile final : public SequentialFile {
 public:
  FaultSequentialFile(FaultInjectionEnv* env, std::string fname,
                      std::unique_ptr<SequentialFile> target)
      : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}

  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    if (absl::Status s = env_->LockAndCheckFault(OpKind::kRead, fname_);
        !s.ok()) {
      *result = std::string_view();
      return s;
    }
    return target_->Read(n, result, scratch);
  }
  absl::Status Skip(uint64_t n) override { return target_->Skip(n); }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<SequentialFile> target_;
};

class FaultInjectionEnv::FaultRandomAccessFile final : public RandomAccessFile {
 public:
  FaultRandomAccessFile(FaultInjectionEnv* env, std::string fname,
                        std::unique_ptr<RandomAccessFile> target)
      : env_(env), fname_(std::move(fname)), target_(std::move(target)) {}

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    if (absl::Status s = env_->LockAndCheckFault(OpKind::kRead, fname_);
        !s.ok()) {
      *result = std::string_view();
      return s;
    }
    return target_->Read(offset, n, result, scratch);
  }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<RandomAccessFile> target_;
};

// All state is touched only by FaultInjectionEnv's Writer* methods, under the
// env's mutex, so that SimulateCrash can kill the file at any moment.
class FaultInjectionEnv::FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::string fname, FileId id,
                    std::unique_ptr<WritableFile> target)
      : env_(env),
        fname_(std::move(fname)),
        id_(id),
        target_(std::move(target)) {}
  ~FaultWritableFile() override { env_->WriterGone(this); }

  absl::Status Append(std::string_view data) override {
    return env_->WriterAppend(this, data);
  }
  absl::Status Flush() override { return env_->WriterFlush(this); }
  absl::Status Sync() override { return env_->WriterSync(this); }
  absl::Status Close() override { return env_->WriterClose(this); }

 private:
  friend class FaultInjectionEnv;
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const FileId id_;
  // nullptr once killed by SimulateCrash or destroyed.
  std::unique_ptr<WritableFile> target_;
};

FaultInjectionEnv::FaultInjectionEnv(Env* target) : EnvWrapper(target) {}

FaultInjectionEnv::~FaultInjectionEnv() {
  MutexLock lock(&mu_);
  assert(writers_.empty() && "writable files outlive their FaultInjectionEnv");
}

absl::Status FaultInjectionEnv::NoSpaceError() {
  return absl::UnavailableError("injected fault: No space left on device");
}

void FaultInjectionEnv::FailAfter(OpKind kind, int n, absl::Status error,
                                  bool persistent) {
  assert(n >= 1);
  assert(!error.ok());
  MutexLock lock(&mu_);
  Fault& f = faults_[static_cast<int>(kind)];
  f.armed = true;
  f.firing = false;
  f.countdown = n;
  f.persistent = persistent;
  f.error = std::move(error);
}

void FaultInjectionEnv::ClearFaults() {
  MutexLock lock(&mu_);
  for (Fault& f : faults_) f = Fault();
}

uint64_t FaultInjectionEnv::OpCount(OpKind kind) const {
  MutexLock lock(&mu_);
  return counts_[static_cast<int>(kind)];
}

void FaultInjectionEnv::ResetCounters() {
  MutexLock lock(&mu_);
  for (uint64_t& c : counts_) c = 0;
}

absl::Status FaultInjectionEnv::CheckFault(OpKind kind,
                                           std::string_view fname) {
  ++counts_[static_cast<int>(kind)];
  ++counts_[static_cast<int>(OpKind::kAny)];
  absl::Status result;
  for (Fault* f : {&faults_[static_cast<int>(kind)],
                   &faults_[static_cast<int>(OpKind::kAny)]}) {
    if (!f->armed) continue;
    bool fire = f->firing;
    if (!fire && --f->countdown == 0) {
      fire = true;
      if (f->persistent) {
        f->firing = true;
      } else {
        f->armed = false;
      }
    }
    if (fire && result.ok()) {
      result = absl::Status(
          f->error.code(),
          absl::StrCat(absl::string_view(fname.data(), fname.size()), ": ",
                       f->error.message()));
    }
  }
  return result;
}

absl::Status FaultInjectionEnv::LockAndCheckFault(OpKind kind,
                                                  std::string_view fname) {
  MutexLock lock(&mu_);
  return CheckFault(kind, fname);
}

FaultInjectionEnv::FileId FaultInjectionEnv::NewFileState(uint64_t size,
                                                          uint64_t synced) {
  const FileId id = next_id_++;
  files_[id] = FileState{size, synced};
  return id;
}

FaultInjectionEnv::FileId FaultInjectionEnv::Track(const std::string& path) {
  if (auto it = live_.find(path); it != live_.end()) return it->second;
  // A file the wrapper has not seen yet predates it: fully durable.
  absl::StatusOr<uint64_t> size = target()->GetFileSize(path);
  if (!size.ok()) return 0;
  const FileId id = NewFileState(*size, *size);
  live_[path] = id;
  durable_[path] = id;
  return id;
}

absl::StatusOr<std::string> FaultInjectionEnv::ReadPrefix(
    const std::string& path, uint64_t n) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      target()->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  std::string out(n, '\0');
  std::string_view got;
  if (absl::Status s = (*file)->Read(n, &got, out.data()); !s.ok()) return s;
  if (got.size() != n) {
    return absl::InternalError(
        absl::StrCat(path, ": file is shorter (", got.size(),
                     " bytes) than its synced size ", n,
                     "; was it changed behind the fault-injecting Env?"));
  }
  if (got.data() != out.data()) out.assign(got.data(), got.size());
  return out;
}

absl::Status FaultInjectionEnv::PreserveBeforeUnlink(const std::string& path,
                                                     FileId id) {
  if (preserved_.contains(id)) return absl::OkStatus();
  bool durable = false;
  for (const auto& [p, d] : durable_) durable |= (d == id);
  if (!durable) return absl::OkStatus();
  for (const auto& [p, l] : live_) {
    if (l == id && p != path) return absl::OkStatus();  // another name keeps it
  }
  absl::StatusOr<std::string> bytes = ReadPrefix(path, files_[id].synced_size);
  if (!bytes.ok()) return bytes.status();
  preserved_[id] = *std::move(bytes);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SequentialFile>>
FaultInjectionEnv::NewSequentialFile(const std::string& fname) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      target()->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  return std::make_unique<FaultSequentialFile>(this, fname, *std::move(file));
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
FaultInjectionEnv::NewRandomAccessFile(const std::string& fname) {
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
      target()->NewRandomAccessFile(fname);
  if (!file.ok()) return file.status();
  return std::make_unique<FaultRandomAccessFile>(this, fname, *std::move(file));
}

absl::StatusOr<std::unique_ptr<WritableFile>>
FaultInjectionEnv::NewWritableFile(const std::string& fname) {
  return OpenWriter(fname, /*truncate=*/true);
}

absl::StatusOr<std::unique_ptr<WritableFile>>
FaultInjectionEnv::NewAppendableFile(const std::string& fname) {
  return OpenWriter(fname, /*truncate=*/false);
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultInjectionEnv::OpenWriter(
    const std::string& fname, bool truncate) {
  MutexLock lock(&mu_);
  if (absl::Status s = CheckFault(OpKind::kCreate, fname); !s.ok()) return s;
  const std::string path = Normalize(fname);
  const FileId old = Track(path);
  if (old != 0 && truncate) {
    if (absl::Status s = PreserveBeforeUnlink(path, old); !s.ok()) return s;
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      truncate ? target()->NewWritableFile(fname)
               : target()->NewAppendableFile(fname);
  if (!file.ok()) return file.status();
  FileId id = old;
  if (id == 0 || truncate) {
    id = NewFileState(0, 0);
    live_[path] = id;
  }
  auto writer =
      std::make_unique<FaultWritableFile>(this, fname, id, *std::move(file));
  writers_.insert(writer.get());
  return writer;
}

absl::Status FaultInjectionEnv::RemoveFile(const std::string& fname) {
  MutexLock lock(&mu_);
  if (absl::Status s = CheckFault(OpKind::kRemove, fname); !s.ok()) return s;
  const std::string path = Normalize(fname);
  if (const FileId id = Track(path); id != 0) {
    if (absl::Status s = PreserveBeforeUnlink(path, id); !s.ok()) return s;
  }
  if (absl::Status s = target()->RemoveFile(fname); !s.ok()) return s;
  live_.erase(path);
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::RenameFile(const std::string& src,
                                           const std::string& target_name) {
  MutexLock lock(&mu_);
  if (absl::Status s = CheckFault(OpKind::kRename, src); !s.ok()) return s;
  const std::string from = Normalize(src);
  const std::string to = Normalize(target_name);
  const FileId moved = Track(from);
  if (const FileId replaced = Track(to); replaced != 0 && replaced != moved) {
    if (absl::Status s = PreserveBeforeUnlink(to, replaced); !s.ok()) return s;
  }
  if (absl::Status s = target()->RenameFile(src, target_name); !s.ok()) {
    return s;
  }
  if (from != to) {
    live_.erase(from);
    if (moved != 0) live_[to] = moved;
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::LinkFile(const std::string& src,
                                         const std::string& target_name) {
  MutexLock lock(&mu_);
  if (absl::Status s = CheckFault(OpKind::kCreate, target_name); !s.ok()) {
    return s;
  }
  const FileId id = Track(Normalize(src));
  if (absl::Status s = target()->LinkFile(src, target_name); !s.ok()) {
    return s;
  }
  // The new name shares the file's durable size; the name itself becomes
  // durable with its directory.
  if (id != 0) live_[Normalize(target_name)] = id;
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::SyncDir(const std::string& dir) {
  MutexLock lock(&mu_);
  if (absl::Status s = CheckFault(OpKind::kSync, dir); !s.ok()) return s;
  if (absl::Status s = target()->SyncDir(dir); !s.ok()) return s;
  const std::string d = Normalize(dir);
  // The directory's durable entries become its live entries.
  for (auto it = durable_.begin(); it != durable_.end();) {
    auto next = std::next(it);
    if (DirOf(it->first) == d && !live_.contains(it->first)) {
      durable_.erase(it);
    }
    it = next;
  }
  for (const auto& [path, id] : live_) {
    if (DirOf(path) == d) durable_[path] = id;
  }
  // Preserved bytes are needed only while some durable name refers to them.
  absl::flat_hash_set<FileId> referenced;
  for (const auto& [path, id] : durable_) referenced.insert(id);
  for (auto it = preserved_.begin(); it != preserved_.end();) {
    auto next = std::next(it);
    if (!referenced.contains(it->first)) preserved_.erase(it);
    it = next;
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::WriterAppend(FaultWritableFile* f,
                                             std::string_view data) {
  MutexLock lock(&mu_);
  if (f->target_ == nullptr) return DeadFileError(f->fname_);
  if (absl::Status s = CheckFault(OpKind::kWrite, f->fname_); !s.ok()) {
    return s;
  }
  if (absl::Status s = f->target_->Append(data); !s.ok()) return s;
  files_[f->id_].size += data.size();
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::WriterFlush(FaultWritableFile* f) {
  MutexLock lock(&mu_);
  if (f->target_ == nullptr) return DeadFileError(f->fname_);
  return f->target_->Flush();
}

absl::Status FaultInjectionEnv::WriterSync(FaultWritableFile* f) {
  MutexLock lock(&mu_);
  if (f->target_ == nullptr) return DeadFileError(f->fname_);
  if (absl::Status s = CheckFault(OpKind::kSync, f->fname_); !s.ok()) {
    return s;
  }
  if (absl::Status s = f->target_->Sync(); !s.ok()) return s;
  FileState& state = files_[f->id_];
  state.synced_size = state.size;
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::WriterClose(FaultWritableFile* f) {
  MutexLock lock(&mu_);
  if (f->target_ == nullptr) return DeadFileError(f->fname_);
  return f->target_->Close();
}

void FaultInjectionEnv::WriterGone(FaultWritableFile* f) {
  MutexLock lock(&mu_);
  writers_.erase(f);
  // Destroying the target may flush buffered bytes; they are already counted
  // in the file's size.
  f->target_.reset();
}

absl::Status FaultInjectionEnv::SimulateCrash() {
  MutexLock lock(&mu_);
  // Kill writers first: a POSIX writer flushes its buffer when destroyed, and
  // that must happen before the files are rewritten below.
  for (FaultWritableFile* f : writers_) f->target_.reset();

  // What each durable name must hold afterwards. A name whose live file is
  // its durable file at exactly the durable size is already right.
  std::vector<std::pair<std::string, std::string>> rewrite;
  absl::flat_hash_set<std::string> keep;
  for (const auto& [path, id] : durable_) {
    const uint64_t synced = files_[id].synced_size;
    auto live = live_.find(path);
    if (live != live_.end() && live->second == id) {
      absl::StatusOr<uint64_t> size = target()->GetFileSize(path);
      if (!size.ok()) return size.status();
      if (*size == synced) {
        keep.insert(path);
        continue;
      }
    }
    std::string bytes;
    if (auto p = preserved_.find(id); p != preserved_.end()) {
      bytes = p->second;
    } else {
      // The file still has a live name; read its durable prefix there.
      const std::string* source = nullptr;
      for (const auto& [p2, l] : live_) {
        if (l == id) source = &p2;
      }
      if (source == nullptr) {
        return absl::InternalError(
            absl::StrCat(path, ": durable contents lost by the fault model"));
      }
      absl::StatusOr<std::string> read = ReadPrefix(*source, synced);
      if (!read.ok()) return read.status();
      bytes = *std::move(read);
    }
    rewrite.emplace_back(path, std::move(bytes));
  }

  for (const auto& [path, id] : live_) {
    if (keep.contains(path)) continue;
    if (absl::Status s = target()->RemoveFile(path); !s.ok()) return s;
  }
  for (const auto& [path, bytes] : rewrite) {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        target()->NewWritableFile(path);
    if (!file.ok()) return file.status();
    absl::Status s = (*file)->Append(bytes);
    if (s.ok()) s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
    if (!s.ok()) return s;
  }

  // From now on everything present is durable.
  files_.clear();
  live_.clear();
  preserved_.clear();
  absl::flat_hash_map<std::string, FileId> durable = std::move(durable_);
  durable_.clear();
  for (const auto& [path, unused] : durable) {
    absl::StatusOr<uint64_t> size = target()->GetFileSize(path);
    if (!size.ok()) return size.status();
    const FileId id = NewFileState(*size, *size);
    live_[path] = id;
    durable_[path] = id;
  }
  return absl::OkStatus();
}

}  // namespace sift
