#include "table/table_properties.h"

#include <bit>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "util/coding.h"

namespace sift {

void TableProperties::EncodeTo(std::string* dst) const {
  PutVarint32(dst, kEncodingVersion);
  PutVarint64(dst, num_entries);
  PutVarint64(dst, raw_key_bytes);
  PutVarint64(dst, raw_value_bytes);
  PutVarint64(dst, data_bytes);
  PutVarint64(dst, num_data_blocks);
  dst->push_back(static_cast<char>(compression));
  dst->push_back(static_cast<char>(filter_kind));
  PutFixed64(dst, std::bit_cast<uint64_t>(filter_bits_per_key));
  PutVarint32(dst, filter_num_probes);
  PutVarint64(dst, filter_num_keys);
  PutVarint64(dst, filter_bytes);
  PutLengthPrefixed(dst, smallest_key);
  PutLengthPrefixed(dst, largest_key);
  PutLengthPrefixed(dst, comparator_name);
  PutVarint32(dst, format_version);
  PutLengthPrefixed(dst, prefix_extractor_name);
  dst->push_back(whole_key_filtering ? 1 : 0);
  PutFixed64(dst, std::bit_cast<uint64_t>(range_filter_bits_per_key));
  PutVarint64(dst, range_filter_bytes);
  PutVarint32(dst, range_filter_key_bytes);
  PutVarint32(dst, prefix_filter_hashes);
}

absl::Status TableProperties::DecodeFrom(std::string_view input) {
  auto bad = [](const char* what) {
    return absl::DataLossError(absl::StrCat("bad properties block: ", what));
  };
  uint32_t version;
  if (!GetVarint32(&input, &version)) return bad("truncated version");
  if (version < 1 || version > kEncodingVersion) {
    return bad("unknown encoding version");
  }
  TableProperties p;
  uint64_t bits;
  std::string_view smallest, largest, comparator;
  if (!GetVarint64(&input, &p.num_entries) ||
      !GetVarint64(&input, &p.raw_key_bytes) ||
      !GetVarint64(&input, &p.raw_value_bytes) ||
      !GetVarint64(&input, &p.data_bytes) ||
      !GetVarint64(&input, &p.num_data_blocks) || input.size() < 2) {
    return bad("truncated");
  }
  p.compression = static_cast<uint8_t>(input[0]);
  p.filter_kind = static_cast<uint8_t>(input[1]);
  input.remove_prefix(2);
  if (!GetFixed64(&input, &bits) ||
      !GetVarint32(&input, &p.filter_num_probes) ||
      !GetVarint64(&input, &p.filter_num_keys) ||
      !GetVarint64(&input, &p.filter_bytes) ||
      !GetLengthPrefixed(&input, &smallest) ||
      !GetLengthPrefixed(&input, &largest) ||
      !GetLengthPrefixed(&input, &comparator) ||
      !GetVarint32(&input, &p.format_version)) {
    return bad("truncated");
  }
  if (version >= 2) {
    std::string_view extractor;
    if (!GetLengthPrefixed(&input, &extractor) || input.empty()) {
      return bad("truncated");
    }
    if (static_cast<uint8_t>(input[0]) > 1) {
      return bad("bad whole-key filtering flag");
    }
    p.prefix_extractor_name.assign(extractor);
    p.whole_key_filtering = input[0] == 1;
    input.remove_prefix(1);
  }
  if (version >= 3) {
    uint64_t range_bits;
    if (!GetFixed64(&input, &range_bits) ||
        !GetVarint64(&input, &p.range_filter_bytes) ||
        !GetVarint32(&input, &p.range_filter_key_bytes)) {
      return bad("truncated");
    }
    if (p.range_filter_key_bytes > 8) {
      return bad("range filter key bytes over 8");
    }
    p.range_filter_bits_per_key = std::bit_cast<double>(range_bits);
    if (!std::isfinite(p.range_filter_bits_per_key) ||
        p.range_filter_bits_per_key < 0) {
      return bad("bad range filter bits per key");
    }
  }
  if (version >= 4) {
    if (!GetVarint32(&input, &p.prefix_filter_hashes)) return bad("truncated");
    if (p.prefix_filter_hashes != 1 &&
        (p.prefix_filter_hashes != 2 || p.prefix_extractor_name.empty())) {
      return bad("bad prefix filter hash count");
    }
  }
  if (!input.empty()) return bad("trailing bytes");
  p.filter_bits_per_key = std::bit_cast<double>(bits);
  if (!std::isfinite(p.filter_bits_per_key) || p.filter_bits_per_key < 0) {
    return bad("bad filter bits per key");
  }
  p.smallest_key.assign(smallest);
  p.largest_key.assign(largest);
  p.comparator_name.assign(comparator);
  *this = std::move(p);
  return absl::OkStatus();
}

absl::Status SplitFilterBlock(std::string_view contents,
                              const TableProperties& p, std::string_view* point,
                              std::string_view* range) {
  if (p.filter_bytes > contents.size() ||
      p.range_filter_bytes != contents.size() - p.filter_bytes) {
    return absl::DataLossError(absl::StrCat(
        "filter block of ", contents.size(), " bytes does not hold a ",
        p.filter_bytes, "-byte filter and a ", p.range_filter_bytes,
        "-byte range filter"));
  }
  *point = contents.substr(0, p.filter_bytes);
  *range = contents.substr(p.filter_bytes);
  return absl::OkStatus();
}

}  // namespace sift
