#include "table/readahead.h"

#include <algorithm>

namespace sift {

void Readahead::Track(uint64_t offset, size_t n) {
  if (run_ > 0 && offset == last_end_) {
    ++run_;
  } else {
    // A new run: windows start small again, so a Seek followed by a short
    // scan reads little more than it uses.
    run_ = 1;
    next_size_ = kInitialWindow;
  }
  last_end_ = offset + n;
}

void Readahead::Note(uint64_t offset, size_t n) { Track(offset, n); }

absl::StatusOr<std::optional<std::string_view>> Readahead::Read(
    const RandomAccessFile& file, uint64_t offset, size_t n, uint64_t limit) {
  Track(offset, n);
  if (offset >= window_start_ && offset + n <= window_start_ + window_.size()) {
    return window_.substr(static_cast<size_t>(offset - window_start_), n);
  }
  if (run_ <= kSequentialToStart) return std::nullopt;
  const size_t size = static_cast<size_t>(
      std::min<uint64_t>(std::max(next_size_, n), limit - offset));
  if (size > capacity_) {
    buffer_ = std::make_unique_for_overwrite<char[]>(size);
    capacity_ = size;
  }
  window_ = std::string_view();
  std::string_view got;
  absl::Status s = file.Read(offset, size, &got, buffer_.get());
  if (!s.ok()) return s;
  ++window_reads_;
  window_ = got;
  window_start_ = offset;
  next_size_ = std::min(next_size_ * 2, kMaxWindow);
  return window_.substr(0, std::min(n, window_.size()));
}

}  // namespace sift
