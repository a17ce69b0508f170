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

absl::StatusOr<BlockContents> UncompressBlock(BlockCompression type,
                                              std::string_view data,
                                              const std::string& where) {
  BlockContents result;
  switch (type) {
    case BlockCompression::kNone:
      result.data = std::make_unique_for_overwrite<char[]>(data.size());
      if (!data.empty())
        std::memcpy(result.data.get(), data.data(), data.size());
      result.size = data.size();
      return result;
    case BlockCompression::kSnappy: {
      size_t length = 0;
      if (!snappy::GetUncompressedLength(data.data(), data.size(), &length) ||
          length > data.size() * kMaxSnappyExpansion + kSnappySlack) {
        return absl::DataLossError(
            absl::StrCat(where, ": bad Snappy length header"));
      }
      result.data = std::make_unique_for_overwrite<char[]>(length);
      if (!snappy::RawUncompress(data.data(), data.size(), result.data.get())) {
        return absl::DataLossError(
            absl::StrCat(where, ": corrupted Snappy data"));
      }
      result.size = length;
      return result;
    }
  }
  return absl::DataLossError(absl::StrCat(where, ": unknown compression type ",
                                          static_cast<int>(type)));
}

}  // namespace sift
