#ifndef SIFT_INCLUDE_SIFT_ENV_H_
#define SIFT_INCLUDE_SIFT_ENV_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sift {

// A file read from start to end (write-ahead logs, the MANIFEST).
//
// Thread safety: not safe for concurrent use.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;

  // Read up to `n` bytes. On success `*result` views the bytes read (fewer than
  // `n` only at end of file, empty at end of file). `*result` may point into
  // `scratch`, which must hold `n` bytes and outlive the use of `*result`.
  virtual absl::Status Read(size_t n, std::string_view* result,
                            char* scratch) = 0;

  // Skip `n` bytes; skipping past the end stops at the end.
  virtual absl::Status Skip(uint64_t n) = 0;
};

// A file read at arbitrary offsets (tables). Every Read is one positioned read
// (pread on POSIX; a view into a memory map or one aligned direct read when
// opened so, see RandomAccessMode), so each call is one counted I/O.
//
// Thread safety: safe for concurrent use by many threads.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;

  // Read up to `n` bytes at `offset`. `*result` views the bytes read (fewer
  // than `n` only at end of file) and may point into `scratch`, which must hold
  // `n` bytes and outlive the use of `*result`. If StableReads(), `scratch`
  // may be nullptr.
  virtual absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                            char* scratch) const = 0;

  // True if every view Read returns points into memory that stays valid and
  // unchanged for as long as this object lives, never into `scratch` (a
  // memory-mapped file): readers may then keep views instead of copies.
  // Default: false.
  virtual bool StableReads() const { return false; }
};

// How Env::NewRandomAccessFile(fname, mode) serves reads.
enum class RandomAccessMode : uint8_t {
  // System calls (pread) into the caller's buffer.
  kBuffered = 0,
  // A read-only memory map where the Env can make one: reads are views into
  // the page cache, with no system call and no copy (StableReads()). An Env
  // may fall back to kBuffered (address space or map count exhausted).
  kMemoryMapped = 1,
  // Reads bypass the operating system's page cache (O_DIRECT on POSIX): each
  // Read reads the block-aligned range covering [offset, offset + n) from the
  // device into an aligned buffer and copies the requested bytes to
  // `scratch` (not StableReads()). The caller's cache is then the only
  // cache. Where the file system refuses direct I/O the open fails with
  // absl::InvalidArgumentError naming the file; the POSIX Env never falls
  // back to buffered reads silently. An Env without direct I/O (the
  // in-memory Env) serves this mode as kBuffered.
  kDirect = 2,
};

// A file written sequentially. Appends are buffered by the implementation;
// Flush hands them to the operating system, Sync makes them durable.
//
// Thread safety: not safe for concurrent use.
class WritableFile {
 public:
  virtual ~WritableFile() = default;

  virtual absl::Status Append(std::string_view data) = 0;
  virtual absl::Status Flush() = 0;
  // Flush, then make the file's data durable (fdatasync on POSIX).
  virtual absl::Status Sync() = 0;
  // Flush and close. Appending after Close is an error.
  virtual absl::Status Close() = 0;
};

// A lock on a file, held until passed to Env::UnlockFile.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// The engine's only way to the file system, threads and clock. Every error
// names the file and carries the operating system's message: a missing file
// is absl::NotFoundError, a refused access absl::PermissionDeniedError, other
// failures absl::UnavailableError (transient, such as no space left) or
// absl::InternalError.
//
// Thread safety: all methods are safe for concurrent use.
class Env {
 public:
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  virtual ~Env() = default;

  // The POSIX environment. Owned by the library; never destroyed.
  static Env* Default();

