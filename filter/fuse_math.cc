#include "filter/fuse_math.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace sift {

uint32_t FuseSegmentLengthLog2(uint64_t num_keys, uint32_t arity) {
  assert(arity == kFuseArity || arity == kFuseArityV1);
  if (arity == kFuseArityV1) {
    if (num_keys <= 1) return 2;
    const double e = std::floor(
        std::log(static_cast<double>(num_keys)) / std::log(3.33) + 2.25);
    if (e <= 0) return 0;
    return std::min(static_cast<uint32_t>(e), kMaxFuseSegmentLog2);
  }
  // One key peels off any four distinct slots: one segment of one slot.
  if (num_keys <= 1) return 0;
  // Fitted to fuse_peel_bench: the length that peels at the fewest slots
  // per key was 2^2-2^3 at 10-50 keys, 2^4 at 200, 2^5 at 500, 2^6 at 2,000,
  // 2^8 at 18,000, 2^10 at 100,000 and 2^12 at a million. Small sets do best
  // with few, long segments (about sqrt(n) / 2 of them), large ones with
  // relatively more, shorter ones (n^0.3 * 2.3 of them).
  const double lg = std::log2(static_cast<double>(num_keys));
  const double e = std::max(std::floor(lg / 2 + 1), std::floor(0.7 * lg - 1.2));
  return std::min(static_cast<uint32_t>(e), kMaxFuseSegmentLog2);
}

double FuseSizeFactor(uint64_t num_keys, uint32_t arity) {
  assert(arity == kFuseArity || arity == kFuseArityV1);
  if (num_keys <= 1) return std::numeric_limits<double>::infinity();
  const double ln = std::log(static_cast<double>(num_keys));
  if (arity == kFuseArityV1) {
    return std::max(kFuseLargeSizeFactorV1, 0.875 + 0.25 * std::log(1e6) / ln);
  }
  // Fitted to fuse_peel_bench at the lengths above: about the room at which
  // three key sets in four peel on the first attempt at 2,000-20,000 keys,
  // and nearly all from 100,000 on, where more room costs little (doc/
  // filters.md has the tables). At most 2 slots a key: tiny sets peel there
  // often enough, and retries are cheap at their size.
  return std::max(kFuseLargeSizeFactor, std::min(2.0, 1 + 14.5 / (ln * ln)));
}

FuseLayout FuseLayoutFor(uint64_t num_keys, uint32_t fingerprint_bits,
                         uint32_t arity) {
  FuseLayout layout;
  layout.arity = arity;
  layout.fingerprint_bits = fingerprint_bits;
  if (num_keys == 0) return layout;
  layout.segment_length_log2 = FuseSegmentLengthLog2(num_keys, arity);
  const uint64_t length = layout.segment_length();
  const uint64_t capacity =
      num_keys <= 1 ? 0
                    : static_cast<uint64_t>(
                          std::llround(static_cast<double>(num_keys) *
                                       FuseSizeFactor(num_keys, arity)));
  const uint64_t segments = (capacity + length - 1) / length;
  layout.segment_count = segments <= arity - 1 ? 1 : segments - (arity - 1);
  return layout;
}

uint32_t FingerprintBitsForBitsPerKey(double bits_per_key) {
  // The small epsilon keeps exact multiples from rounding down to the width
  // below.
  const double w = std::floor(bits_per_key / kFuseLargeSizeFactor + 1e-9);
  if (!(w >= 1)) return 1;  // also catches NaN
  if (w >= kMaxFingerprintBits) return kMaxFingerprintBits;
  return static_cast<uint32_t>(w);
}

uint32_t FingerprintBitsFor(double bits_per_key, uint64_t num_keys, double coin,
                            uint32_t arity) {
  if (num_keys == 0) return FingerprintBitsForBitsPerKey(bits_per_key);
  const double slots =
      static_cast<double>(FuseLayoutFor(num_keys, 1, arity).num_slots());
  const double w =
      std::floor(bits_per_key * static_cast<double>(num_keys) / slots + coin);
  if (!(w >= 1)) return 1;  // also catches NaN
  if (w >= kMaxFingerprintBits) return kMaxFingerprintBits;
  return static_cast<uint32_t>(w);
}

uint32_t FingerprintBitsForFpr(double p) {
  const double w = std::ceil(-std::log2(p) - 1e-9);
  if (!(w >= 1)) return 1;
  if (w >= kMaxFingerprintBits) return kMaxFingerprintBits;
  return static_cast<uint32_t>(w);
}

double FuseFpr(uint32_t fingerprint_bits) {
  return std::ldexp(1.0, -static_cast<int>(fingerprint_bits));
}

double FuseBitsPerKeyForFpr(double p) {
  return kFuseLargeSizeFactor * FingerprintBitsForFpr(p);
}

}  // namespace sift
