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

// Undo CompressBlock for a stored block of `type` whose contents are `data`.
// Unknown types, undecodable data or absurd sizes: absl::DataLossError with
// `where` ("<file>: block at offset N") in front.
absl::StatusOr<BlockContents> UncompressBlock(BlockCompression type,
                                              std::string_view data,
                                              const std::string& where);

}  // namespace sift

#endif  // SIFT_TABLE_COMPRESSION_H_
