#ifndef SIFT_BENCH_MICRO_MICRO_UTIL_H_
#define SIFT_BENCH_MICRO_MICRO_UTIL_H_

// Helpers shared by the micro benchmarks: keys in kvbench's format.

#include <cstdint>
#include <string>
#include <vector>

#include "bench/kvbench/keys.h"

namespace sift::bench {

// `n` present keys (16 bytes, kvbench's format) in key order.
inline std::vector<std::string> SortedKeys(uint64_t n) {
  KeySpace keys(n, 16);
  std::vector<std::string> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) out.push_back(keys.PresentKey(i));
  return out;
}

// `n` absent keys of the same key space (interleaved with the present ones).
inline std::vector<std::string> MissingKeys(uint64_t n) {
  KeySpace keys(n, 16);
  std::vector<std::string> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) out.push_back(keys.MissingKey(i));
  return out;
}

}  // namespace sift::bench

#endif  // SIFT_BENCH_MICRO_MICRO_UTIL_H_
