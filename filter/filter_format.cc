#include "filter/filter_format.h"

#include <cassert>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "filter/bloom_math.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift {
namespace {

// Byte offsets inside the header.
constexpr size_t kKindOffset = 0;
constexpr size_t kVersionOffset = 1;
constexpr size_t kProbesOffset = 2;
constexpr size_t kReservedOffset = 3;  // 5 zero bytes, 3..7
constexpr size_t kNumBitsOffset = 8;
constexpr size_t kNumKeysOffset = 16;
constexpr size_t kSeedOffset = 24;
// The binary fuse header keeps kind, version, num_keys and seed where the
// Bloom header has them.
constexpr size_t kFingerprintBitsOffset = 2;
constexpr size_t kSegmentLog2Offset = 3;
constexpr size_t kAttemptOffset = 4;
constexpr size_t kFuseReservedOffset = 5;  // 3 zero bytes, 5..7
constexpr size_t kSegmentCountOffset = 8;

absl::Status Corrupt(std::string_view what, uint64_t offset) {
  return absl::DataLossError(absl::StrCat(
      "filter block: ", absl::string_view(what.data(), what.size()),
      " at offset ", offset));
}

}  // namespace

void FilterHeader::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength] = {};
  buf[kKindOffset] = static_cast<char>(kind);
  buf[kVersionOffset] = static_cast<char>(version);
  buf[kProbesOffset] = static_cast<char>(num_probes);
  EncodeFixed64(buf + kNumBitsOffset, num_bits);
  EncodeFixed64(buf + kNumKeysOffset, num_keys);
  EncodeFixed64(buf + kSeedOffset, seed);
  dst->append(buf, kEncodedLength);
}

absl::Status FilterHeader::DecodeFrom(std::string_view input) {
  if (input.size() < kEncodedLength) {
    return Corrupt(absl::StrCat("header truncated to ", input.size(), " bytes"),
                   0);
  }
  const char* p = input.data();
  for (size_t i = kReservedOffset; i < kNumBitsOffset; ++i) {
    if (p[i] != 0) return Corrupt("nonzero reserved byte", i);
  }
  kind = static_cast<uint8_t>(p[kKindOffset]);
  version = static_cast<uint8_t>(p[kVersionOffset]);
  num_probes = static_cast<uint8_t>(p[kProbesOffset]);
  num_bits = DecodeFixed64(p + kNumBitsOffset);
  num_keys = DecodeFixed64(p + kNumKeysOffset);
  seed = DecodeFixed64(p + kSeedOffset);
  return absl::OkStatus();
}

std::string EncodeFilter(const FilterHeader& header, std::string_view bits) {
  std::string out;
  out.reserve(FilterHeader::kEncodedLength + bits.size() +
              kFilterTrailerLength);
  header.EncodeTo(&out);
  out.append(bits.data(), bits.size());
  PutFixed32(&out, Checksum32(out));
  return out;
}

void FuseHeader::EncodeTo(std::string* dst) const {
  char buf[kEncodedLength] = {};
  buf[kKindOffset] = static_cast<char>(kBinaryFuseTag);
  assert(layout.arity == kFuseArity || layout.arity == kFuseArityV1);
  buf[kVersionOffset] = static_cast<char>(
      layout.arity == kFuseArityV1 ? kFuseFormatVersionV1 : kFuseFormatVersion);
  buf[kFingerprintBitsOffset] = static_cast<char>(layout.fingerprint_bits);
  buf[kSegmentLog2Offset] = static_cast<char>(layout.segment_length_log2);
  buf[kAttemptOffset] = static_cast<char>(layout.attempt);
  EncodeFixed64(buf + kSegmentCountOffset, layout.segment_count);
  EncodeFixed64(buf + kNumKeysOffset, num_keys);
  EncodeFixed64(buf + kSeedOffset, seed);
  dst->append(buf, kEncodedLength);
}

