#ifndef SIFT_UTIL_ARENA_H_
#define SIFT_UTIL_ARENA_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace sift {

// Bump allocator for many small, same-lifetime objects (memtable entries).
// Memory is handed out from blocks of kBlockSize bytes; requests larger than a
// quarter block get a block of their own so that a big request never wastes
// the tail of the current block. Nothing is freed before the arena dies.
//
// Thread safety: Allocate/AllocateAligned require external synchronization
// (one writer). MemoryUsage may be called concurrently with them from any
// thread: it reads an atomic.
class Arena {
 public:
  static constexpr size_t kBlockSize = 4096;

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() = default;

  // `bytes` of memory with no alignment guarantee. REQUIRES: bytes > 0.
  char* Allocate(size_t bytes);

  // `bytes` of memory aligned to `alignment`.
  // REQUIRES: bytes > 0; alignment is a power of two, at most kBlockSize / 8.
  char* AllocateAligned(size_t bytes,
                        size_t alignment = alignof(std::max_align_t));

  // Bytes of heap held by the arena (blocks plus bookkeeping): an upper bound
  // on what has been handed out.
  size_t MemoryUsage() const {
    return memory_usage_.load(std::memory_order_relaxed);
  }

 private:
  // A fresh block of `block_bytes`, recorded for release.
  char* NewBlock(size_t block_bytes);

  // Unused tail of the current block: [alloc_ptr_, alloc_ptr_ + remaining_).
  char* alloc_ptr_ = nullptr;
  size_t remaining_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

}  // namespace sift

#endif  // SIFT_UTIL_ARENA_H_
