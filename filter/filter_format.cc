#include "filter/filter_format.h"

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

absl::StatusOr<FilterContents> DecodeFilter(std::string_view serialized) {
  FilterContents result;
  if (serialized.size() < 2) {
    return Corrupt(
        absl::StrCat("block of ", serialized.size(), " bytes has no header"),
        0);
  }
  result.info.kind = static_cast<uint8_t>(serialized[kKindOffset]);
  result.info.version = static_cast<uint8_t>(serialized[kVersionOffset]);
  if ((result.info.kind != kStandardBloomTag &&
       result.info.kind != kBlockedBloomTag) ||
      result.info.version != kFilterFormatVersion) {
    // Written by a newer (or other) writer: unreadable, but not damage.
    result.info.known = false;
    return result;
  }

  constexpr size_t kOverhead =
      FilterHeader::kEncodedLength + kFilterTrailerLength;
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

  result.info.known = true;
  result.info.num_probes = header.num_probes;
  result.info.num_bits = header.num_bits;
  result.info.num_keys = header.num_keys;
  result.info.seed = header.seed;
  result.bits = serialized.substr(FilterHeader::kEncodedLength, body_bytes);
  return result;
}

}  // namespace sift
