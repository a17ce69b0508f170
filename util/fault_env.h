#ifndef SIFT_UTIL_FAULT_ENV_H_
#define SIFT_UTIL_FAULT_ENV_H_

// An Env for tests that simulates machine crashes and injects I/O errors.
// It wraps another Env (a MemEnv in most tests; the POSIX Env works too) and
// forwards every call to it.
//
// Crash model. The wrapper remembers, for every file it has seen:
//   * data: a file's durable contents are its first S bytes, where S is its
//     size at the last successful WritableFile::Sync. Append, Flush and Close
//     do not make data durable.
//   * names: each directory's durable entries are its entries as of the last
//     successful SyncDir of that directory. Creating a file
//     (NewWritableFile/NewAppendableFile of a new name), LinkFile (a second
//     name for the same file), RenameFile and RemoveFile change only the live
//     namespace until the directories involved are synced (both the source's
//     and the target's for a rename).
//   * a file that existed before the wrapper first saw it counts as fully
//     durable (data and name).
//   * NewWritableFile on an existing name counts as a new file replacing the
//     old one under that name (like writing a new file and renaming it over):
//     until the directory is synced, a crash brings the old contents back.
// SimulateCrash() kills every writable file opened through the wrapper (later
// Append/Flush/Sync/Close on them fail), then rewrites the wrapped Env's files
// to the durable state: unsynced data is cut off, files whose creation was not
// made durable are removed, removed or overwritten files whose removal was not
// made durable come back, renames not made durable are undone. The wrapper
// keeps the bytes needed to restore a removed or overwritten durable file.
// What is not modeled: directories themselves (CreateDir/RemoveDir take
// effect at once and are durable), partially persisted writes (data is either
// up to the last Sync or nothing more), reordering between files, loss of
// data written before a failed Sync, and files changed behind the wrapper's
// back. Only files reached through this wrapper are tracked.
//
// Typical crash test: write through a DB opened on the wrapper, call
// SimulateCrash(), destroy the DB object (its writes now fail), call
// SimulateCrash() once more to discard any file the dying DB created after the
// first call, then reopen the DB on the same wrapper and check what survived.
//
// Error injection. FailAfter(kind, n, error, persistent) makes the n-th next
// operation of `kind` fail with `error` (the message gains the file name);
// with `persistent` every later operation of that kind fails too, until
// ClearFaults(). One fault can be armed per kind; arming a kind again
// replaces its fault. A failed operation has no effect on the file: a failed
// Append writes nothing, a failed Sync makes nothing more durable, a failed
// rename or creation does not happen. Operations per kind:
//   kWrite  WritableFile::Append
//   kSync   WritableFile::Sync and Env::SyncDir
//   kRead   SequentialFile::Read and RandomAccessFile::Read
//   kRename Env::RenameFile
//   kCreate Env::NewWritableFile, Env::NewAppendableFile and Env::LinkFile
//   kRemove Env::RemoveFile
//   kAny    every operation above (a kAny fault counts all of them)
// OpCount(kind) counts the operations of that kind attempted through the
// wrapper (failed ones included) since construction or ResetCounters().
//
// Thread safety: all methods are safe for concurrent use. Files opened
// through the wrapper must be destroyed before it.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sift/env.h"
#include "util/mutex.h"

namespace sift {

class FaultInjectionEnv : public EnvWrapper {
 public:
  enum class OpKind { kWrite, kSync, kRead, kRename, kCreate, kRemove, kAny };

  // `target` is not owned and must outlive the wrapper.
  explicit FaultInjectionEnv(Env* target);
  // REQUIRES: every file opened through the wrapper has been destroyed.
  ~FaultInjectionEnv() override;

  // The error of a full disk, as the POSIX Env reports it:
  // absl::UnavailableError("... No space left on device").
  static absl::Status NoSpaceError();

  // See the file comment. REQUIRES: n >= 1 (1 fails the very next operation).
  void FailAfter(OpKind kind, int n, absl::Status error, bool persistent);
  // Disarm every fault.
  void ClearFaults();
  uint64_t OpCount(OpKind kind) const;
  void ResetCounters();

  // Kill open writable files and bring the wrapped Env to the durable state
  // described in the file comment. Afterwards every file present counts as
  // fully durable. Errors come from the wrapped Env while rewriting files.
  absl::Status SimulateCrash();

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) override;
  absl::Status RemoveFile(const std::string& fname) override;
  absl::Status RenameFile(const std::string& src,
                          const std::string& target) override;
  absl::Status SyncDir(const std::string& dir) override;
  absl::Status LinkFile(const std::string& src,
                        const std::string& target) override;

 private:
  class FaultSequentialFile;
  class FaultRandomAccessFile;
  class FaultWritableFile;
  friend class FaultSequentialFile;
  friend class FaultRandomAccessFile;
  friend class FaultWritableFile;

  static constexpr int kNumKinds = static_cast<int>(OpKind::kAny) + 1;
  using FileId = uint64_t;

  // The content of a file independent of its names (an inode).
  struct FileState {
    uint64_t size = 0;         // bytes appended so far
    uint64_t synced_size = 0;  // bytes durable
  };
  struct Fault {
    bool armed = false;
    bool firing = false;  // a persistent fault that has triggered
    int countdown = 0;
    bool persistent = false;
    absl::Status error;
  };

  // Count an operation of `kind` on `fname`; the injected error if a fault
  // fires.
  absl::Status CheckFault(OpKind kind, std::string_view fname)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status LockAndCheckFault(OpKind kind, std::string_view fname)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The id of the live file at normalized `path`, registering a file that
  // exists in the target but is not yet known as fully durable. 0 if none.
  FileId Track(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  FileId NewFileState(uint64_t size, uint64_t synced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `path` (live name of `id`) is about to be removed or overwritten: if that
  // was the last live name of a durable file, keep its durable bytes.
  absl::Status PreserveBeforeUnlink(const std::string& path, FileId id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::string> ReadPrefix(const std::string& path, uint64_t n)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenWriter(
      const std::string& fname, bool truncate) ABSL_LOCKS_EXCLUDED(mu_);

  // Called by FaultWritableFile.
  absl::Status WriterAppend(FaultWritableFile* f, std::string_view data)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WriterFlush(FaultWritableFile* f) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WriterSync(FaultWritableFile* f) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WriterClose(FaultWritableFile* f) ABSL_LOCKS_EXCLUDED(mu_);
  void WriterGone(FaultWritableFile* f) ABSL_LOCKS_EXCLUDED(mu_);

  mutable Mutex mu_;
  uint64_t counts_[kNumKinds] ABSL_GUARDED_BY(mu_) = {};
  Fault faults_[kNumKinds] ABSL_GUARDED_BY(mu_);
  FileId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<FileId, FileState> files_ ABSL_GUARDED_BY(mu_);
  // Normalized path -> file, as the target sees it now (tracked paths only).
  absl::flat_hash_map<std::string, FileId> live_ ABSL_GUARDED_BY(mu_);
  // Normalized path -> file, as of each directory's last SyncDir.
  absl::flat_hash_map<std::string, FileId> durable_ ABSL_GUARDED_BY(mu_);
  // Durable bytes of files named in durable_ that have no live name left.
  absl::flat_hash_map<FileId, std::string> preserved_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<FaultWritableFile*> writers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sift

#endif  // SIFT_UTIL_FAULT_ENV_H_
