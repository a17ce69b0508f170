#ifndef SIFT_UTIL_RANDOM_H_
#define SIFT_UTIL_RANDOM_H_

#include <cstdint>

namespace sift {

// A small deterministic generator (SplitMix64): the same seed gives the same
// sequence on every platform, so tests and benchmarks are repeatable.
//
// Thread safety: not safe for concurrent use; give each thread its own.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}

  uint64_t Next64() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint32_t Next() { return static_cast<uint32_t>(Next64() >> 32); }

  // Uniform in [0, n). REQUIRES: n > 0. Multiply-shift, so no modulo bias
  // beyond 2^-64 and no division.
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>(
        (static_cast<unsigned __int128>(Next64()) * n) >> 64);
  }
  // True with probability 1/n. REQUIRES: n > 0.
  bool OneIn(uint64_t n) { return Uniform(n) == 0; }
  // Uniform in [0, 1).
  double NextDouble() { return (Next64() >> 11) * 0x1.0p-53; }
  // A number in [0, 2^max_log - 1], biased toward small values: pick a bit
  // width uniformly, then a value of that width. REQUIRES: 0 <= max_log <= 63
  // (a 64-bit shift would be undefined).
  uint64_t Skewed(int max_log) {
    return Uniform(uint64_t{1} << Uniform(max_log + 1));
  }

 private:
  uint64_t state_;
};

}  // namespace sift

#endif  // SIFT_UTIL_RANDOM_H_
