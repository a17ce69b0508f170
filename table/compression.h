#ifndef SIFT_TABLE_COMPRESSION_H_
#define SIFT_TABLE_COMPRESSION_H_

// Per-block compression: Snappy is kept only when it pays.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sift/options.h"
#include "table/format.h"

namespace sift {

// Compress `raw` as `wanted` asks. Returns the type actually used: kSnappy
// (with the compressed bytes in *out) only if that saves at least 1/8 of
// `raw`; otherwise kNone and *out is untouched (store `raw` itself).
BlockCompression CompressBlock(Compression wanted, std::string_view raw,
                               std::string* out);

// Undo CompressBlock for a stored block of `type` whose contents are `data`,
// in two steps, so that the caller brings the memory (a reused BlockBuffer,
// or a fresh one) and labels errors itself, only when there is one:
// building "<file>: block at offset N" for every block decoded would be a
// heap allocation per block. Unknown types, undecodable data or absurd
// sizes: absl::DataLossError whose message is the part after the label
// (": corrupted Snappy data").
//
// The size of `data`, stored with `type`, once uncompressed.
absl::StatusOr<size_t> UncompressedLength(BlockCompression type,
                                          std::string_view data);
// Uncompress `data` into out[0, length).
// REQUIRES: length came from UncompressedLength(type, data).
absl::Status UncompressTo(BlockCompression type, std::string_view data,
                          size_t length, char* out);

}  // namespace sift

#endif  // SIFT_TABLE_COMPRESSION_H_
