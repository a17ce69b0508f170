// ReleaseFreeMemory: memory freed inside a thread's malloc arena, which free()
// alone keeps resident, leaves the process's resident set.

#include "util/release_memory.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sift {
namespace {

// Whether this build allocates with glibc's malloc, the one ReleaseFreeMemory
// can ask; the sanitizers bring allocators of their own.
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
constexpr bool kGlibcMalloc = true;
#else
constexpr bool kGlibcMalloc = false;
#endif

// Resident bytes of this process (/proc/self/statm), or -1.
long long ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0;
  long long resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (n != 2) return -1;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(ReleaseFreeMemoryTest, ReturnsHolesOfAThreadArena) {
  if (!kGlibcMalloc || std::getenv("SIFT_SANITIZED") != nullptr) {
    GTEST_SKIP() << "not glibc's allocator (another C library or a sanitizer)";
  }
  if (ResidentBytes() < 0) GTEST_SKIP() << "no /proc/self/statm";

  // A thread of its own gets a malloc arena of its own, as the background
  // thread does. Chunks of 64 KiB stay below glibc's mmap threshold, so they
  // come from that arena; one in 16 is kept, so that the freed ones are holes
  // free() cannot hand back (only an arena's top is trimmed).
  constexpr size_t kChunk = 64 << 10;
  constexpr int kChunks = 1024;  // 64 MiB
  std::vector<void*> kept;
  long long after_free = 0;
  long long after_release = 0;
  std::thread worker([&] {
    std::vector<char*> chunks;
    for (int i = 0; i < kChunks; ++i) {
      char* p = static_cast<char*>(std::malloc(kChunk));
      ASSERT_NE(p, nullptr);
      for (size_t j = 0; j < kChunk; j += 4096) p[j] = 1;  // make resident
      chunks.push_back(p);
    }
    for (int i = 0; i < kChunks; ++i) {
      if (i % 16 == 15) {
        kept.push_back(chunks[i]);
      } else {
        std::free(chunks[i]);
      }
    }
    after_free = ResidentBytes();
    ReleaseFreeMemory();
    after_release = ResidentBytes();
  });
  worker.join();
  for (void* p : kept) std::free(p);

  // 60 MiB are free in holes; most of it must leave the resident set.
  EXPECT_GT(after_free - after_release, 32LL << 20)
      << "resident after free: " << after_free
      << ", after ReleaseFreeMemory: " << after_release;
}

}  // namespace
}  // namespace sift
