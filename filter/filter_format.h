#ifndef SIFT_FILTER_FILTER_FORMAT_H_
#define SIFT_FILTER_FILTER_FORMAT_H_

// The serialized filter (doc/filter_format.md): a 32-byte header, the bit
// array, and a 4-byte checksum over both. This file is the one place that
// writes and reads those bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "filter/filter.h"

namespace sift {

// Layout tags on disk; equal to the FilterKind values.
inline constexpr uint8_t kStandardBloomTag = 1;
inline constexpr uint8_t kBlockedBloomTag = 2;
// The only format version this code writes and reads.
inline constexpr uint8_t kFilterFormatVersion = 1;

// The fixed fields in front of the bit array.
struct FilterHeader {
  static constexpr size_t kEncodedLength = 32;

  uint8_t kind = 0;
  uint8_t version = kFilterFormatVersion;
  uint8_t num_probes = 0;
  uint64_t num_bits = 0;
  uint64_t num_keys = 0;
  uint64_t seed = 0;

  // Appends kEncodedLength bytes.
  void EncodeTo(std::string* dst) const;
  // Reads the fields of a version-1 header from the front of `input` (at
  // least kEncodedLength bytes) and checks that its reserved bytes are zero.
  // Does not judge the values; DecodeFilter does.
  absl::Status DecodeFrom(std::string_view input);
};

// Bytes after the bit array: the low 32 bits of XXH3-64 (seed 0) over the
// header and the bit array.
inline constexpr size_t kFilterTrailerLength = 4;

// A decoded filter. `bits` views the input of DecodeFilter.
struct FilterContents {
  FilterInfo info;
  std::string_view bits;  // num_bits / 8 bytes; empty if !info.known
};

// header + bits + checksum. REQUIRES: bits.size() == header.num_bits / 8.
std::string EncodeFilter(const FilterHeader& header, std::string_view bits);

// Validates and splits serialized filter bytes. Too short, bad checksum,
// nonzero reserved bytes, k out of range, a size that is not a whole number
// of words (standard) or lines (blocked), a length that disagrees with
// num_bits, or keys without bits: absl::DataLossError naming the offset.
// An unknown kind or version is not an error: info.known is false and only
// info.kind and info.version are set.
absl::StatusOr<FilterContents> DecodeFilter(std::string_view serialized);

}  // namespace sift

#endif  // SIFT_FILTER_FILTER_FORMAT_H_
