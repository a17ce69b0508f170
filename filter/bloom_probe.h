#ifndef SIFT_FILTER_BLOOM_PROBE_H_
#define SIFT_FILTER_BLOOM_PROBE_H_

// Where a key's bits go, for both layouts. The builder, the reader, the tests
// and the benchmark all use these functions, so they agree by construction.
//
// Bits are numbered as on disk (doc/filter_format.md): bit i of the array is
// bit (i % 64) of 64-bit word i / 64. A key is hashed once, h = XXH3-64(key,
// seed); everything below derives from h without touching the key again.

#include <atomic>
#include <cstdint>
#include <type_traits>

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
// Offsets inside it are 9-bit fields of g = ProbeRemix(h): seven per 64-bit
// word, after which g is remixed for seven more. The fields of a uniformly
// random word are independent and uniform, so the draws are too. A draw that
// repeats an offset already taken by this key is skipped, so every key sets
// exactly k distinct bits, a uniformly random k-subset of the line: the model
// BlockedFpr() computes. Drawing with repeats would waste probes (0.966%
// instead of 0.955% at 10 bits/key), and double hashing inside the line
// (a + i*b mod 512) gives too few distinct patterns (1.09%).
//
// BlockedMask is the definition. BlockedAdd and BlockedMayContain take a fast
// path for k <= 7 when the first word's k fields hold no repeat (97% of keys
// at k = 6): then those fields are the offsets, with no bookkeeping.

inline constexpr uint32_t kLineWords = 8;  // 512 bits

// A bijective mix whose low bits depend on the high bits of x, so offsets
// taken from the low end of the result are not a function of the low end of
// the hash alone.
inline uint64_t ProbeRemix(uint64_t x) {
  x ^= x >> 32;
  x *= kProbeMix;
  x ^= x >> 29;
  return x;
}

inline uint64_t BlockedLine(uint64_t h, uint64_t num_lines) {
  return FastRange64(h, num_lines);
}

// Sets in mask[0..7] the k distinct offsets of h. REQUIRES: mask zeroed.
// The mask doubles as the record of offsets already taken.
inline void BlockedMask(uint64_t h, uint32_t num_probes, uint64_t* mask) {
  uint64_t state = ProbeRemix(h);
  uint64_t fields = state;
  uint32_t fields_left = 7;
  uint32_t taken = 0;
  while (taken < num_probes) {
    if (fields_left == 0) {
      state = ProbeRemix(state);
      fields = state;
      fields_left = 7;
    }
    const uint32_t offset = static_cast<uint32_t>(fields & 511);
    fields >>= 9;
    --fields_left;
    const uint64_t bit = uint64_t{1} << (offset & 63);
    uint64_t& word = mask[offset >> 6];
    taken += (word & bit) == 0;  // a repeat does not count: draw again
    word |= bit;
  }
}

// True if the first k (<= 7) 9-bit fields of `fields` are pairwise distinct,
// i.e. they are the key's k offsets. False about k(k-1)/1024 of the time.
inline bool FirstFieldsDistinct(uint64_t fields, uint32_t num_probes) {
  for (uint32_t i = 1; i < num_probes; ++i) {
    const uint64_t a = (fields >> (9 * i)) & 511;
    for (uint32_t j = 0; j < i; ++j) {
      if (a == ((fields >> (9 * j)) & 511)) return false;
    }
  }
  return true;
}

inline void BlockedAdd(uint64_t h, uint32_t num_probes, uint64_t num_lines,
                       uint64_t* words) {
  uint64_t* line = words + BlockedLine(h, num_lines) * kLineWords;
  const uint64_t fields = ProbeRemix(h);
  if (num_probes <= 7 && FirstFieldsDistinct(fields, num_probes)) {
    // The common case: the first word's fields are the offsets.
    for (uint32_t i = 0; i < num_probes; ++i) {
      const uint32_t offset = static_cast<uint32_t>((fields >> (9 * i)) & 511);
      line[offset >> 6] |= uint64_t{1} << (offset & 63);
    }
    return;
  }
  uint64_t mask[kLineWords] = {};
  BlockedMask(h, num_probes, mask);
  for (uint32_t w = 0; w < kLineWords; ++w) line[w] |= mask[w];
}

