#ifndef SIFT_BENCH_KVBENCH_PARALLEL_H_
#define SIFT_BENCH_KVBENCH_PARALLEL_H_

// Running one workload's operations on several threads, timing each
// operation, and a progress bar on stderr.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "util/histogram.h"

namespace sift::bench {

// Progress of a workload on stderr. When `enabled` (kvbench enables it when
// stderr is a terminal): a one-line bar with the rate and the time left,
// redrawn at most ten times a second. Otherwise, for long phases only
// (total >= kLinesFrom operations), one line per 10% done, for logs.
//
// Thread safety: Add is safe for concurrent use.
class Progress {
 public:
  static constexpr uint64_t kLinesFrom = 1000000;
  Progress(std::string label, uint64_t total, bool enabled);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // Erases the bar.
  ~Progress();
  void Add(uint64_t n);

 private:
  void Draw(uint64_t done);
  // "<done> of <total>, <rate> ops/s, <eta> left".
  std::string RateAndEta(uint64_t done) const;

  const std::string label_;
  const uint64_t total_;
  const bool enabled_;
  const bool lines_;  // one line per 10% instead of the bar
  const uint64_t start_ns_;
  std::atomic<uint64_t> done_{0};
  std::atomic<int64_t> last_draw_ms_{0};
  std::atomic<int> tenths_printed_{0};
};

// The clock used for latencies and throughput.
inline uint64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Work for one thread: operations [begin, end) of the workload. Record each
// operation's latency (microseconds) in `latency_us` and report progress.
using ThreadWork =
    std::function<absl::Status(int thread, uint64_t begin, uint64_t end,
                               Histogram* latency_us, Progress* progress)>;

struct ParallelResult {
  double seconds = 0;  // wall time from the first start to the last finish
  Histogram latency_us;
};

// Split `total` operations into `threads` contiguous slices, run them at once
// and return the wall time and merged latencies. The first error wins.
absl::Status RunParallel(int threads, uint64_t total, Progress* progress,
                         const ThreadWork& work, ParallelResult* result);

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_PARALLEL_H_
