#include "table/compression.h"

#include <snappy.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace sift {
namespace {

// Snappy's densest encoding (a 3-byte copy of 64 bytes) expands about 21x, so
// a claimed length beyond this bound can only come from damaged bytes; it is
// rejected before any memory is allocated for it.
constexpr size_t kMaxSnappyExpansion = 32;
constexpr size_t kSnappySlack = 64;

}  // namespace

BlockCompression CompressBlock(Compression wanted, std::string_view raw,
                               std::string* out) {
  if (wanted != Compression::kSnappy) return BlockCompression::kNone;
  out->clear();
  snappy::Compress(raw.data(), raw.size(), out);
  if (out->size() > raw.size() - raw.size() / 8) return BlockCompression::kNone;
  return BlockCompression::kSnappy;
}

absl::StatusOr<size_t> UncompressedLength(BlockCompression type,
                                          std::string_view data) {
  switch (type) {
    case BlockCompression::kNone:
      return data.size();
    case BlockCompression::kSnappy: {
      size_t length = 0;
      if (!snappy::GetUncompressedLength(data.data(), data.size(), &length) ||
          length > data.size() * kMaxSnappyExpansion + kSnappySlack) {
        return absl::DataLossError(": bad Snappy length header");
      }
      return length;
    }
  }
  return absl::DataLossError(
      absl::StrCat(": unknown compression type ", static_cast<int>(type)));
}

absl::Status UncompressTo(BlockCompression type, std::string_view data,
                          size_t length, char* out) {
  if (type == BlockCompression::kNone) {
    if (length != 0) std::memcpy(out, data.data(), length);
    return absl::OkStatus();
  }
  if (!snappy::RawUncompress(data.data(), data.size(), out)) {
    return absl::DataLossError(": corrupted Snappy data");
  }
  return absl::OkStatus();
}

}  // namespace sift
