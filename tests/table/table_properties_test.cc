#include "table/table_properties.h"

#include <gtest/gtest.h>

#include <string>

namespace sift {
namespace {

TableProperties Sample() {
  TableProperties p;
  p.num_entries = 123456;
  p.raw_key_bytes = 1 << 20;
  p.raw_value_bytes = 5ull << 32;
  p.data_bytes = 777777;
  p.num_data_blocks = 190;
  p.compression = 1;
  p.filter_kind = 2;
  p.filter_bits_per_key = 9.5;
  p.filter_num_probes = 6;
  p.filter_num_keys = 123000;
  p.filter_bytes = 147000;
  p.smallest_key = std::string("a\0b", 3);
  p.largest_key = "zzz";
  p.comparator_name = "sift.BytewiseComparator";
  p.format_version = 1;
  p.prefix_extractor_name = "sift.fixed:4";
  p.whole_key_filtering = false;
  p.range_filter_bits_per_key = 16;
  p.range_filter_bytes = 4321;
  p.range_filter_key_bytes = 3;
  p.prefix_filter_hashes = 2;
  return p;
}

TEST(TablePropertiesTest, RoundTrip) {
  for (const TableProperties& p : {Sample(), TableProperties{}}) {
    std::string enc;
    p.EncodeTo(&enc);
    TableProperties d;
    d.num_entries = 99;  // overwritten
    ASSERT_TRUE(d.DecodeFrom(enc).ok());
    EXPECT_EQ(d, p);
  }
}

TEST(TablePropertiesTest, TruncationAndTrailingBytesAreDataLoss) {
  std::string enc;
  Sample().EncodeTo(&enc);
  for (size_t len = 0; len < enc.size(); ++len) {
    TableProperties d = Sample();
    d.num_entries = 5;
    absl::Status s = d.DecodeFrom(std::string_view(enc).substr(0, len));
    EXPECT_TRUE(absl::IsDataLoss(s)) << len;
    EXPECT_EQ(d.num_entries, 5u) << "a failed decode must leave *this alone";
  }
  TableProperties d;
  EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(enc + "x")));
}

TEST(TablePropertiesTest, UnknownVersionAndBadNumbersAreDataLoss) {
  std::string enc;
  Sample().EncodeTo(&enc);
  std::string v5 = enc;
  v5[0] = 5;
  TableProperties d;
  EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(v5)));
  std::string bad_flag = enc;
  // whole_key_filtering (0 or 1) precedes the 8-byte range filter bits per
  // key, the 2-byte varint of range_filter_bytes, one of key bytes and one
  // of prefix filter hashes.
  bad_flag[bad_flag.size() - 13] = 2;
  EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(bad_flag)));
  // Only 1 and 2 hashes a prefix, and 2 only with an extractor.
  for (const char hashes : {0, 3}) {
    std::string bad_hashes = enc;
    bad_hashes.back() = hashes;
    EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(bad_hashes))) << int{hashes};
  }
  TableProperties no_extractor = Sample();
  no_extractor.prefix_extractor_name.clear();
  no_extractor.whole_key_filtering = true;  // two hashes a prefix kept
  std::string two_without;
  no_extractor.EncodeTo(&two_without);
  EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(two_without)));
  TableProperties nan = Sample();
  nan.filter_bits_per_key = -1.0;
  enc.clear();
  nan.EncodeTo(&enc);
  EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(enc)));
}

// Version 1 blocks (written before prefix filters) end after
// format_version and read as no extractor, whole keys; version 2 blocks end
// after whole_key_filtering and read as no range filter; version 3 blocks
// end after range_filter_key_bytes and read as one hash a prefix.
TEST(TablePropertiesTest, OlderVersionsStillDecode) {
  TableProperties p = Sample();
  p.prefix_extractor_name.clear();
  p.whole_key_filtering = true;
  p.range_filter_bits_per_key = 0;
  p.range_filter_bytes = 0;
  p.range_filter_key_bytes = 0;
  p.prefix_filter_hashes = 1;
  std::string enc;
  p.EncodeTo(&enc);
  // Version 4 appended one byte (the varint 1) to version 3, which appended
  // 8 + 1 + 1 bytes (bits, two one-byte varints 0) to version 2, which
  // appended 1 + 1 (an empty name's length byte, the flag).
  std::string v3 = enc.substr(0, enc.size() - 1);
  v3[0] = 3;
  std::string v2 = enc.substr(0, enc.size() - 11);
  v2[0] = 2;
  std::string v1 = enc.substr(0, enc.size() - 13);
  v1[0] = 1;
  for (const std::string& old : {v1, v2, v3}) {
    TableProperties d = Sample();
    ASSERT_TRUE(d.DecodeFrom(old).ok());
    EXPECT_EQ(d, p);
    EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(old + std::string(1, '\0'))));
  }
}

}  // namespace
}  // namespace sift
