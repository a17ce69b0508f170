#include "util/arena.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "util/random.h"

namespace sift {
namespace {

TEST(ArenaTest, EmptyUsesNoMemory) {
  Arena arena;
  EXPECT_EQ(arena.MemoryUsage(), 0u);
}

TEST(ArenaTest, AllocationsKeepTheirContents) {
  Arena arena;
  Random r(17);
  std::vector<std::pair<size_t, char*>> allocated;
  size_t bytes = 0;
  for (int i = 0; i < 5000; ++i) {
    // Mostly small, sometimes bigger than a block.
    size_t n = r.OneIn(50) ? 1 + r.Uniform(6000) : 1 + r.Uniform(100);
    char* p = (i % 3 == 0) ? arena.AllocateAligned(n) : arena.Allocate(n);
    // Fill with a pattern derived from the allocation's index.
    for (size_t j = 0; j < n; ++j) p[j] = static_cast<char>(i + j);
    allocated.emplace_back(n, p);
    bytes += n;
    ASSERT_GE(arena.MemoryUsage(), bytes);
  }
  // No allocation overlapped another.
  for (size_t i = 0; i < allocated.size(); ++i) {
    const auto [n, p] = allocated[i];
    for (size_t j = 0; j < n; ++j) {
      ASSERT_EQ(p[j], static_cast<char>(i + j)) << i;
    }
  }
  // Overhead stays modest: blocks are not wasted wholesale.
  EXPECT_LE(arena.MemoryUsage(), bytes * 13 / 10 + 2 * Arena::kBlockSize);
}

TEST(ArenaTest, AlignedAllocationsAreAligned) {
  Arena arena;
  for (size_t alignment : {8u, 16u, 64u, 256u, 512u}) {
    for (int i = 0; i < 200; ++i) {
      arena.Allocate(1 + i % 7);  // leave the bump pointer misaligned
      char* p = arena.AllocateAligned(1 + i * 13 % 1500, alignment);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u)
          << alignment << " " << i;
    }
  }
  // Default alignment suits any scalar type.
  char* p = arena.AllocateAligned(sizeof(long double));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignof(std::max_align_t), 0u);
}

TEST(ArenaTest, LargeRequestGetsItsOwnBlock) {
  Arena arena;
  char* small = arena.Allocate(10);
  const size_t usage_after_small = arena.MemoryUsage();
  char* big = arena.Allocate(100000);
  EXPECT_GE(arena.MemoryUsage(), usage_after_small + 100000);
  // The small block's tail is still used for the next small request.
  char* small2 = arena.Allocate(10);
  EXPECT_EQ(small2, small + 10);
  std::memset(big, 1, 100000);
}

}  // namespace
}  // namespace sift
