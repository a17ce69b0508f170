#ifndef SIFT_FILTER_FILTER_FORMAT_H_
#define SIFT_FILTER_FILTER_FORMAT_H_

// The serialized filter (doc/filter_format.md): a 32-byte header, the bit
// array (Bloom) or the bit-packed slots (binary fuse), and a 4-byte checksum
// over both. This file is the one place that writes and reads those bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "filter/filter.h"
#include "filter/fuse_math.h"

namespace sift {

// Layout tags on disk; equal to the FilterKind values.
inline constexpr uint8_t kStandardBloomTag = 1;
inline constexpr uint8_t kBlockedBloomTag = 2;
inline constexpr uint8_t kBinaryFuseTag = 3;
// The only format version this code writes and reads for the Bloom layouts.
inline constexpr uint8_t kFilterFormatVersion = 1;
// Binary fuse: the format version writers produce (4-wise) and the one before
// it (3-wise), which readers still take. The versions share the header and
// the slot packing; they differ in the slots per key and how a key's slots
// and fingerprint follow from its hash (filter/fuse_probe.h).
inline constexpr uint8_t kFuseFormatVersion = 2;
inline constexpr uint8_t kFuseFormatVersionV1 = 1;

// Slots per key of a binary fuse format version: 3 for version 1, 4 for
// version 2, 0 for a version this code does not know.
constexpr uint32_t FuseArityOfVersion(uint32_t version) {
  return version == kFuseFormatVersion     ? kFuseArity
         : version == kFuseFormatVersionV1 ? kFuseArityV1
                                           : 0;
}

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

// The header of a binary fuse filter: the same 32 bytes, kind
// kBinaryFuseTag, with the fuse layout where the Bloom header has k and m.
// The version byte is the layout's arity (FuseArityOfVersion).
struct FuseHeader {
  static constexpr size_t kEncodedLength = 32;

  FuseLayout layout;
  uint64_t num_keys = 0;  // distinct keys placed
  uint64_t seed = 0;      // XXH3 seed of the key hashes

  // Appends kEncodedLength bytes. REQUIRES: layout.attempt < 256 and
  // layout.arity is 3 or 4.
  void EncodeTo(std::string* dst) const;
  // Reads the fields from the front of `input` (at least kEncodedLength
  // bytes), taking the arity from the version byte, and checks that the
  // version is 1 or 2 and the reserved bytes are zero. Does not judge the
  // other values; DecodeFilter does.
  absl::Status DecodeFrom(std::string_view input);
};

// Bytes after the bit array: the low 32 bits of XXH3-64 (seed 0) over the
// header and the bit array.
inline constexpr size_t kFilterTrailerLength = 4;

// A decoded filter. `bits` views the input of DecodeFilter.
struct FilterContents {
  FilterInfo info;
  // Bloom: num_bits / 8 bytes. Fuse: fuse.num_bytes() bytes of packed slots.
  // Empty if !info.known.
  std::string_view bits;
  FuseLayout fuse;  // kind kBinaryFuseTag only
};

// header + bits + checksum. REQUIRES: bits.size() == header.num_bits / 8.
std::string EncodeFilter(const FilterHeader& header, std::string_view bits);
// header + slots + checksum. REQUIRES: slots.size() ==
// header.layout.num_bytes(), bits past num_bits() zero.
std::string EncodeFuseFilter(const FuseHeader& header, std::string_view slots);

// Validates and splits serialized filter bytes. Too short, bad checksum,
// nonzero reserved bytes, k out of range, a size that is not a whole number
// of words (standard) or lines (blocked), a length that disagrees with
// num_bits, or keys without bits: absl::DataLossError naming the offset.
// A binary fuse filter is checked likewise: fingerprint width 1..32, segment
// length at most 2^18, a slot array whose size matches the layout (3 or 4
// slots a key by version), no more keys than slots, keys exactly when
// segments, and zero padding bits.
// An unknown kind or version is not an error: info.known is false and only
// info.kind and info.version are set.
absl::StatusOr<FilterContents> DecodeFilter(std::string_view serialized);

}  // namespace sift

#endif  // SIFT_FILTER_FILTER_FORMAT_H_
