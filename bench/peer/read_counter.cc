#include "bench/peer/engine.h"

namespace sift::bench {
namespace {
thread_local bool tls_foreground = false;
}  // namespace

void ReadCounter::MarkForegroundThread() { tls_foreground = true; }

void ReadCounter::Count(uint64_t bytes) {
  if (tls_foreground) {
    fg_reads_.fetch_add(1, std::memory_order_relaxed);
    fg_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  } else {
    bg_reads_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace sift::bench
