#ifndef SIFT_FILTER_BLOOM_MATH_H_
#define SIFT_FILTER_BLOOM_MATH_H_

// Sizing rules and false-positive theory for both Bloom layouts, and the
// per-kind entry points that also cover the binary fuse filter (whose own
// rules are in filter/fuse_math.h). The builder uses the sizing rules; tests,
// the benchmark and inspection tools compare a built filter against the
// theory.

#include <cstdint>

#include "filter/filter.h"
#include "sift/options.h"

namespace sift {

// Probes per key are stored in one byte and capped so a query stays cheap.
inline constexpr uint32_t kMaxFilterProbes = 30;
// The blocked layout keeps every probe of a key inside one 64-byte line.
inline constexpr uint64_t kFilterLineBits = 512;

// k for the standard layout: round(bits_per_key * ln 2), clamped to 1..30.
uint32_t StandardNumProbes(double bits_per_key);

// k for the blocked layout: the value that gave the lowest measured
// false-positive rate at the nearest whole bits/key (see the table in
// bloom_math.cc). Lower than the standard optimum because a line that drew
// more keys than average fills up; fewer probes soften that.
uint32_t BlockedNumProbes(double bits_per_key);

// k for `kind` at `bits_per_key` (one of the two above; kBinaryFuse: 3, the
// slots a query reads).
uint32_t NumProbesFor(FilterKind kind, double bits_per_key);

// The real-valued optimum of the standard formula, (m/n) ln 2.
double OptimalNumProbes(double bits_per_key);

// Bits per key for a target false-positive rate p. Standard layout:
// -ln p / (ln 2)^2. Blocked layout: the smallest bits/key whose blocked
// false-positive rate (at BlockedNumProbes) is at most p, which is a little
// more than the standard figure. Binary fuse: 1.125 * ceil(-log2 p), the
// large-table size of the narrowest fingerprint reaching p.
// REQUIRES: 0 < p < 1.
double BitsPerKeyForFpr(FilterKind kind, double p);

// Theoretical false-positive rate of a standard filter with m bits, n keys
// and k probes: (1 - e^(-kn/m))^k. 0 when n == 0.
double StandardFpr(uint64_t num_bits, uint64_t num_keys, uint32_t num_probes);

// Theoretical false-positive rate of a blocked filter with m bits (a multiple
// of 512), n keys and k probes, for sift's probe scheme: each key lands in a
// uniformly chosen line and sets k distinct bits of it, a uniformly random
// k-subset of the 512. The load of the line a query lands in is
// Binomial(n, 1/lines) (the Poisson mixture of the textbook, made exact for
// small filters). Given load l, the number of set bits S after l keys follows
// from a Markov chain whose step adds Hypergeometric(512, 512 - S, k) new bits,
// and the query, itself k distinct bits, passes with C(S, k) / C(512, k). So
//   FPR = sum_l Binom(l; n, 1/lines) * E[C(S_l, k) / C(512, k)].
// 0 when n == 0. Costs about lines-load * 512 * k operations (a millisecond).
double BlockedFpr(uint64_t num_bits, uint64_t num_keys, uint32_t num_probes);

// Theory for `kind`. For kBinaryFuse, whose rate depends on the fingerprint
// width only, the width is num_bits over the slots FuseLayoutFor(num_keys)
// gives, which is exact unless construction had to grow the array; prefer the
// FilterInfo overload when a parsed filter is at hand.
double TheoreticalFpr(FilterKind kind, uint64_t num_bits, uint64_t num_keys,
                      uint32_t num_probes);

// Theory for a parsed filter, from its header: the layout's formula, 2^-w for
// binary fuse, and 1 for an unknown kind (it answers "maybe").
double TheoreticalFpr(const FilterInfo& info);

// The false-positive rate implied by the fraction of bits set, fill^k: exact
// for the standard layout given its bits, and a slight underestimate for the
// blocked layout (lines differ in fill). Tools report it as saturation.
double FprFromFill(double fill_ratio, uint32_t num_probes);

}  // namespace sift

#endif  // SIFT_FILTER_BLOOM_MATH_H_
