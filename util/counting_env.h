#ifndef SIFT_UTIL_COUNTING_ENV_H_
#define SIFT_UTIL_COUNTING_ENV_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "sift/env.h"

namespace sift {

// Forwards everything to a target Env and counts the I/O done through files
// it opened: random-access reads (calls and bytes returned), sequential reads
// (calls and bytes returned), appends (calls and bytes) and syncs
// (WritableFile::Sync and Env::SyncDir). Tests use it to check how many reads
// an operation costs; benchmarks to report I/O per operation.
//
// Thread safety: safe for concurrent use; counters are relaxed atomics, so a
// reader sees each counter exactly but not a consistent snapshot of all of
// them while I/O is in flight. Files opened through it must be destroyed
// before it.
class CountingEnv : public EnvWrapper {
 public:
  // `target` is not owned and must outlive this Env.
  explicit CountingEnv(Env* target) : EnvWrapper(target) {}

  struct Counters {
    std::atomic<uint64_t> random_reads{0};
    std::atomic<uint64_t> random_read_bytes{0};
    std::atomic<uint64_t> sequential_reads{0};
    std::atomic<uint64_t> sequential_read_bytes{0};
    std::atomic<uint64_t> writes{0};
    std::atomic<uint64_t> write_bytes{0};
    std::atomic<uint64_t> syncs{0};
  };

  uint64_t random_reads() const { return Get(counters_.random_reads); }
  uint64_t random_read_bytes() const {
    return Get(counters_.random_read_bytes);
  }
  uint64_t sequential_reads() const { return Get(counters_.sequential_reads); }
  uint64_t sequential_read_bytes() const {
    return Get(counters_.sequential_read_bytes);
  }
  uint64_t writes() const { return Get(counters_.writes); }
  uint64_t write_bytes() const { return Get(counters_.write_bytes); }
  uint64_t syncs() const { return Get(counters_.syncs); }

  // Set every counter to zero.
  void Reset();

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) override;
  // The target serves `mode` (a mapped file stays mapped), reads counted.
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname, RandomAccessMode mode) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) override;
  // The target's log files (mapped, on POSIX), writes counted.
  absl::StatusOr<std::unique_ptr<WritableFile>> NewLogFile(
      const std::string& fname) override;
  absl::Status SyncDir(const std::string& dir) override;

 private:
  static uint64_t Get(const std::atomic<uint64_t>& c) {
    return c.load(std::memory_order_relaxed);
  }

  Counters counters_;
};

}  // namespace sift

#endif  // SIFT_UTIL_COUNTING_ENV_H_
