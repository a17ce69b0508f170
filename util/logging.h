#ifndef SIFT_UTIL_LOGGING_H_
#define SIFT_UTIL_LOGGING_H_

// The engine's informational log (the LOG file in a database directory) and
// helpers to print keys and numbers in messages.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "sift/env.h"
#include "util/mutex.h"

namespace sift {

// Writes one line per message to a file:
//   2026/11/30-00:45:15.123456 <message>
// (local wall-clock time, microseconds). Each line is flushed to the operating
// system when written, so the log survives a process crash; it is never
// synced, since losing the tail of an informational log on a machine crash is
// harmless.
//
// Logging never fails the caller: the first write error is kept and reported
// by status(), and later messages are dropped.
//
// Thread safety: safe for concurrent use; lines are never interleaved.
class Logger {
 public:
  explicit Logger(std::unique_ptr<WritableFile> file);
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;
  // Closes the file.
  ~Logger();

  // Create (or truncate) `fname` through `env` and log to it.
  static absl::StatusOr<std::unique_ptr<Logger>> Open(Env* env,
                                                      const std::string& fname);

  // Write `message` as one timestamped line. A newline inside the message is
  // kept; a trailing newline is not doubled.
  void Log(std::string_view message);

  // Log(absl::StrFormat(format, args...)).
  template <typename... Args>
  void Logf(const absl::FormatSpec<Args...>& format, const Args&... args) {
    Log(absl::StrFormat(format, args...));
  }

  // OK, or the first error met while writing.
  absl::Status status() const;

 private:
  mutable Mutex mu_;
  std::unique_ptr<WritableFile> file_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

// Decimal text of `n`.
std::string NumberToString(uint64_t n);
void AppendNumberTo(std::string* dst, uint64_t n);

// `bytes` as printable ASCII: printable characters stay as they are, except
// backslash, which becomes "\\"; every other byte becomes "\xHH" (two lower
// case hex digits). The mapping is one-to-one, so distinct keys print
// distinctly.
std::string EscapeString(std::string_view bytes);
void AppendEscapedStringTo(std::string* dst, std::string_view bytes);

// Parse a decimal number at the front of `*in` and remove it. False (and
// `*in` unchanged) if `*in` does not start with a digit or the number does not
// fit in 64 bits.
bool ConsumeDecimalNumber(std::string_view* in, uint64_t* value);

}  // namespace sift

#endif  // SIFT_UTIL_LOGGING_H_
