#ifndef SIFT_TABLE_READAHEAD_H_
#define SIFT_TABLE_READAHEAD_H_

// Readahead for one table iterator over a file read with system calls
// (pread or direct I/O; a memory-mapped file needs none, its blocks are used
// where they lie).
//
// A long scan reads the data blocks of a table one after another; read one
// at a time, each block costs a system call and, under direct I/O, a device
// read of a few KiB, far below a device's sequential rate. So once an
// iterator has asked for kSequentialToStart blocks in a row that each start
// where the one before ended, the next block that is not in memory is read
// together with the blocks after it: a window of kInitialWindow bytes, twice
// as large each time the scan runs past the window, up to kMaxWindow
// (RocksDB sizes its iterator readahead the same way: 8 KiB doubling to
// 256 KiB). A block outside that run (a Seek elsewhere, a step backwards)
// starts over at one block per read, so short scans and random seeks read
// no more than they use.
//
// Blocks taken from the window are counted as block reads like any other
// (they are fetched from the file); what readahead saves is the number of
// file reads behind them.
//
// Invariants: window_ holds the file's bytes [window_start_,
// window_start_ + window_.size()) exactly as Read returned them; next_size_
// is within [kInitialWindow, kMaxWindow]; run_ counts the blocks asked for
// in a row, each starting at the previous one's end (last_end_).
//
// Thread safety: not safe for concurrent use (one per iterator).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "sift/env.h"

namespace sift {

class Readahead {
 public:
  static constexpr int kSequentialToStart = 2;
  static constexpr size_t kInitialWindow = 8 << 10;
  static constexpr size_t kMaxWindow = 256 << 10;
  // Windows start and end at multiples of this, in a buffer aligned to it,
  // so that a file opened for direct I/O reads them straight into the
  // buffer (no bounce buffer, no copy).
  static constexpr size_t kAlignment = 4096;

  Readahead() = default;
  Readahead(const Readahead&) = delete;
  Readahead& operator=(const Readahead&) = delete;

  // Record that the `n` bytes at `offset` were found without a file read
  // (in the block cache): they continue or break the run as a read would.
  void Note(uint64_t offset, size_t n);

  // The file's `n` bytes at `offset`, from the window if it holds them, or
  // by reading a new window from `offset` (rounded down to kAlignment) over
  // at least `n` bytes and about the window size, not past `limit` (the end
  // of the data blocks) but for the rounding up to kAlignment, when the run
  // is long enough. std::nullopt when neither: the caller reads the bytes
  // itself. The view lives until the next call. Fewer than `n` bytes only if
  // the file ends first (the caller reports the truncation). REQUIRES: offset +
  // n <= limit.
  absl::StatusOr<std::optional<std::string_view>> Read(
      const RandomAccessFile& file, uint64_t offset, size_t n, uint64_t limit);

  // File reads made for windows so far (for tests and counters).
  uint64_t window_reads() const { return window_reads_; }

 private:
  // Extend or restart the run with the block [offset, offset + n).
  void Track(uint64_t offset, size_t n);

  struct FreeDeleter {
    void operator()(char* p) const;
  };
  // capacity_ bytes aligned to kAlignment, allocated on first use.
  std::unique_ptr<char, FreeDeleter> buffer_;
  size_t capacity_ = 0;
  std::string_view window_;  // into buffer_
  uint64_t window_start_ = 0;
  uint64_t last_end_ = 0;
  int run_ = 0;
  size_t next_size_ = kInitialWindow;
  uint64_t window_reads_ = 0;
};

}  // namespace sift

#endif  // SIFT_TABLE_READAHEAD_H_
