// FilterBuilder for both Bloom layouts, and the factory for every kind (the
// binary fuse builder is in fuse_builder.cc). Keys are hashed as they arrive
// and only the hashes are kept (8 bytes a key): the bit count depends on how
// many distinct keys there are, which is known only at Finish.

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "filter/aligned_words.h"
#include "filter/bloom_math.h"
#include "filter/bloom_probe.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "filter/fuse_math.h"
#include "util/hash.h"

namespace sift {
namespace {

class BloomFilterBuilder final
    : public HashingFilterBuilder<BloomFilterBuilder> {
 public:
  // `min_keys` keys' worth of bits are allocated even if fewer are added
  // (MakeForFpr's expected_keys; 0 for Make).
  BloomFilterBuilder(FilterKind kind, double bits_per_key, uint64_t min_keys,
                     uint64_t seed)
      : HashingFilterBuilder(seed),
        kind_(kind),
        bits_per_key_(SaneBitsPerKey(bits_per_key)),
        num_probes_(NumProbesFor(kind, bits_per_key_)),
        min_keys_(min_keys) {
    assert(bits_per_key > 0);
  }

  void AddHash(uint64_t h) {
    if (!hashes_.empty() && hashes_.back() == h) return;
    hashes_.push_back(h);
  }

  uint64_t NumKeys() const override { return hashes_.size(); }

  // Out-of-contract bits/key (0, negative, NaN, absurdly large) still give a
  // working filter in release builds rather than undefined arithmetic.
  static double SaneBitsPerKey(double bits_per_key) {
    if (!(bits_per_key >= 0.01)) return 0.01;
    return std::min(bits_per_key, 1e6);
  }

  std::string Finish() override {
    const uint64_t num_keys = hashes_.size();
    const uint64_t num_bits = NumBits(num_keys);
    const bool blocked = kind_ == FilterKind::kBlockedBloom;

    AlignedWords words(num_bits / 64);
    if (blocked) {
      const uint64_t num_lines = num_bits / kFilterLineBits;
      for (uint64_t h : hashes_) {
        BlockedAdd(h, num_probes_, num_lines, words.data());
      }
    } else {
      for (uint64_t h : hashes_) {
        StandardAdd(h, num_probes_, num_bits, words.data());
      }
    }
    hashes_.clear();

    // On disk, bit i is bit i % 8 of byte i / 8: little-endian words.
    if constexpr (std::endian::native == std::endian::big) {
      for (uint64_t i = 0; i < num_bits / 64; ++i) {
        words.data()[i] = __builtin_bswap64(words.data()[i]);
      }
    }

    FilterHeader header;
    header.kind = blocked ? kBlockedBloomTag : kStandardBloomTag;
    header.version = kFilterFormatVersion;
    header.num_probes = static_cast<uint8_t>(num_probes_);
    header.num_bits = num_bits;
    header.num_keys = num_keys;
    header.seed = seed_;
    return EncodeFilter(
        header, std::string_view(reinterpret_cast<const char*>(words.data()),
                                 num_bits / 8));
  }

 private:
  // m for `num_keys` keys: ceil(max(n, min_keys) * bits/key), rounded up to
  // whole 64-bit words (standard) or 512-bit lines (blocked). No keys, no
  // bits: the empty filter answers "no" to everything.
  uint64_t NumBits(uint64_t num_keys) const {
    if (num_keys == 0) return 0;
    const double keys = static_cast<double>(std::max(num_keys, min_keys_));
    // Kept below 2^60 bits so the conversion and rounding cannot overflow
    // (a bit count that large could not be allocated anyway).
    const uint64_t raw = static_cast<uint64_t>(
        std::min(std::ceil(keys * bits_per_key_), 0x1p60));
    const uint64_t granule =
        kind_ == FilterKind::kBlockedBloom ? kFilterLineBits : 64;
    const uint64_t units = std::max<uint64_t>(1, (raw + granule - 1) / granule);
    return units * granule;
  }

  const FilterKind kind_;
  const double bits_per_key_;
  const uint32_t num_probes_;
  const uint64_t min_keys_;
  std::vector<uint64_t> hashes_;  // distinct-from-previous keys' hashes
};

}  // namespace

std::unique_ptr<FilterBuilder> FilterBuilder::Make(FilterKind kind,
                                                   double bits_per_key) {
  return Make(kind, bits_per_key, kDefaultFilterSeed);
}

std::unique_ptr<FilterBuilder> FilterBuilder::Make(FilterKind kind,
                                                   double bits_per_key,
                                                   uint64_t seed) {
  if (kind == FilterKind::kBinaryFuse) {
    assert(bits_per_key > 0);
    return NewFuseFilterBuilderForBudget(bits_per_key, seed);
  }
  return std::make_unique<BloomFilterBuilder>(kind, bits_per_key,
                                              /*min_keys=*/0, seed);
}

std::unique_ptr<FilterBuilder> FilterBuilder::MakeForFpr(FilterKind kind,
                                                         uint64_t expected_keys,
                                                         double target_fpr) {
  return MakeForFpr(kind, expected_keys, target_fpr, kDefaultFilterSeed);
}

std::unique_ptr<FilterBuilder> FilterBuilder::MakeForFpr(FilterKind kind,
                                                         uint64_t expected_keys,
                                                         double target_fpr,
                                                         uint64_t seed) {
  assert(target_fpr > 0 && target_fpr < 1);
  if (kind == FilterKind::kBinaryFuse) {
    return NewFuseFilterBuilder(FingerprintBitsForFpr(target_fpr), seed);
  }
  return std::make_unique<BloomFilterBuilder>(
      kind, BitsPerKeyForFpr(kind, target_fpr), expected_keys, seed);
}

}  // namespace sift
