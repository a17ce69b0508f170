#include "util/release_memory.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sift {

void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  // 0: keep no slack at the top of the heap; the pages inside each arena
  // that are wholly free are released too (glibc 2.8 and later).
  malloc_trim(0);
#endif
}

}  // namespace sift
