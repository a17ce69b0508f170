#ifndef SIFT_UTIL_SMALL_BUFFER_H_
#define SIFT_UTIL_SMALL_BUFFER_H_

// A buffer of at most `capacity` elements, fixed when it is made, held on the
// stack when the capacity is at most N. A batched read keeps a few arrays of
// per-key state for the length of one call; with std::vector each is a heap
// allocation and a free per batch, which cost as much as ordering the keys.
// The fixed capacity is also why elements never move: a pointer to one stays
// valid for the buffer's life, so types that must not move (LookupKey) can
// live in it.

#include <cassert>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace sift {

// Thread safety: not safe for concurrent use.
template <typename T, size_t N>
class SmallBuffer {
 public:
  explicit SmallBuffer(size_t capacity)
      : data_(capacity <= N
                  ? reinterpret_cast<T*>(inline_)
                  : static_cast<T*>(::operator new (
                        capacity * sizeof(T), std::align_val_t{alignof(T)}))),
        capacity_(capacity) {}
  SmallBuffer(const SmallBuffer&) = delete;
  SmallBuffer& operator=(const SmallBuffer&) = delete;
  ~SmallBuffer() {
    clear();
    if (capacity_ > N) ::operator delete (data_, std::align_val_t{alignof(T)});
  }

  // Constructs an element after the last. REQUIRES: size() < capacity().
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    assert(size_ < capacity_);
    T* slot = new (data_ + size_) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  // Destroys every element; the capacity stays.
  void clear() {
    std::destroy_n(data_, size_);
    size_ = 0;
  }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  // REQUIRES: i < size()
  T& operator[](size_t i) {
    assert(i < size_);
    return data_[i];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return data_[i];
  }
  T& front() { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }

 private:
  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* const data_;  // inline_, or the heap when capacity_ > N
  const size_t capacity_;
  size_t size_ = 0;
};

}  // namespace sift

#endif  // SIFT_UTIL_SMALL_BUFFER_H_
