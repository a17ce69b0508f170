#ifndef SIFT_TOOLS_SIFT_STRESS_VERIFY_H_
#define SIFT_TOOLS_SIFT_STRESS_VERIFY_H_

// Reporting failures, and checking a whole database against the expected
// state after a crash.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sift/db.h"
#include "tools/sift_stress/expected_state.h"
#include "tools/sift_stress/random.h"

namespace sift::stress {

// Collects failures: each one is printed with the key, what was expected,
// what was found and the round seed, so that it can be replayed.
//
// Thread safety: safe for concurrent use.
class Reporter {
 public:
  // With `exit_on_failure` (the victim of a kill round) the first failure
  // ends the process with status 3, which the parent reports.
  Reporter(uint64_t seed, bool exit_on_failure)
      : seed_(seed), exit_(exit_on_failure) {}

  void Fail(Verdict verdict, uint32_t index, std::string_view context,
            std::string_view why);
  // An operation returned an error no fault explains.
  void Error(std::string_view context, const absl::Status& status);

  uint64_t count(Verdict v) const { return counts_[static_cast<int>(v)]; }
  uint64_t errors() const { return errors_; }
  bool failed() const { return failed_; }

 private:
  void Print(const std::string& line);

  const uint64_t seed_;
  const bool exit_;
  std::mutex mu_;
  int printed_ = 0;  // lines printed; after 30 the rest are only counted
  std::atomic<uint64_t> counts_[4] = {};
  std::atomic<uint64_t> errors_ = 0;
  std::atomic<bool> failed_ = false;
};

// A value for a failure report: "absent", or its first bytes (a soak value
// starts with its key's index and version) in quotes.
std::string Show(const std::optional<std::string>& v);

// Read one key: nullopt if absent; a non-OK, non-NotFound status goes to
// the reporter (and gives nullopt).
std::optional<std::string> ReadKey(DB* db, const ReadOptions& ro,
                                   uint32_t index, std::string_view context,
                                   Reporter* reporter);

// Check every key of a database just reopened after a crash of kind `kind`
// against the expected state (ExpectedState::Judge), then check that a full
// forward scan, a bounded backward scan and a MultiGet of a sample agree
// with the point reads, and that every recorded batch known to have
// committed is there in full. On return *found holds each key's state as
// read and *batches_checked counts those batches. Returns the number of keys
// checked.
uint64_t VerifyAfterCrash(DB* db, const ExpectedState& state, CrashKind kind,
                          Rng* rng, Reporter* reporter,
                          std::vector<KeyWrite>* found,
                          uint64_t* batches_checked);

}  // namespace sift::stress

#endif  // SIFT_TOOLS_SIFT_STRESS_VERIFY_H_