  virtual absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) = 0;
  virtual absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) = 0;
  // As NewRandomAccessFile(fname), served as `mode` asks where this Env
  // supports it. Default: NewRandomAccessFile(fname), whatever the mode, so
  // an Env (or wrapper) that overrides only the one-argument form sees every
  // open.
  virtual absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname, RandomAccessMode mode) {
    (void)mode;
    return NewRandomAccessFile(fname);
  }
  // Create (or truncate) `fname` for writing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) = 0;
  // Open `fname` for appending, creating it if missing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) = 0;
  // Create (or truncate) `fname` for a write-ahead log: many small Appends,
  // each followed by Flush, whose bytes must survive the process (not the
  // machine) once Flush returns. An Env may serve it without a system call
  // per Flush, through a mapping of space it reserved ahead: such a file ends
  // in zero bytes beyond what was appended until Close trims it, and for
  // good after a crash; each Append then becomes visible in the file with
  // its first 8 bytes last, in one store (a log fragment's header, so a crash
  // leaves a fragment whole or with a zero header, which the log reader takes
  // for the end of the log; doc/log_format.md). Default: NewWritableFile, so
  // a wrapper that overrides only that sees every file it creates; the POSIX
  // Env maps.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewLogFile(
      const std::string& fname) {
    return NewWritableFile(fname);
  }

  virtual bool FileExists(const std::string& fname) = 0;
  // Names (not paths) of the entries of directory `dir`.
  virtual absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) = 0;
  virtual absl::Status RemoveFile(const std::string& fname) = 0;
  // Creating a directory that already exists is not an error.
  virtual absl::Status CreateDir(const std::string& dir) = 0;
  virtual absl::Status RemoveDir(const std::string& dir) = 0;
  virtual absl::StatusOr<uint64_t> GetFileSize(const std::string& fname) = 0;
  // Atomically replace `target` with `src`. Durable once the directory is
  // synced (SyncDir).
  virtual absl::Status RenameFile(const std::string& src,
                                  const std::string& target) = 0;
  // Make the directory's entries (created, renamed, removed files) durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;
  // Give the file `src` a second name `target` (a hard link): both names then
  // refer to the same contents, and removing one leaves the other. `target`
  // must not exist. The new name is durable once its directory is synced
  // (SyncDir). absl::UnimplementedError when this Env or the file system
  // cannot link the two names (different file systems, a file system without
  // hard links): the caller copies the file instead.
  // Default: absl::UnimplementedError.
  virtual absl::Status LinkFile(const std::string& src,
                                const std::string& target) {
    return absl::UnimplementedError("link " + src + " to " + target +
                                    ": this Env has no hard links");
  }

  // Take an exclusive lock on `fname` (created if missing) so that only one
  // DB object at a time opens a database. Fails at once with
  // absl::FailedPreconditionError, naming the file, if another holder has it:
  // another process or another LockFile of this process, under any path that
  // leads to the same file.
  virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& fname) = 0;
  // Release a lock from LockFile.
  virtual absl::Status UnlockFile(std::unique_ptr<FileLock> lock) = 0;

  // Run `work` on the Env's background thread. Work items run one at a time,
  // in the order scheduled.
  virtual void Schedule(std::function<void()> work) = 0;

  // Microseconds since some fixed point in the past (monotonic).
  virtual uint64_t NowMicros() = 0;
  virtual void SleepForMicroseconds(int64_t micros) = 0;
};

// An Env that keeps files in memory and takes threads and the clock from
// `base` (not owned; must outlive the result). For tests and for tools that
// want a scratch database without touching disk.
std::unique_ptr<Env> NewMemEnv(Env* base);

// An Env that forwards everything to `target` (not owned). Derive from it to
// override a few methods, e.g. to count or fail operations. NewLogFile is the
// exception: it is not forwarded but left to Env's default (NewWritableFile,
// this wrapper's), so a wrapper that intercepts NewWritableFile also sees
// the logs; one that wants the target's log files forwards NewLogFile itself.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& f) override {
    return target_->NewSequentialFile(f);
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f) override {
    return target_->NewRandomAccessFile(f);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    return target_->NewWritableFile(f);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& f) override {
    return target_->NewAppendableFile(f);
  }
  bool FileExists(const std::string& f) override {
    return target_->FileExists(f);
  }
  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) override {
    return target_->GetChildren(dir);
  }
  absl::Status RemoveFile(const std::string& f) override {
    return target_->RemoveFile(f);
  }
  absl::Status CreateDir(const std::string& d) override {
    return target_->CreateDir(d);
  }
  absl::Status RemoveDir(const std::string& d) override {
    return target_->RemoveDir(d);
  }
  absl::StatusOr<uint64_t> GetFileSize(const std::string& f) override {
    return target_->GetFileSize(f);
  }
  absl::Status RenameFile(const std::string& s, const std::string& t) override {
    return target_->RenameFile(s, t);
  }
  absl::Status SyncDir(const std::string& d) override {
    return target_->SyncDir(d);
  }
  absl::Status LinkFile(const std::string& s, const std::string& t) override {
    return target_->LinkFile(s, t);
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& f) override {
    return target_->LockFile(f);
  }
  absl::Status UnlockFile(std::unique_ptr<FileLock> l) override {
    return target_->UnlockFile(std::move(l));
  }
  void Schedule(std::function<void()> work) override {
    target_->Schedule(std::move(work));
  }
  uint64_t NowMicros() override { return target_->NowMicros(); }
  void SleepForMicroseconds(int64_t m) override {
    target_->SleepForMicroseconds(m);
  }

 private:
  Env* target_;
};

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_ENV_H_
