#ifndef SIFT_FILTER_FUSE_MATH_H_
#define SIFT_FILTER_FUSE_MATH_H_

// Sizing rules and false-positive theory of the binary fuse filter
// (doc/filters.md). The builder sizes its array with FuseLayoutFor; the reader
// takes the layout from the serialized header (filter/filter_format.h); tests,
// tools and benchmarks compare a built filter against FuseFpr.

#include <cstdint>

namespace sift {

// Each key owns three slots, one in each of three consecutive segments.
inline constexpr uint32_t kFuseArity = 3;
// Fingerprints are 1..32 bits, bit-packed.
inline constexpr uint32_t kMaxFingerprintBits = 32;
// Segments hold at most 2^18 slots (larger ones stop helping construction and
// cost cache misses).
inline constexpr uint32_t kMaxFuseSegmentLog2 = 18;
// Slots per key the array tends to for large key counts (3-wise).
inline constexpr double kFuseLargeSizeFactor = 1.125;

// The shape of a fuse filter's array. Invariant (what DecodeFilter checks):
// segment_count == 0 exactly when the filter has no keys.
struct FuseLayout {
  uint32_t fingerprint_bits = 0;     // w, 1..32
  uint32_t segment_length_log2 = 0;  // segments of 2^this slots
  uint64_t segment_count = 0;        // positions a key's first slot may take
                                     // are [0, segment_count * length)
  uint32_t attempt = 0;              // the hash remix construction settled on

  uint64_t segment_length() const { return uint64_t{1} << segment_length_log2; }
  // Slots in the array: the segment_count starting segments plus the
  // arity - 1 segments the last keys' other slots reach into.
  uint64_t num_slots() const {
    if (segment_count == 0) return 0;
    return (segment_count + kFuseArity - 1) << segment_length_log2;
  }
  uint64_t num_bits() const { return num_slots() * fingerprint_bits; }
  // Bytes on disk: the bit-packed slots, rounded up to a whole byte.
  uint64_t num_bytes() const { return (num_bits() + 7) / 8; }
};

// The paper's segment length for n keys (3-wise): 2^floor(log_3.33(n) + 2.25),
// at most 2^18; 4 slots for n <= 1.
uint32_t FuseSegmentLengthLog2(uint64_t num_keys);

// The paper's slots per key for n keys (3-wise):
// max(1.125, 0.875 + 0.25 ln(10^6) / ln(n)). Small sets need more room for
// peeling to succeed with high probability. Infinite for n <= 1 (FuseLayoutFor
// gives those a single segment).
double FuseSizeFactor(uint64_t num_keys);

// The array for n > 0 distinct keys with w-bit fingerprints: capacity =
// round(n * size factor) slots, split into segments of the length above, of
// which capacity / length - 2 (at least 1) are starting segments. n == 0:
// the empty layout (no slots). attempt is 0.
FuseLayout FuseLayoutFor(uint64_t num_keys, uint32_t fingerprint_bits);

// The widest fingerprint whose large-n array fits in `bits_per_key`:
// floor(bits_per_key / 1.125), clamped to 1..32. 9 bits/key give 8-bit
// fingerprints, 18 give 16.
uint32_t FingerprintBitsForBitsPerKey(double bits_per_key);

// The fingerprint width for n keys at a budget of `bits_per_key`. Widths are
// whole bits, but a budget rarely buys a whole number of them: with
// slots = FuseLayoutFor(n, 1).num_slots() it buys w* = bits_per_key * n /
// slots (a table of 20,000 keys at 10 bits/key: 8.0; a million keys: 8.85).
// The width is floor(w* + coin), clamped to 1..32: the one below w* or the
// one above, the one above with probability frac(w*) when `coin` is drawn
// uniformly from [0, 1). Over the tables of a level the expected array bits
// then equal the budget: always rounding down would leave up to a bit per
// fingerprint unspent (10% of the memory, twice the false positives).
// coin = 0 gives the widest width within the budget.
// n == 0: FingerprintBitsForBitsPerKey. REQUIRES: 0 <= coin < 1.
uint32_t FingerprintBitsFor(double bits_per_key, uint64_t num_keys,
                            double coin);

// The narrowest fingerprint with false-positive rate <= p: ceil(-log2 p),
// clamped to 1..32. REQUIRES: 0 < p < 1.
uint32_t FingerprintBitsForFpr(double p);

// False-positive rate with w-bit fingerprints: 2^-w. A key not in the set
// passes only if its fingerprint equals the XOR of its three slots; the
// fingerprint is uniform and independent of where the slots are, so any slot
// contents match with probability 2^-w, however the array was filled.
double FuseFpr(uint32_t fingerprint_bits);

// Bits per key of the large-n array for a target rate p: 1.125 * w.
double FuseBitsPerKeyForFpr(double p);

}  // namespace sift

#endif  // SIFT_FILTER_FUSE_MATH_H_
