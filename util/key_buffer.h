#ifndef SIFT_UTIL_KEY_BUFFER_H_
#define SIFT_UTIL_KEY_BUFFER_H_

// The bytes of one key that an iterator rebuilds entry by entry (a block
// stores each key as the bytes it shares with the key before it plus the rest).
// Keys up to kInline bytes live inside the object; longer ones on the heap,
// whose buffer is then kept for the next keys. A std::string keeps only 15
// bytes inside, fewer than an internal key of a 16-byte user key holds, so
// every new block iterator allocated for its first key: with one DB iterator
// per scan, several allocations per Seek.
//
// Thread safety: not safe for concurrent use. Neither copyable nor movable:
// views of the key point inside the object.

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace sift {

class KeyBuffer {
 public:
  static constexpr size_t kInline = 48;

  KeyBuffer() = default;
  KeyBuffer(const KeyBuffer&) = delete;
  KeyBuffer& operator=(const KeyBuffer&) = delete;

  // Valid until the next call that changes the key.
  std::string_view view() const { return {data_, size_}; }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }

  // Replaces the key by `key`. REQUIRES: key does not point into this buffer.
  void assign(std::string_view key) { TruncateAndAppend(0, key); }

  // Keeps the first n bytes and appends `tail`.
  // REQUIRES: n <= size(); tail does not point into this buffer.
  void TruncateAndAppend(size_t n, std::string_view tail) {
    const size_t need = n + tail.size();
    if (need > capacity_) Grow(n, need);
    if (!tail.empty()) std::memcpy(data_ + n, tail.data(), tail.size());
    size_ = need;
  }

 private:
  // A heap buffer of at least `need` bytes holding the first `keep`.
  void Grow(size_t keep, size_t need) {
    size_t capacity = capacity_ * 2;
    if (capacity < need) capacity = need;
    std::unique_ptr<char[]> bigger(new char[capacity]);
    if (keep > 0) std::memcpy(bigger.get(), data_, keep);
    heap_ = std::move(bigger);
    data_ = heap_.get();
    capacity_ = capacity;
  }

  char inline_[kInline];
  std::unique_ptr<char[]> heap_;  // null while the key fits inline_
  char* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

}  // namespace sift

#endif  // SIFT_UTIL_KEY_BUFFER_H_