absl::Status FuseHeader::DecodeFrom(std::string_view input) {
  if (input.size() < kEncodedLength) {
    return Corrupt(absl::StrCat("header truncated to ", input.size(), " bytes"),
                   0);
  }
  const char* p = input.data();
  const uint8_t version = static_cast<uint8_t>(p[kVersionOffset]);
  if (FuseArityOfVersion(version) == 0) {
    return Corrupt(absl::StrCat("binary fuse version ", version),
                   kVersionOffset);
  }
  for (size_t i = kFuseReservedOffset; i < kSegmentCountOffset; ++i) {
    if (p[i] != 0) return Corrupt("nonzero reserved byte", i);
  }
  layout.arity = FuseArityOfVersion(version);
  layout.fingerprint_bits = static_cast<uint8_t>(p[kFingerprintBitsOffset]);
  layout.segment_length_log2 = static_cast<uint8_t>(p[kSegmentLog2Offset]);
  layout.attempt = static_cast<uint8_t>(p[kAttemptOffset]);
  layout.segment_count = DecodeFixed64(p + kSegmentCountOffset);
  num_keys = DecodeFixed64(p + kNumKeysOffset);
  seed = DecodeFixed64(p + kSeedOffset);
  return absl::OkStatus();
}

std::string EncodeFuseFilter(const FuseHeader& header, std::string_view slots) {
  std::string out;
  out.reserve(FuseHeader::kEncodedLength + slots.size() + kFilterTrailerLength);
  header.EncodeTo(&out);
  out.append(slots.data(), slots.size());
  PutFixed32(&out, Checksum32(out));
  return out;
}

