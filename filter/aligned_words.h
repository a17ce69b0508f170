#ifndef SIFT_FILTER_ALIGNED_WORDS_H_
#define SIFT_FILTER_ALIGNED_WORDS_H_

// A zeroed array of 64-bit words starting on a 64-byte boundary, so a blocked
// filter's line is exactly one cache line and a query touches one line.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

namespace sift {

inline constexpr size_t kCacheLineBytes = 64;

class AlignedWords {
 public:
  AlignedWords() = default;
  // At least `num_words` words, rounded up to whole cache lines, and never
  // less than one line: a reader of an empty filter can then probe word 0
  // (all zero, so every answer is "no") without a branch on the hot path.
  explicit AlignedWords(uint64_t num_words)
      : size_bytes_(RoundUp(num_words * sizeof(uint64_t))),
        words_(static_cast<uint64_t*>(
            ::operator new[](size_bytes_, std::align_val_t{kCacheLineBytes}))) {
    std::memset(words_.get(), 0, size_bytes_);
  }

  uint64_t* data() { return words_.get(); }
  const uint64_t* data() const { return words_.get(); }
  // Allocated bytes (a multiple of 64).
  size_t size_bytes() const { return size_bytes_; }
  // What size_bytes() is for an array of `num_words` words.
  static size_t BytesFor(uint64_t num_words) {
    return RoundUp(num_words * sizeof(uint64_t));
  }

 private:
  struct Free {
    void operator()(uint64_t* p) const {
      ::operator delete[](p, std::align_val_t{kCacheLineBytes});
    }
  };
  static size_t RoundUp(uint64_t bytes) {
    if (bytes == 0) return kCacheLineBytes;
    return static_cast<size_t>((bytes + kCacheLineBytes - 1) / kCacheLineBytes *
                               kCacheLineBytes);
  }

  size_t size_bytes_ = 0;
  std::unique_ptr<uint64_t[], Free> words_;
};

}  // namespace sift

#endif  // SIFT_FILTER_ALIGNED_WORDS_H_
