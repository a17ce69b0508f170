#include "util/arena.h"

#include <cassert>
#include <cstdint>

namespace sift {
namespace {

// Bytes to add to `p` to reach a multiple of `alignment` (a power of two).
size_t PaddingFor(const char* p, size_t alignment) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  return (alignment - (addr & (alignment - 1))) & (alignment - 1);
}

}  // namespace

char* Arena::NewBlock(size_t block_bytes) {
  blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_bytes));
  memory_usage_.fetch_add(block_bytes + sizeof(std::unique_ptr<char[]>),
                          std::memory_order_relaxed);
  return blocks_.back().get();
}

char* Arena::Allocate(size_t bytes) {
  assert(bytes > 0);
  if (bytes <= remaining_) {
    char* result = alloc_ptr_;
    alloc_ptr_ += bytes;
    remaining_ -= bytes;
    return result;
  }
  if (bytes > kBlockSize / 4) {
    // Own block; the current block keeps its tail for later small requests.
    return NewBlock(bytes);
  }
  // Abandon the (small) tail of the current block and start a new one.
  alloc_ptr_ = NewBlock(kBlockSize);
  remaining_ = kBlockSize;
  char* result = alloc_ptr_;
  alloc_ptr_ += bytes;
  remaining_ -= bytes;
  return result;
}

char* Arena::AllocateAligned(size_t bytes, size_t alignment) {
  assert(bytes > 0);
  assert(alignment > 0 && (alignment & (alignment - 1)) == 0);
  assert(alignment <= kBlockSize / 8);
  const size_t pad = PaddingFor(alloc_ptr_, alignment);
  if (alloc_ptr_ != nullptr && pad + bytes <= remaining_) {
    char* result = alloc_ptr_ + pad;
    alloc_ptr_ += pad + bytes;
    remaining_ -= pad + bytes;
    return result;
  }
  // The worst case padding in a fresh block is alignment - 1 bytes.
  const size_t worst = bytes + alignment - 1;
  if (worst > kBlockSize / 4) {
    char* block = NewBlock(worst);
    return block + PaddingFor(block, alignment);
  }
  alloc_ptr_ = NewBlock(kBlockSize);
  remaining_ = kBlockSize;
  const size_t fresh_pad = PaddingFor(alloc_ptr_, alignment);
  char* result = alloc_ptr_ + fresh_pad;
  alloc_ptr_ += fresh_pad + bytes;
  remaining_ -= fresh_pad + bytes;
  return result;
}

}  // namespace sift
