#ifndef SIFT_BENCH_KVBENCH_IO_STATS_H_
#define SIFT_BENCH_KVBENCH_IO_STATS_H_

// What kvbench reports about I/O and memory beyond DB::GetReadStats: bytes
// the engine wrote to each kind of file (for write amplification), device
// reads of tables opened for direct reads, the kernel's per-process I/O
// accounting and the peak resident set.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "sift/env.h"

namespace sift::bench {

// Counters of an IoCountingEnv; plain values, subtractable.
struct IoCounts {
  uint64_t table_bytes_written = 0;  // appended to *.sst files
  uint64_t log_bytes_written = 0;    // appended to *.log files (WALs)
  uint64_t other_bytes_written = 0;  // MANIFEST, CURRENT, LOG, ...
  // Reads of table files opened with RandomAccessMode::kDirect: each is one
  // read from the device, as the page cache is bypassed.
  uint64_t direct_reads = 0;
  uint64_t direct_read_bytes = 0;

  IoCounts operator-(const IoCounts& o) const;
};

// Forwards to a target Env (both forms of NewRandomAccessFile, so tables
// open in the mode the DB asks for) and counts what IoCounts lists.
//
// Thread safety: safe for concurrent use. Files it opened must be destroyed
// before it.
class IoCountingEnv final : public EnvWrapper {
 public:
  // `target` is not owned and must outlive this Env.
  explicit IoCountingEnv(Env* target) : EnvWrapper(target) {}

  IoCounts counts() const;

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f) override;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f, RandomAccessMode mode) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& f) override;
  // The target's log files (mapped, on POSIX), writes counted.
  absl::StatusOr<std::unique_ptr<WritableFile>> NewLogFile(
      const std::string& f) override;

  struct Counters {
    std::atomic<uint64_t> table_bytes{0};
    std::atomic<uint64_t> log_bytes{0};
    std::atomic<uint64_t> other_bytes{0};
    std::atomic<uint64_t> direct_reads{0};
    std::atomic<uint64_t> direct_read_bytes{0};
  };

 private:
  std::unique_ptr<WritableFile> Wrap(const std::string& f,
                                     std::unique_ptr<WritableFile> file);

  Counters counters_;
};

// Bytes this process caused to be read from storage so far (read_bytes of
// /proc/self/io: every thread, direct and buffered reads that missed the
// page cache), or -1 where the kernel does not say.
int64_t ProcessDeviceReadBytes();

// Peak resident set size of this process in bytes (getrusage ru_maxrss).
uint64_t PeakRssBytes();

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_IO_STATS_H_
