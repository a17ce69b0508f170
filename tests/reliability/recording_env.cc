#include "tests/reliability/recording_env.h"

#include <utility>

namespace sift::reliability {

namespace {

class RecordingSequentialFile final : public SequentialFile {
 public:
  RecordingSequentialFile(RecordingEnv* env, std::string fname,
                          std::unique_ptr<SequentialFile> file)
      : env_(env), fname_(std::move(fname)), file_(std::move(file)) {}
  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    return env_->Note("read", fname_, file_->Read(n, result, scratch));
  }
  absl::Status Skip(uint64_t n) override {
    return env_->Note("skip", fname_, file_->Skip(n));
  }

 private:
  RecordingEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<SequentialFile> file_;
};

class RecordingRandomAccessFile final : public RandomAccessFile {
 public:
  RecordingRandomAccessFile(RecordingEnv* env, std::string fname,
                            std::unique_ptr<RandomAccessFile> file)
      : env_(env), fname_(std::move(fname)), file_(std::move(file)) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    return env_->Note("read", fname_, file_->Read(offset, n, result, scratch));
  }

 private:
  RecordingEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<RandomAccessFile> file_;
};

class RecordingWritableFile final : public WritableFile {
 public:
  RecordingWritableFile(RecordingEnv* env, std::string fname,
                        std::unique_ptr<WritableFile> file)
      : env_(env), fname_(std::move(fname)), file_(std::move(file)) {}
  absl::Status Append(std::string_view data) override {
    env_->NoteAppend(fname_);
    return env_->Note("append", fname_, file_->Append(data));
  }
  absl::Status Flush() override {
    return env_->Note("flush", fname_, file_->Flush());
  }
  absl::Status Sync() override {
    return env_->Note("sync", fname_, file_->Sync());
  }
  absl::Status Close() override {
    return env_->Note("close", fname_, file_->Close());
  }

 private:
  RecordingEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<WritableFile> file_;
};

}  // namespace

void RecordingEnv::SetPhase(std::string phase) {
  MutexLock lock(&mu_);
  phase_ = std::move(phase);
}

std::vector<RecordingEnv::Failure> RecordingEnv::failures() const {
  MutexLock lock(&mu_);
  return failures_;
}

std::vector<std::string> RecordingEnv::appends() const {
  MutexLock lock(&mu_);
  return appends_;
}

absl::Status RecordingEnv::Note(std::string_view op, const std::string& fname,
                                absl::Status s) {
  if (!s.ok()) {
    MutexLock lock(&mu_);
    failures_.push_back({std::string(op), fname, s, phase_});
  }
  return s;
}

void RecordingEnv::NoteAppend(const std::string& fname) {
  MutexLock lock(&mu_);
  appends_.push_back(fname);
}

absl::StatusOr<std::unique_ptr<SequentialFile>> RecordingEnv::NewSequentialFile(
    const std::string& fname) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> f =
      target()->NewSequentialFile(fname);
  if (!f.ok()) {
    // A missing file is an answer, not an I/O failure.
    if (!absl::IsNotFound(f.status())) {
      Note("open", fname, f.status()).IgnoreError();
    }
    return f;
  }
  return std::make_unique<RecordingSequentialFile>(this, fname, *std::move(f));
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
RecordingEnv::NewRandomAccessFile(const std::string& fname) {
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> f =
      target()->NewRandomAccessFile(fname);
  if (!f.ok()) {
    if (!absl::IsNotFound(f.status())) {
      Note("open", fname, f.status()).IgnoreError();
    }
    return f;
  }
  return std::make_unique<RecordingRandomAccessFile>(this, fname,
                                                     *std::move(f));
}

absl::StatusOr<std::unique_ptr<WritableFile>> RecordingEnv::NewWritableFile(
    const std::string& fname) {
  absl::StatusOr<std::unique_ptr<WritableFile>> f =
      target()->NewWritableFile(fname);
  if (!f.ok()) {
    Note("create", fname, f.status()).IgnoreError();  // recorded
    return f;
  }
  return std::make_unique<RecordingWritableFile>(this, fname, *std::move(f));
}

absl::StatusOr<std::unique_ptr<WritableFile>> RecordingEnv::NewAppendableFile(
    const std::string& fname) {
  absl::StatusOr<std::unique_ptr<WritableFile>> f =
      target()->NewAppendableFile(fname);
  if (!f.ok()) {
    Note("create", fname, f.status()).IgnoreError();  // recorded
    return f;
  }
  return std::make_unique<RecordingWritableFile>(this, fname, *std::move(f));
}

absl::Status RecordingEnv::RemoveFile(const std::string& fname) {
  absl::Status s = target()->RemoveFile(fname);
  if (absl::IsNotFound(s)) return s;
  return Note("remove", fname, std::move(s));
}

absl::Status RecordingEnv::RenameFile(const std::string& src,
                                      const std::string& target_name) {
  return Note("rename", src, target()->RenameFile(src, target_name));
}

absl::Status RecordingEnv::SyncDir(const std::string& dir) {
  return Note("syncdir", dir, target()->SyncDir(dir));
}

}  // namespace sift::reliability
