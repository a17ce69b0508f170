#ifndef SIFT_UTIL_RELEASE_MEMORY_H_
#define SIFT_UTIL_RELEASE_MEMORY_H_

namespace sift {

// Hands memory the C library's allocator holds free back to the operating
// system, where the allocator offers a way to (glibc's malloc_trim); a no-op
// elsewhere.
//
// Why: the background thread allocates in a malloc arena of its own, where
// the long-lived filters and indexes of the tables it writes sit among the
// short-lived buffers of its merges. glibc gives back only an arena's top,
// so the holes a merge leaves stay resident: after a 10M-key fill about
// 9 MB of that arena were free but resident, none of it reusable by the
// readers' block cache, which allocates in other arenas
// (doc/benchmarks.md).
//
// Cost: system calls for each free run of pages, and page faults when the
// memory is used again. Call it when a burst of work ends, not after each
// small step.
//
// Thread safety: safe to call from any thread; it takes the allocator's own
// locks, so call it without holding locks other threads wait on.
void ReleaseFreeMemory();

}  // namespace sift

#endif  // SIFT_UTIL_RELEASE_MEMORY_H_
