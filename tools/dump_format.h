#ifndef SIFT_TOOLS_DUMP_FORMAT_H_
#define SIFT_TOOLS_DUMP_FORMAT_H_

// The portable text dump written by `kvtool dump --format text` and read by
// `kvtool load` (doc/dump_format.md): the one home of its encoding and
// decoding.
//
//   sift-dump 1\n
//   <key>\t<value>\n      one line per entry
//
// Keys and values are escaped as kvtool prints them (tools/output.h Escape):
// printable ASCII as it is, a backslash as "\\", every other byte as "\xNN".
// An escaped field never holds a tab or a newline, so each line splits at
// its one tab.

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sift::tools {

// The first line of every text dump (without its newline).
inline constexpr std::string_view kDumpHeader = "sift-dump 1";

// The line of one entry, newline included.
std::string EncodeDumpLine(std::string_view key, std::string_view value);

// Decode one entry line (without its newline) into *key and *value.
// InvalidArgumentError saying what is wrong (no tab, more than one tab, a
// byte that should have been escaped, a bad escape) and at which column.
absl::Status DecodeDumpLine(std::string_view line, std::string* key,
                            std::string* value);

// Whether the file at `path` starts with kDumpHeader and a newline. Errors
// only when it cannot be read.
absl::StatusOr<bool> IsTextDump(const std::string& path);

// Reads a text dump entry by entry.
//
// Thread safety: not safe for concurrent use.
class DumpReader {
 public:
  // NotFound if the file is missing; InvalidArgument if its first line is
  // not kDumpHeader.
  static absl::StatusOr<std::unique_ptr<DumpReader>> Open(
      const std::string& path);

  // The next entry, or false at the end of the file or at the first bad
  // line (then status() says which line and why, as "<path>:<line>: ...").
  bool Next(std::string* key, std::string* value);
  absl::Status status() const { return status_; }
  // The line of the entry Next returned last (the header is line 1).
  uint64_t line_number() const { return line_number_; }

 private:
  DumpReader(std::string path, std::ifstream in)
      : path_(std::move(path)), in_(std::move(in)) {}

  std::string path_;
  std::ifstream in_;
  std::string line_;
  uint64_t line_number_ = 1;
  absl::Status status_;
};

}  // namespace sift::tools

#endif  // SIFT_TOOLS_DUMP_FORMAT_H_
