// Fuzz target: the serialized filter parser (filter/filter_format.h,
// FilterReader::Parse). The first input byte picks the mode; the rest is a
// serialized filter.
//   bit 0 set: recompute the trailing checksum first, so mutations reach the
//              header and size checks behind it.
// Properties: no crash, no out-of-bounds read; a parsed filter answers
// queries; DecodeFilter and Parse agree on what is valid; an unknown kind or
// version answers "maybe" to every key; a binary fuse filter's layout
// holds what DecodeFilter checked.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "filter/filter.h"
#include "filter/filter_format.h"
#include "tests/fuzz/fuzz_util.h"
#include "util/coding.h"
#include "util/hash.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sift::fuzz::FuzzInput in(data, size);
  const uint8_t mode = in.Byte();
  std::string serialized(in.Rest());
  if ((mode & 1) && serialized.size() >= sift::kFilterTrailerLength) {
    const size_t body = serialized.size() - sift::kFilterTrailerLength;
    std::string crc;
    sift::PutFixed32(
        &crc, sift::Checksum32(std::string_view(serialized).substr(0, body)));
    serialized.replace(body, sift::kFilterTrailerLength, crc);
  }

  absl::StatusOr<sift::FilterContents> decoded = sift::DecodeFilter(serialized);
  absl::StatusOr<std::unique_ptr<sift::FilterReader>> reader =
      sift::FilterReader::Parse(serialized);
  FUZZ_CHECK(decoded.ok() == reader.ok());
  if (!reader.ok()) return 0;

  const sift::FilterInfo info = (*reader)->info();
  FUZZ_CHECK(info.kind == decoded->info.kind);
  if (info.known && info.kind == sift::kBinaryFuseTag) {
    FUZZ_CHECK(info.fingerprint_bits >= 1 && info.fingerprint_bits <= 32);
    FUZZ_CHECK(info.num_keys <= decoded->fuse.num_slots());
  }
  (void)(*reader)->MemoryUsage();
  (void)(*reader)->FillRatio();
  (void)info.bits_per_key();
  const std::string probes[] = {"", "a", "key000001", std::string(100, 'x'),
                                serialized.substr(0, 8)};
  for (const std::string& key : probes) {
    const bool maybe = (*reader)->KeyMayMatch(key);
    if (!info.known) FUZZ_CHECK(maybe);
  }
  return 0;
}
