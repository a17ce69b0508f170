#ifndef SIFT_TESTS_RELIABILITY_RECORDING_ENV_H_
#define SIFT_TESTS_RELIABILITY_RECORDING_ENV_H_

// An Env wrapper that remembers every file operation that failed (its kind
// and file name) and, optionally, the file name of every write (Append) in
// order. The I/O error campaign stacks it on top of FaultInjectionEnv to learn
// which file an injected error hit, so it can tell an error the engine had to
// report from one it may rightly ignore (the informational LOG), and to find
// the writes that go to the MANIFEST.
//
// Thread safety: safe for concurrent use. Files opened through it must be
// destroyed before it.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "sift/env.h"
#include "util/mutex.h"

namespace sift::reliability {

class RecordingEnv : public EnvWrapper {
 public:
  struct Failure {
    std::string op;  // "append", "sync", "read", "rename", ...
    std::string fname;
    absl::Status status;
    std::string phase;  // as set by SetPhase when it happened
  };

  // `target` is not owned and must outlive this Env.
  explicit RecordingEnv(Env* target) : EnvWrapper(target) {}

  // A label for the failures from now on (e.g. "close" while a DB object is
  // being destroyed, which cannot report errors).
  void SetPhase(std::string phase);
  std::vector<Failure> failures() const;
  // File names of the Appends attempted so far, in order.
  std::vector<std::string> appends() const;

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

  // Called by the file wrappers.
  absl::Status Note(std::string_view op, const std::string& fname,
                    absl::Status s);
  void NoteAppend(const std::string& fname);

 private:
  mutable Mutex mu_;
  std::vector<Failure> failures_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> appends_ ABSL_GUARDED_BY(mu_);
  std::string phase_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sift::reliability

#endif  // SIFT_TESTS_RELIABILITY_RECORDING_ENV_H_
