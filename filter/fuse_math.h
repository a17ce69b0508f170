#ifndef SIFT_FILTER_FUSE_MATH_H_
#define SIFT_FILTER_FUSE_MATH_H_

// Sizing rules and false-positive theory of the binary fuse filter
// (doc/filters.md). The builder sizes its array with FuseLayoutFor; the reader
// takes the layout from the serialized header (filter/filter_format.h); tests,
// tools and benchmarks compare a built filter against FuseFpr.

#include <cstdint>

namespace sift {

// Each key owns kFuseArity slots, one in each of that many consecutive
// segments: 4 in the filters writers build (format version 2). Filters of
// format version 1 are 3-wise (kFuseArityV1); readers still take them.
inline constexpr uint32_t kFuseArity = 4;
inline constexpr uint32_t kFuseArityV1 = 3;
// Fingerprints are 1..32 bits, bit-packed.
inline constexpr uint32_t kMaxFingerprintBits = 32;
// Segments hold at most 2^18 slots (larger ones stop helping construction and
// cost cache misses).
inline constexpr uint32_t kMaxFuseSegmentLog2 = 18;
// Slots per key the writers' array tends to for large key counts: 4-wise
// (FuseSizeFactor), and 3-wise for version 1.
inline constexpr double kFuseLargeSizeFactor = 1.05;
inline constexpr double kFuseLargeSizeFactorV1 = 1.125;

// The shape of a fuse filter's array. Invariant (what DecodeFilter checks):
// segment_count == 0 exactly when the filter has no keys.
struct FuseLayout {
  uint32_t arity = kFuseArity;       // slots per key: 3 (version 1) or 4
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
    return (segment_count + arity - 1) << segment_length_log2;
  }
  uint64_t num_bits() const { return num_slots() * fingerprint_bits; }
  // Bytes on disk: the bit-packed slots, rounded up to a whole byte.
  uint64_t num_bytes() const { return (num_bits() + 7) / 8; }
};

// The segment length the writers use for n keys, as a power of two:
// max(floor(log2(n) / 2 + 1), floor(0.7 log2(n) - 1.2)), at most 2^18
// (2^8 slots for 18,000 keys, 2^12 for a million); 1 slot for n <= 1.
// Version 1 (arity 3) used the paper's rule, 2^floor(log_3.33(n) + 2.25).
// REQUIRES: arity is 3 or 4 (so for every function below).
uint32_t FuseSegmentLengthLog2(uint64_t num_keys, uint32_t arity = kFuseArity);

// Slots per key the writers give n keys:
// max(1.05, min(2, 1 + 14.5 / (ln n)^2)), e.g. 1.15 for 18,000 keys and
// 1.076 for a million (fuse_peel_bench measurements, doc/filters.md: at
// 18,000 keys 3 attempts in 5 peel at this room, 9 in 10 at 1% more; from
// 100,000 keys nearly all). Small sets need more
// room for peeling to succeed with high probability. Infinite for n <= 1
// (FuseLayoutFor gives those a single segment). Version 1 (arity 3) used the
// paper's max(1.125, 0.875 + 0.25 ln(10^6) / ln(n)).
double FuseSizeFactor(uint64_t num_keys, uint32_t arity = kFuseArity);

// The array for n > 0 distinct keys with w-bit fingerprints: capacity =
// round(n * size factor) slots, split into segments of the length above, of
// which capacity / length - (arity - 1) (at least 1) are starting segments.
// n == 0: the empty layout (no slots). attempt is 0.
FuseLayout FuseLayoutFor(uint64_t num_keys, uint32_t fingerprint_bits,
                         uint32_t arity = kFuseArity);

// The widest fingerprint whose large-n array fits in `bits_per_key`:
// floor(bits_per_key / kFuseLargeSizeFactor), clamped to 1..32. 9 and 10
// bits/key give 8- and 9-bit fingerprints, 18 give 17.
uint32_t FingerprintBitsForBitsPerKey(double bits_per_key);

// The fingerprint width for n keys at a budget of `bits_per_key`. Widths are
// whole bits, but a budget rarely buys a whole number of them: with
// slots = FuseLayoutFor(n, 1, arity).num_slots() it buys w* = bits_per_key *
// n / slots (4-wise, 10 bits/key: 8.68 at 18,000 keys, which get 1.152 slots
// a key; 9.28 at a million). The width is floor(w* + coin),
// clamped to 1..32: the one below w* or the one above, the one above with
// probability frac(w*) when `coin` is drawn uniformly from [0, 1). Over the
// tables of a level the expected array bits then equal the budget: always
// rounding down would leave up to a bit per fingerprint unspent (10% of the
// memory, twice the false positives). coin = 0 gives the widest width within
// the budget. n == 0: FingerprintBitsForBitsPerKey. REQUIRES: 0 <= coin < 1.
uint32_t FingerprintBitsFor(double bits_per_key, uint64_t num_keys, double coin,
                            uint32_t arity = kFuseArity);

// The narrowest fingerprint with false-positive rate <= p: ceil(-log2 p),
// clamped to 1..32. REQUIRES: 0 < p < 1.
uint32_t FingerprintBitsForFpr(double p);

// False-positive rate with w-bit fingerprints: 2^-w. A key not in the set
// passes only if its fingerprint equals the XOR of its slots; the
// fingerprint is uniform and independent of where the slots are, so any slot
// contents match with probability 2^-w, however the array was filled.
double FuseFpr(uint32_t fingerprint_bits);

// Bits per key of the large-n array for a target rate p:
// kFuseLargeSizeFactor * w.
double FuseBitsPerKeyForFpr(double p);

}  // namespace sift

#endif  // SIFT_FILTER_FUSE_MATH_H_
