#ifndef SIFT_TOOLS_LOG_SCAN_H_
#define SIFT_TOOLS_LOG_SCAN_H_

// kvtool's view of a log file (write-ahead log or MANIFEST): the engine's
// log::Reader (db/log_reader.h) with a reporter that collects every problem,
// torn tail included, at its offset. No parsing of the framing happens here.

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
  uint64_t num_records = 0;          // intact records passed to the callback
  std::vector<LogProblem> problems;  // in file order

  // True if any problem is damage (not merely a torn tail).
  bool damaged() const;
};

// Read log file `fname` and call `on_record(offset, record)` for each intact
// record, in order (`offset`: its first fragment; `record` lives only for the
// call). Damage is collected in result->problems and reading goes on with
// the next intact fragment. Returns an error only if the file cannot be read
// (the message names it).
absl::Status ScanLog(
    Env* env, const std::string& fname,
    const std::function<void(uint64_t offset, std::string_view record)>&
        on_record,
    LogScanResult* result);

}  // namespace sift::tools

#endif  // SIFT_TOOLS_LOG_SCAN_H_
