#ifndef SIFT_TABLE_TABLE_PROPERTIES_H_
#define SIFT_TABLE_TABLE_PROPERTIES_H_

// Facts about a table, stored in its properties block
// (doc/table_format.md, "Properties block").

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sift {

struct TableProperties {
  // Encoding version of the properties block itself.
  // Version 2 appended prefix_extractor_name and whole_key_filtering,
  // version 3 range_filter_bits_per_key, range_filter_bytes and
  // range_filter_key_bytes, version 4 prefix_filter_hashes; older blocks
  // still decode (no extractor, whole keys, no range filter, one hash per
  // prefix).
  static constexpr uint32_t kEncodingVersion = 4;

  uint64_t num_entries = 0;
  uint64_t raw_key_bytes = 0;    // sum of key sizes as added
  uint64_t raw_value_bytes = 0;  // sum of value sizes as added
  uint64_t data_bytes = 0;       // data blocks as stored, trailers included
  uint64_t num_data_blocks = 0;
  // sift::Compression the table was built with (blocks that did not shrink
  // enough are stored raw regardless).
  uint8_t compression = 0;
  // sift::FilterKind, or 0 if the table has no filter.
  uint8_t filter_kind = 0;
  double filter_bits_per_key = 0.0;  // as configured
  uint32_t filter_num_probes = 0;    // k
  uint64_t filter_num_keys = 0;      // distinct filter keys added
  uint64_t filter_bytes = 0;         // serialized filter size
  std::string smallest_key;          // empty if num_entries == 0
  std::string largest_key;
  std::string comparator_name;
  uint32_t format_version = 0;  // table format version (see the footer)
  // PrefixExtractor::Name() of the prefixes in the filter; empty: none.
  std::string prefix_extractor_name;
  // The filter holds every whole filter key (false: only prefixes).
  bool whole_key_filtering = true;
  // Entries each distinct prefix has in the filter: 1, or 2 (its first and
  // second hash, FilterBuilder::AddKeySecondHash), in which case a prefix
  // query asks both. 1 when there is no extractor.
  uint32_t prefix_filter_hashes = 1;
  // The range filter (filter/range_filter.h), stored in the filter block
  // after the filter_bytes of the point filter; 0 bytes: none.
  double range_filter_bits_per_key = 0.0;  // as configured
  uint64_t range_filter_bytes = 0;
  // Bytes after the common prefix a key maps to (RangeFilterKeyMap), 0..8.
  uint32_t range_filter_key_bytes = 0;

  void EncodeTo(std::string* dst) const;
  // Parse bytes written by EncodeTo (this version or version 1). Bad or
  // truncated bytes, an unknown encoding version or trailing bytes:
  // absl::DataLossError (message without a file name; the caller adds it).
  absl::Status DecodeFrom(std::string_view input);

  bool operator==(const TableProperties&) const = default;
};

// The filter block holds the point filter (p.filter_bytes bytes) followed by
// the range filter (p.range_filter_bytes). Splits `contents` into the two;
// absl::DataLossError if the sizes do not add up to contents.size().
absl::Status SplitFilterBlock(std::string_view contents,
                              const TableProperties& p, std::string_view* point,
                              std::string_view* range);

}  // namespace sift

#endif  // SIFT_TABLE_TABLE_PROPERTIES_H_
