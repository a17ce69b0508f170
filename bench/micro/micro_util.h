#ifndef SIFT_BENCH_MICRO_MICRO_UTIL_H_
#define SIFT_BENCH_MICRO_MICRO_UTIL_H_

// Helpers shared by the micro benchmarks: keys in kvbench's format.

#include <cstdint>
#include <string>
#include <string_view>
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

// Keys of one size stored back to back, so that picking a random probe key
// costs no pointer chase (a vector of 16-byte std::strings puts every key in
// its own heap allocation, and the benchmark would time that cache miss).
class PackedKeys {
 public:
  explicit PackedKeys(const std::vector<std::string>& keys)
      : size_(keys.empty() ? 0 : keys[0].size()), n_(keys.size()) {
    for (const std::string& k : keys) bytes_ += k;
  }
  std::string_view operator[](size_t i) const {
    return std::string_view(bytes_).substr(i * size_, size_);
  }
  size_t size() const { return n_; }

 private:
  size_t size_;
  size_t n_;
  std::string bytes_;
};

}  // namespace sift::bench

#endif  // SIFT_BENCH_MICRO_MICRO_UTIL_H_