namespace internal {
// A word of a filter's array: plain for a table's immutable filter, atomic
// for the memtable's, which a writer fills while readers probe (a relaxed
// load is a plain load on the common targets).
inline uint64_t LoadWord(const uint64_t& word) { return word; }
inline uint64_t LoadWord(const std::atomic<uint64_t>& word) {
  return word.load(std::memory_order_relaxed);
}

// Whether the line has the bits of all of the first N draws of `fields`.
template <uint32_t N, typename Word>
inline bool FirstDrawsSet(const Word* line, uint64_t fields) {
  uint64_t all_set = 1;
  // Unrolled whatever the inlining around it: with loop control, the
  // memtable's seven-draw test cost two thirds more instructions.
#pragma GCC unroll 8
  for (uint32_t i = 0; i < N; ++i) {
    const uint32_t offset = static_cast<uint32_t>((fields >> (9 * i)) & 511);
    all_set &= LoadWord(line[offset >> 6]) >> (offset & 63);
  }
  return (all_set & 1) != 0;
}

// FirstDrawsSet over min(k, 7) draws, k >= 1.
template <typename Word>
inline bool FirstDrawsSetScalar(const Word* line, uint64_t fields,
                                uint32_t num_probes) {
  switch (num_probes) {
    case 1:
      return FirstDrawsSet<1>(line, fields);
    case 2:
      return FirstDrawsSet<2>(line, fields);
    case 3:
      return FirstDrawsSet<3>(line, fields);
    case 4:
      return FirstDrawsSet<4>(line, fields);
    case 5:
      return FirstDrawsSet<5>(line, fields);
    case 6:
      return FirstDrawsSet<6>(line, fields);
    default:
      return FirstDrawsSet<7>(line, fields);
  }
}

// The same in AVX2 (bloom_probe_avx2.cc): about a
// third of the scalar test's instructions, less a call, since it cannot be
// inlined into code built for the baseline. Used only when kUseAvx2Draws,
// which is set before main from what the CPU supports. Not for the
// memtable's atomic words, which a writer changes while readers probe.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIFT_AVX2_DRAWS 1
extern const bool kUseAvx2Draws;
bool FirstDrawsSetAvx2(const uint64_t* line, uint64_t fields,
                       uint32_t num_probes);
#else
#define SIFT_AVX2_DRAWS 0
inline constexpr bool kUseAvx2Draws = false;
#endif

// The first draws' test this CPU runs fastest for `Word`. REQUIRES: k >= 1.
template <typename Word>
inline bool FirstDrawsSetFastest(const Word* line, uint64_t fields,
                                 uint32_t num_probes) {
#if SIFT_AVX2_DRAWS
  if constexpr (std::is_same_v<Word, uint64_t>) {
    if (kUseAvx2Draws) return FirstDrawsSetAvx2(line, fields, num_probes);
  }
#endif
  return FirstDrawsSetScalar(line, fields, num_probes);
}

// A repeat among the first draws, or k > 7: walk all k distinct offsets as
// BlockedMask draws them. Out of line: rare (an absent key gets here once in
// 2^7 probes or less), and its scratch array would cost every probe a stack
// frame.
template <typename Word>
[[gnu::noinline]] bool AllDrawsSet(const Word* line, uint64_t fields,
                                   uint32_t num_probes) {
  uint64_t state = fields;
  uint64_t rest = fields;
  uint32_t fields_left = 7;
  uint64_t seen[kLineWords] = {};
  uint32_t taken = 0;
  while (taken < num_probes) {
    if (fields_left == 0) {
      state = ProbeRemix(state);
      rest = state;
      fields_left = 7;
    }
    const uint32_t offset = static_cast<uint32_t>(rest & 511);
    rest >>= 9;
    --fields_left;
    const uint64_t bit = uint64_t{1} << (offset & 63);
    if ((LoadWord(line[offset >> 6]) & bit) == 0) return false;
    uint64_t& word = seen[offset >> 6];
    taken += (word & bit) == 0;
    word |= bit;
  }
  return true;
}
}  // namespace internal

// The test of BlockedMayContain once the key's line and its fields,
// ProbeRemix(h), are known: a batch finds them while it prefetches the
// lines, and tests later without hashing or locating again.
template <typename Word>
inline bool BlockedLineMayContain(const Word* line, uint64_t fields,
                                  uint32_t num_probes) {
  // Every one of the first min(k, 7) draws is among the key's offsets, repeat
  // or not, so a clear bit there settles it. The draws are all tested and
  // their bits ANDed, without a branch per draw: whether one bit is set is a
  // coin flip the branch predictor cannot learn, and the line is in cache
  // after the first load, so the extra loads cost less than the mispredicts.
  // The count is a template argument so that the test unrolls: with a
  // run-time count the loop control costs as much as the draws.
  if (num_probes == 0) return true;
  if (!internal::FirstDrawsSetFastest(line, fields, num_probes)) return false;
  if (num_probes <= 7 && FirstFieldsDistinct(fields, num_probes)) return true;
  return internal::AllDrawsSet(line, fields, num_probes);
}

// REQUIRES: words holds at least one line (so num_lines == 0 reads line 0).
// Word: uint64_t or std::atomic<uint64_t> (see LoadWord).
template <typename Word>
inline bool BlockedMayContain(uint64_t h, uint32_t num_probes,
                              uint64_t num_lines, const Word* words) {
  return BlockedLineMayContain(words + BlockedLine(h, num_lines) * kLineWords,
                               ProbeRemix(h), num_probes);
}

}  // namespace sift

#endif  // SIFT_FILTER_BLOOM_PROBE_H_
