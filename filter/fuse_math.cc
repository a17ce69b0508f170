#include "filter/fuse_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sift {

uint32_t FuseSegmentLengthLog2(uint64_t num_keys) {
  if (num_keys <= 1) return 2;
  const double e = std::floor(
      std::log(static_cast<double>(num_keys)) / std::log(3.33) + 2.25);
  if (e <= 0) return 0;
  return std::min(static_cast<uint32_t>(e), kMaxFuseSegmentLog2);
}

double FuseSizeFactor(uint64_t num_keys) {
  if (num_keys <= 1) return std::numeric_limits<double>::infinity();
  return std::max(
      kFuseLargeSizeFactor,
      0.875 + 0.25 * std::log(1e6) / std::log(static_cast<double>(num_keys)));
}

FuseLayout FuseLayoutFor(uint64_t num_keys, uint32_t fingerprint_bits) {
  FuseLayout layout;
  layout.fingerprint_bits = fingerprint_bits;
  if (num_keys == 0) return layout;
  layout.segment_length_log2 = FuseSegmentLengthLog2(num_keys);
  const uint64_t length = layout.segment_length();
  const uint64_t capacity =
      num_keys <= 1
          ? 0
          : static_cast<uint64_t>(std::llround(static_cast<double>(num_keys) *
                                               FuseSizeFactor(num_keys)));
  const uint64_t segments = (capacity + length - 1) / length;
  layout.segment_count =
      segments <= kFuseArity - 1 ? 1 : segments - (kFuseArity - 1);
  return layout;
}

uint32_t FingerprintBitsForBitsPerKey(double bits_per_key) {
  // The small epsilon keeps exact multiples (9.0 / 1.125 = 8) from rounding
  // down to the width below.
  const double w = std::floor(bits_per_key / kFuseLargeSizeFactor + 1e-9);
  if (!(w >= 1)) return 1;  // also catches NaN
  if (w >= kMaxFingerprintBits) return kMaxFingerprintBits;
  return static_cast<uint32_t>(w);
}

uint32_t FingerprintBitsFor(double bits_per_key, uint64_t num_keys,
                            double coin) {
  if (num_keys == 0) return FingerprintBitsForBitsPerKey(bits_per_key);
  const double slots =
      static_cast<double>(FuseLayoutFor(num_keys, 1).num_slots());
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
