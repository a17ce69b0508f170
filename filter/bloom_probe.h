#ifndef SIFT_FILTER_BLOOM_PROBE_H_
#define SIFT_FILTER_BLOOM_PROBE_H_

// Where a key's bits go, for both layouts. The builder, the reader, the tests
// and the benchmark all use these functions, so they agree by construction.
//
// Bits are numbered as on disk (doc/filter_format.md): bit i of the array is
// bit (i % 64) of 64-bit word i / 64. A key is hashed once, h = XXH3-64(key,
// seed); everything below derives from h without touching the key again.

#include <cstdint>

namespace sift {

// Odd 64-bit constant (2^64 / golden ratio). Multiplying by it is a cheap
// bijection whose high bits depend on every bit of the input.
inline constexpr uint64_t kProbeMix = 0x9e3779b97f4a7c15ULL;

// Lemire's multiply-shift: maps a uniform 64-bit `hash` to [0, n) with the
// high half of a 128-bit product. No division, and exact for any n < 2^64,
// so filters past 2^32 bits need nothing special. n == 0 gives 0.
inline uint64_t FastRange64(uint64_t hash, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * n) >>
                               64);
}

// ---- Standard layout: k probes over all m bits -------------------------
//
// Kirsch-Mitzenmacher double hashing in 64-bit fixed point: probe i maps
// a + i*b (mod 2^64) to [0, m), with a = h and b = h * kProbeMix. Working on
// the whole 64 bits before the range reduction keeps the probes independent
// enough that measured rates match (1 - e^(-kn/m))^k (bench/filter_bench).

template <typename Fn>
inline void ForEachStandardProbe(uint64_t h, uint32_t num_probes,
                                 uint64_t num_bits, Fn&& fn) {
  uint64_t a = h;
  const uint64_t b = h * kProbeMix;
  for (uint32_t i = 0; i < num_probes; ++i) {
    if (!fn(FastRange64(a, num_bits))) return;
    a += b;
  }
}

inline void StandardAdd(uint64_t h, uint32_t num_probes, uint64_t num_bits,
                        uint64_t* words) {
  ForEachStandardProbe(h, num_probes, num_bits, [words](uint64_t bit) {
    words[bit >> 6] |= uint64_t{1} << (bit & 63);
    return true;
  });
}

// REQUIRES: words holds at least one word (so num_bits == 0 reads word 0).
inline bool StandardMayContain(uint64_t h, uint32_t num_probes,
                               uint64_t num_bits, const uint64_t* words) {
  bool all_set = true;
  ForEachStandardProbe(h, num_probes, num_bits, [&](uint64_t bit) {
    all_set = (words[bit >> 6] >> (bit & 63)) & 1;
    return all_set;
  });
  return all_set;
}

// ---- Blocked layout: k distinct bits in one 512-bit line ---------------
//
// The line is FastRange64(h, lines), which is decided by the high bits of h.
// Offsets inside it come from g = h * kProbeMix, multiplied by kProbeMix again
// for each draw, taking the top 9 bits each time. A draw that repeats an
// offset already taken by this key is skipped, so every key sets exactly k
// distinct bits: a uniformly random k-subset, which is what BlockedFpr()
// assumes. Drawing with repeats would waste probes; at 10 bits/key the rate
// would be 0.966% instead of 0.955%. Arithmetic progressions mod 512 (double
// hashing inside the line) would be cheaper but measure 1.09%: too few
// distinct patterns.

inline constexpr uint32_t kLineWords = 8;  // 512 bits

inline uint64_t BlockedLine(uint64_t h, uint64_t num_lines) {
  return FastRange64(h, num_lines);
}

// Sets in mask[0..7] the k distinct offsets of h (mask must start zeroed).
inline void BlockedMask(uint64_t h, uint32_t num_probes, uint64_t* mask) {
  uint64_t g = h * kProbeMix;
  uint32_t taken = 0;
  while (taken < num_probes) {
    const uint32_t offset = static_cast<uint32_t>(g >> 55);
    g *= kProbeMix;
    const uint64_t bit = uint64_t{1} << (offset & 63);
    uint64_t& word = mask[offset >> 6];
    taken += (word & bit) == 0;
    word |= bit;
  }
}

inline void BlockedAdd(uint64_t h, uint32_t num_probes, uint64_t num_lines,
                       uint64_t* words) {
  uint64_t mask[kLineWords] = {};
  BlockedMask(h, num_probes, mask);
  uint64_t* line = words + BlockedLine(h, num_lines) * kLineWords;
  for (uint32_t w = 0; w < kLineWords; ++w) line[w] |= mask[w];
}

// REQUIRES: words holds at least one line (so num_lines == 0 reads line 0).
// Stops at the first clear bit: an absent key usually costs one or two draws.
inline bool BlockedMayContain(uint64_t h, uint32_t num_probes,
                              uint64_t num_lines, const uint64_t* words) {
  const uint64_t* line = words + BlockedLine(h, num_lines) * kLineWords;
  uint64_t seen[kLineWords] = {};
  uint64_t g = h * kProbeMix;
  uint32_t taken = 0;
  while (taken < num_probes) {
    const uint32_t offset = static_cast<uint32_t>(g >> 55);
    g *= kProbeMix;
    const uint64_t bit = uint64_t{1} << (offset & 63);
    if ((line[offset >> 6] & bit) == 0) return false;
    uint64_t& word = seen[offset >> 6];
    taken += (word & bit) == 0;
    word |= bit;
  }
  return true;
}

}  // namespace sift

#endif  // SIFT_FILTER_BLOOM_PROBE_H_
