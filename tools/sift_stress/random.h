#ifndef SIFT_TOOLS_SIFT_STRESS_RANDOM_H_
#define SIFT_TOOLS_SIFT_STRESS_RANDOM_H_

// Deterministic random numbers for sift_stress. Every choice of a round
// (options, operation mix, keys, timing) comes from a generator seeded from
// the round seed, so `--replay SEED` makes the same choices again.

#include <cstdint>

#include "util/random.h"

namespace sift::stress {

// SplitMix64's finalizer: a well-mixed 64-bit hash of `x`.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A seed derived from `seed` and a stream number, so that independent
// streams (per thread, per purpose) of one round do not overlap.
inline uint64_t SubSeed(uint64_t seed, uint64_t stream) {
  return Mix64(seed ^ Mix64(stream + 0x51f7));
}

// The engine's generator (util/random.h) with the choices sift_stress makes.
class Rng : public Random {
 public:
  using Random::Random;

  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  uint64_t Range(uint64_t lo, uint64_t hi) { return lo + Uniform(hi - lo + 1); }
  bool Percent(uint64_t p) { return Uniform(100) < p; }
  // One element of a C array, chosen uniformly.
  template <typename T, int N>
  const T& Pick(const T (&values)[N]) {
    return values[Uniform(N)];
  }
};

}  // namespace sift::stress

#endif  // SIFT_TOOLS_SIFT_STRESS_RANDOM_H_