namespace {

// The Bloom header and bit array of a block whose checksum matched.
absl::Status DecodeBloom(std::string_view serialized, size_t body_end,
                         FilterContents* result) {
  FilterHeader header;
  if (absl::Status s = header.DecodeFrom(serialized); !s.ok()) return s;
  const bool blocked = header.kind == kBlockedBloomTag;
  if (header.num_probes < 1 || header.num_probes > kMaxFilterProbes) {
    return Corrupt(absl::StrCat("probe count ", header.num_probes,
                                " outside 1..", kMaxFilterProbes),
                   kProbesOffset);
  }
  const uint64_t granule = blocked ? kFilterLineBits : 64;
  if (header.num_bits % granule != 0) {
    return Corrupt(absl::StrCat("bit count ", header.num_bits,
                                " is not a multiple of ", granule),
                   kNumBitsOffset);
  }
  const uint64_t body_bytes = body_end - FilterHeader::kEncodedLength;
  if (header.num_bits / 8 != body_bytes) {
    return Corrupt(absl::StrCat("bit count ", header.num_bits, " needs ",
                                header.num_bits / 8,
                                " bytes but the block has ", body_bytes),
                   kNumBitsOffset);
  }
  if ((header.num_keys == 0) != (header.num_bits == 0)) {
    return Corrupt(
        absl::StrCat(header.num_keys, " keys in ", header.num_bits, " bits"),
        kNumKeysOffset);
  }
  result->info.known = true;
  result->info.num_probes = header.num_probes;
  result->info.num_bits = header.num_bits;
  result->info.num_keys = header.num_keys;
  result->info.seed = header.seed;
  result->bits = serialized.substr(FilterHeader::kEncodedLength, body_bytes);
  return absl::OkStatus();
}

// The fuse header's layout against the size of the slot array.
absl::Status CheckFuseLayout(const FuseHeader& header, uint64_t body_bytes) {
  const FuseLayout& layout = header.layout;
  if (layout.fingerprint_bits < 1 ||
      layout.fingerprint_bits > kMaxFingerprintBits) {
    return Corrupt(absl::StrCat("fingerprint width ", layout.fingerprint_bits,
                                " outside 1..", kMaxFingerprintBits),
                   kFingerprintBitsOffset);
  }
  if (layout.segment_length_log2 > kMaxFuseSegmentLog2) {
    return Corrupt(absl::StrCat("segment length 2^", layout.segment_length_log2,
                                " above 2^", kMaxFuseSegmentLog2),
                   kSegmentLog2Offset);
  }
  if ((header.num_keys == 0) != (layout.segment_count == 0)) {
    return Corrupt(absl::StrCat(header.num_keys, " keys in ",
                                layout.segment_count, " segments"),
                   kNumKeysOffset);
  }
  // Each segment holds at least one bit, so a count above the body's bits
  // is damage; checking it first keeps num_slots() from overflowing.
  if (layout.segment_count > (body_bytes * 8) >> layout.segment_length_log2) {
    return Corrupt(absl::StrCat("segment count ", layout.segment_count,
                                " does not fit in ", body_bytes, " bytes"),
                   kSegmentCountOffset);
  }
  if (layout.num_bytes() != body_bytes) {
    return Corrupt(absl::StrCat("fuse layout needs ", layout.num_bytes(),
                                " bytes but the block has ", body_bytes),
                   kSegmentCountOffset);
  }
  if (header.num_keys > layout.num_slots()) {
    return Corrupt(absl::StrCat(header.num_keys, " keys in ",
                                layout.num_slots(), " slots"),
                   kNumKeysOffset);
  }
  return absl::OkStatus();
}

// The fuse header and slot array of a block whose checksum matched.
absl::Status DecodeFuse(std::string_view serialized, size_t body_end,
                        FilterContents* result) {
  FuseHeader header;
  if (absl::Status s = header.DecodeFrom(serialized); !s.ok()) return s;
  const uint64_t body_bytes = body_end - FuseHeader::kEncodedLength;
  if (absl::Status s = CheckFuseLayout(header, body_bytes); !s.ok()) return s;
  const std::string_view slots =
      serialized.substr(FuseHeader::kEncodedLength, body_bytes);
  const uint64_t used_bits = header.layout.num_bits() % 8;
  if (used_bits != 0 &&
      (static_cast<uint8_t>(slots.back()) >> used_bits) != 0) {
    return Corrupt("nonzero padding bits after the last slot", body_end - 1);
  }
  result->info.known = true;
  result->info.num_probes = header.layout.arity;
  result->info.num_bits = header.layout.num_bits();
  result->info.fingerprint_bits = header.layout.fingerprint_bits;
  result->info.num_keys = header.num_keys;
  result->info.seed = header.seed;
  result->bits = slots;
  result->fuse = header.layout;
  return absl::OkStatus();
}

bool KnownKindAndVersion(uint8_t kind, uint8_t version) {
  switch (kind) {
    case kStandardBloomTag:
    case kBlockedBloomTag:
      return version == kFilterFormatVersion;
    case kBinaryFuseTag:
      return FuseArityOfVersion(version) != 0;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<FilterContents> DecodeFilter(std::string_view serialized) {
  FilterContents result;
  if (serialized.size() < 2) {
    return Corrupt(
        absl::StrCat("block of ", serialized.size(), " bytes has no header"),
        0);
  }
  result.info.kind = static_cast<uint8_t>(serialized[kKindOffset]);
  result.info.version = static_cast<uint8_t>(serialized[kVersionOffset]);
  if (!KnownKindAndVersion(result.info.kind, result.info.version)) {
    // Written by a newer (or other) writer: unreadable, but not damage.
    result.info.known = false;
    return result;
  }

  // Both header layouts are 32 bytes.
  constexpr size_t kOverhead =
      FilterHeader::kEncodedLength + kFilterTrailerLength;
  static_assert(FuseHeader::kEncodedLength == FilterHeader::kEncodedLength);
  if (serialized.size() < kOverhead) {
    return Corrupt(absl::StrCat("block truncated to ", serialized.size(),
                                " bytes, less than header and checksum"),
                   0);
  }
  const size_t body_end = serialized.size() - kFilterTrailerLength;
  const uint32_t stored = DecodeFixed32(serialized.data() + body_end);
  if (stored != Checksum32(serialized.substr(0, body_end))) {
    return Corrupt("checksum mismatch", body_end);
  }
  absl::Status s = result.info.kind == kBinaryFuseTag
                       ? DecodeFuse(serialized, body_end, &result)
                       : DecodeBloom(serialized, body_end, &result);
  if (!s.ok()) return s;
  return result;
}

}  // namespace sift
