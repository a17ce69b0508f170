#ifndef SIFT_TOOLS_LOG_SCAN_H_
#define SIFT_TOOLS_LOG_SCAN_H_

// A diagnostic reader of the log framing shared by write-ahead logs and the
// MANIFEST (db/log_format.h, doc/log_format.md). Unlike log::Reader, which is
// built for recovery (resynchronize, stay quiet about a torn tail), this one
// reports every problem at the exact offset of the fragment where it is, and
// reports a torn tail too, so that kvtool can show what a file holds.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sift/env.h"
#include "tools/problem.h"

namespace sift::tools {

using LogProblem = Problem;

struct LogScanResult {
  uint64_t file_size = 0;
  uint64_t num_records = 0;    // intact records passed to the callback
  uint64_t num_fragments = 0;  // fragments with a good checksum
  std::vector<LogProblem> problems;

  // True if any problem is damage (not merely a torn tail).
  bool damaged() const;
};

// Read log file `fname` and call `on_record(offset, record)` for each intact
// record, in order (`offset`: its first fragment; `record` lives only for the
// call). Damage is collected in result->problems and scanning goes on with
// the next fragment that starts a record. Returns an error only if the file
// cannot be read (the message names it).
absl::Status ScanLog(
    Env* env, const std::string& fname,
    const std::function<void(uint64_t offset, std::string_view record)>&
        on_record,
    LogScanResult* result);

}  // namespace sift::tools

#endif  // SIFT_TOOLS_LOG_SCAN_H_
