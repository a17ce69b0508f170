#ifndef SIFT_TOOLS_OUTPUT_H_
#define SIFT_TOOLS_OUTPUT_H_

// What every kvtool command shares: exit codes, safe printing of arbitrary
// bytes, decoding of key arguments, error lines and JSON output.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tools/problem.h"

namespace sift::tools {

using Json = nlohmann::ordered_json;

// Debian's Abseil has its own string_view type; StrCat and friends need it.
inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view FromAbsl(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

// Problems as a JSON array of {offset, message[, torn_tail]}.
Json ProblemsJson(const std::vector<Problem>& problems);

// Process exit codes. kDataError covers corruption, I/O failures, a missing
// file and a key that is not found; kUsage a command line that is wrong.
enum ExitCode : int {
  kExitOk = 0,
  kExitDataError = 1,
  kExitUsage = 2,
};

// Flags every subcommand accepts.
struct OutputOptions {
  bool json = false;  // one JSON document on stdout instead of text
  bool hex = false;   // keys and values (in and out) as hex digits
};

// Printable ASCII stays as it is, a backslash becomes "\\" and every other byte
// "\xNN": lossless, one line, safe for any terminal.
std::string Escape(std::string_view bytes);
// Lower-case hex digits, two per byte.
std::string Hex(std::string_view bytes);
// Inverse of Hex (either case). InvalidArgument on odd length or a non-digit.
absl::StatusOr<std::string> ParseHex(std::string_view text);

// How keys and values are shown: Hex with --hex, else Escape.
std::string ShowBytes(std::string_view bytes, const OutputOptions& out);

// A key or value given on the command line: hex-decoded with --hex, else the
// argument's bytes as they are.
absl::StatusOr<std::string> ArgBytes(std::string_view arg,
                                     const OutputOptions& out);

// Byte counts for people: "1234 bytes (1.2 KiB)".
std::string HumanBytes(uint64_t bytes);

// Print `status` as one line on stderr ("kvtool <command>: <message>") and,
// in JSON mode, {"error": ..., "code": ...} on stdout. Returns
// kExitDataError. REQUIRES: !status.ok()
int ReportError(std::string_view command, const absl::Status& status,
                const OutputOptions& out);
// The same for a command line that is wrong in a way the parser cannot see
// (a bad hex argument). Returns kExitUsage.
int ReportUsageError(std::string_view command, const absl::Status& status,
                     const OutputOptions& out);

// Print a JSON document (2-space indented) and a newline on stdout.
void PrintJson(const Json& doc);

// Name of a status code for JSON ("DATA_LOSS", "NOT_FOUND", ...).
std::string StatusCodeName(const absl::Status& status);

}  // namespace sift::tools

#endif  // SIFT_TOOLS_OUTPUT_H_
