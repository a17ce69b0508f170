#ifndef SIFT_FILTER_MODULAR_BLOOM_H_
#define SIFT_FILTER_MODULAR_BLOOM_H_

// The modular blocked Bloom filter (kind 4, doc/filter_format.md): one
// table's keys in J independent blocked Bloom filters ("units"), each with
// its share of the bits and a hash of its own derived from the key's one
// XXH3 hash. A key may be present only if every unit consulted says so, so
// a reader that holds the first j units answers with the product of their
// false-positive rates, and memory can follow an allocation after the table
// is written: units are dropped from the back and read back from the file
// one at a time (ElasticBF, Zhang et al., USENIX ATC 2019). At 2.5 bits a
// unit and two probes each, four units (10 bits/key) give 0.85% against
// about 0.95% for one blocked filter of the same size; an absent key stops
// at the first unit that rules it out, so it touches 1.4 lines on average.
//
// This file is the one home of the format: ModularHeader (EncodeTo /
// DecodeFrom), the unit bytes, the builder and the reader.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "filter/aligned_words.h"
#include "filter/filter.h"

namespace sift {

inline constexpr uint8_t kModularBloomTag = 4;
inline constexpr uint8_t kModularFormatVersion = 1;
inline constexpr uint32_t kMaxFilterUnits = 16;
// Bits per key a writer aims to give each unit.
inline constexpr double kFilterUnitBitsPerKey = 2.5;

// Units a writer uses for `bits_per_key`: round(bits / 2.5), 1..16.
uint32_t FilterUnitsFor(double bits_per_key);

// The hash unit `unit` of a key probes with, from the key's filter hash
// (a bijective remix, different for every unit).
inline uint64_t UnitHash(uint64_t h, uint32_t unit) {
  uint64_t x = h ^ ((uint64_t{unit} + 1) * 0x9e3779b97f4a7c15ULL);
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  return x;
}

// The fixed part of a modular filter: everything but the units' bits.
struct ModularHeader {
  struct Unit {
    uint64_t num_bits = 0;  // a multiple of 512
    uint32_t num_probes = 0;
  };
  uint64_t num_keys = 0;
  uint64_t seed = 0;
  std::vector<Unit> units;  // 1..kMaxFilterUnits

  // 24 bytes, 16 a unit, and the header's 4-byte checksum.
  size_t EncodedLength() const { return 28 + 16 * units.size(); }
  // Where unit u's bytes (bits, then a 4-byte checksum) start in the
  // serialized filter, and how many there are.
  uint64_t UnitOffset(uint32_t u) const;
  static uint64_t UnitLength(const Unit& unit) { return unit.num_bits / 8 + 4; }
  // The whole serialized filter's length.
  uint64_t TotalLength() const;

  // Appends EncodedLength() bytes.
  void EncodeTo(std::string* dst) const;
  // Reads and checks a header from the front of `input`: kind and version
  // (the caller dispatched on them), the checksum, reserved bytes, 1..16
  // units, each a whole number of lines with k in 1..30, and keys exactly
  // when bits. Damage: absl::DataLossError naming the offset.
  absl::Status DecodeFrom(std::string_view input);
};

// The serialized unit: its bits (little-endian words) and their checksum,
// which covers the unit's index too, so units cannot be swapped unseen.
std::string EncodeFilterUnit(uint32_t unit, std::string_view bits);

// Builds a modular filter of FilterUnitsFor(bits_per_key) units.
std::unique_ptr<FilterBuilder> NewModularBloomBuilder(double bits_per_key,
                                                      uint64_t seed);

// A parsed modular filter holding its first resident_units() units.
//
// Thread safety: queries and the accessors are safe for concurrent use,
// with each other and with LoadNextUnit / DropLastUnit; calls to those two
// must be serialized by the caller (one owner decides residency). A query
// that started before DropLastUnit may still read the dropped unit's words,
// so the caller keeps the returned memory alive until every such query has
// finished.
class ModularBloomReader final : public FilterReader {
 public:
  // Parse `serialized` and load its first min(max_units, J) units.
  // Damage: absl::DataLossError. REQUIRES: the kind byte is 4 and the
  // version 1 (FilterReader::Parse dispatches on them).
  static absl::StatusOr<std::unique_ptr<ModularBloomReader>> Parse(
      std::string_view serialized, uint32_t max_units);

  FilterInfo info() const override;
  // The object and the resident units' words.
  size_t MemoryUsage() const override;
  double FillRatio() const override;

  const ModularHeader& header() const { return header_; }
  uint32_t num_units() const {
    return static_cast<uint32_t>(header_.units.size());
  }
  uint32_t resident_units() const {
    return resident_.load(std::memory_order_acquire);
  }
  // Bytes of memory unit u holds when resident.
  size_t UnitMemory(uint32_t u) const;
  // Unit u's false-positive rate on its own, by the standard layout's
  // formula (StandardFpr: cheap enough to evaluate for every table when
  // memory is reallocated; at 2.5 bits/key and k = 2 the blocked layout's
  // exact rate, BlockedFpr, is within 2% of it).
  double UnitFpr(uint32_t u) const;

  // Make unit resident_units() resident from its serialized bytes (read from
  // the file at header().UnitOffset(u), UnitLength bytes). Wrong length or
  // checksum: absl::DataLossError, and nothing changes.
  // REQUIRES: resident_units() < num_units().
  absl::Status LoadNextUnit(std::string_view unit_bytes) const;
  // Stop consulting the last resident unit and hand over its memory, which
  // the caller frees once no query that started before this call can still
  // be reading it. REQUIRES: resident_units() > 0.
  std::unique_ptr<AlignedWords> DropLastUnit() const;

 protected:
  bool DoMayMatch(FilterKeyHash* key) const override;
  void DoPrefetch(FilterKeyHash* key) const override;

 private:
  explicit ModularBloomReader(ModularHeader header);

  const ModularHeader header_;
  // Unit u's words, set before resident_ covers u (release) and left in
  // place when it is dropped (its memory then belongs to the caller, which
  // keeps it alive for queries already under way).
  mutable std::atomic<const uint64_t*> words_[kMaxFilterUnits] = {};
  mutable std::unique_ptr<AlignedWords> owned_[kMaxFilterUnits];
  mutable std::atomic<uint32_t> resident_{0};
};

}  // namespace sift

#endif  // SIFT_FILTER_MODULAR_BLOOM_H_
