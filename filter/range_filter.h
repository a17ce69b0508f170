#ifndef SIFT_FILTER_RANGE_FILTER_H_
#define SIFT_FILTER_RANGE_FILTER_H_

// A range filter over 64-bit integer keys after the design of Grafite
// (Costa, Ferragina, Vinciguerra, SIGMOD 2024): it answers "may [lo, hi]
// hold a key?" with no false negatives, and for ranges of at most L
// consecutive integers with a false-positive rate of at most
// L / 2^(B-2) at B bits per key, whatever the queries (the bound rests on
// the hash, not on how queries relate to the keys).
//
// How: the key universe is cut into blocks of L consecutive integers, and
// key x is mapped to the code h(x) = (q(x div L) + x) mod r, with q a seeded
// hash of the block number and r = n * 2^(B-2) for n keys. Inside a block
// the map keeps order and adjacency, so a query range (at most two blocks
// when its length is at most L) maps to at most two code intervals of total
// length at most L; a key in another block lands in them with probability
// at most L / r, so by the union bound a range holding no key is reported
// non-empty with probability at most n * L / r. The distinct codes are
// stored with Elias-Fano coding: about 2 + log2(r / n) = B bits each. A
// query is a successor search in the Elias-Fano sequence per interval.
//
// The serialized form is self-describing and versioned
// (doc/filter_format.md, "Range filter"); this file is the one place that
// writes and reads it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sift {

// The layout tag in a range filter's first byte, and its format version.
inline constexpr uint8_t kGrafiteRangeFilterTag = 16;
inline constexpr uint8_t kRangeFilterFormatVersion = 1;
// The hash seed of the block hash q, unless given.
inline constexpr uint64_t kDefaultRangeFilterSeed = 0x736966742d726e67ULL;

// Facts about a range filter, from its header.
struct RangeFilterInfo {
  uint8_t kind = 0;
  uint8_t version = 0;
  bool known = false;  // false: unknown kind/version, every query "maybe"
  uint64_t block_length = 0;  // L
  uint64_t universe = 0;      // r, the code universe
  uint64_t num_keys = 0;      // distinct codes stored
  uint32_t low_bits = 0;      // Elias-Fano low bits per code
  uint64_t seed = 0;
  uint64_t num_bits = 0;  // bits of the low and high arrays
  double bits_per_key() const {
    return num_keys == 0 ? 0.0 : static_cast<double>(num_bits) / num_keys;
  }
  // The bound on the false-positive rate of an empty range of `length`
  // consecutive integers, length <= block_length: num_keys * length /
  // universe (capped at 1).
  double FprBound(uint64_t length) const;
};

// Builds one range filter.
//
// Thread safety: not safe for concurrent use.
class RangeFilterBuilder {
 public:
  // REQUIRES: bits_per_key >= 2 (the Elias-Fano floor; more bits, more
  // low bits per code), block_length >= 1. block_length is the range
  // length the bound is stated for: longer ranges are answered correctly
  // but with a higher false-positive rate.
  RangeFilterBuilder(double bits_per_key, uint64_t block_length,
                     uint64_t seed = kDefaultRangeFilterSeed);

  // Add a key (any order; repeats are stored once).
  void AddKey(uint64_t key) { keys_.push_back(key); }
  uint64_t NumKeysAdded() const { return keys_.size(); }

  // Serialize the filter over every key added and reset the builder. With no
  // keys the filter answers "no" to every range.
  std::string Finish();

 private:
  const double bits_per_key_;
  const uint64_t block_length_;
  const uint64_t seed_;
  std::vector<uint64_t> keys_;
};

// A parsed range filter, owning its arrays.
//
// Thread safety: const methods are safe for concurrent use.
class RangeFilterReader {
 public:
  // Parse serialized bytes (copied). Truncated or inconsistent bytes, or a
  // bad checksum: absl::DataLossError. An unknown kind or version is not an
  // error: the reader answers "maybe" to every range and info().known is
  // false.
  static absl::StatusOr<std::unique_ptr<RangeFilterReader>> Parse(
      std::string_view serialized);

  // False only if no key added lies in [lo, hi] (both inclusive). Ranges
  // spanning more than a few blocks are answered "maybe" without a search.
  // REQUIRES: lo <= hi.
  bool MayContain(uint64_t lo, uint64_t hi) const;

  const RangeFilterInfo& info() const { return info_; }
  // Bytes of memory the reader holds.
  size_t MemoryUsage() const;

  // Blocks a range may span and still be searched (each costs a successor
  // search or two); wider ranges are answered "maybe".
  static constexpr uint64_t kMaxBlocksSearched = 32;

 private:
  RangeFilterReader() = default;

  uint64_t BlockHash(uint64_t block) const;
  // True if some stored code lies in [c1, c2], c1 <= c2 < universe.
  bool AnyCodeIn(uint64_t c1, uint64_t c2) const;
  // Position in high_ of the zero with 0-based index z. REQUIRES: z < number
  // of zeros.
  uint64_t SelectZero(uint64_t z) const;
  uint64_t Low(uint64_t i) const;

  RangeFilterInfo info_;
  std::vector<uint64_t> low_;   // num_keys * low_bits bits
  std::vector<uint64_t> high_;  // num_keys + (universe >> low_bits) + 1 bits
  uint64_t high_bits_ = 0;
  // zero_samples_[j]: position in high_ of the zero with index j * kSample.
  static constexpr uint64_t kZeroSample = 256;
  std::vector<uint64_t> zero_samples_;
};

}  // namespace sift

#endif  // SIFT_FILTER_RANGE_FILTER_H_
