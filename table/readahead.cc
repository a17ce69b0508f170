#include "table/readahead.h"

#include <algorithm>
#include <cstdlib>
#include <new>

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

void Readahead::FreeDeleter::operator()(char* p) const { std::free(p); }

void Readahead::Note(uint64_t offset, size_t n) { Track(offset, n); }

absl::StatusOr<std::optional<std::string_view>> Readahead::Read(
    const RandomAccessFile& file, uint64_t offset, size_t n, uint64_t limit) {
  Track(offset, n);
  if (offset >= window_start_ && offset + n <= window_start_ + window_.size()) {
    return window_.substr(static_cast<size_t>(offset - window_start_), n);
  }
  if (run_ <= kSequentialToStart) return std::nullopt;
  const uint64_t start = offset & ~uint64_t{kAlignment - 1};
  const uint64_t want =
      offset +
      std::max<uint64_t>(n, std::min<uint64_t>(next_size_, limit - offset));
  const uint64_t end = (want + kAlignment - 1) & ~uint64_t{kAlignment - 1};
  const size_t size = static_cast<size_t>(end - start);
  if (size > capacity_) {
    buffer_.reset();
    char* p = static_cast<char*>(std::aligned_alloc(kAlignment, size));
    if (p == nullptr) throw std::bad_alloc();
    buffer_.reset(p);
    capacity_ = size;
  }
  window_ = std::string_view();
  std::string_view got;
  absl::Status s = file.Read(start, size, &got, buffer_.get());
  if (!s.ok()) return s;
  ++window_reads_;
  window_ = got;
  window_start_ = start;
  next_size_ = std::min(next_size_ * 2, kMaxWindow);
  const size_t head = static_cast<size_t>(offset - start);
  if (head >= window_.size()) return std::string_view();
  return window_.substr(head, n);
}

}  // namespace sift
