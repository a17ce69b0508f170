#ifndef SIFT_TABLE_FORMAT_H_
#define SIFT_TABLE_FORMAT_H_

// The fixed pieces of the table format (doc/table_format.md): block handles,
// the footer, and the trailer stored after every block, plus reading one
// stored block back from a file.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sift/env.h"

namespace sift {

// Version of the table layout written by this code; the only one it reads.
inline constexpr uint32_t kTableFormatVersion = 1;

// Identifies a table file: the last 8 bytes, little-endian.
inline constexpr uint64_t kTableMagicNumber = 0xf7b2a1c35e9d4068ULL;

// After every stored block: 1-byte compression type, 4-byte checksum
// (Checksum32 over the block contents followed by the type byte).
inline constexpr size_t kBlockTrailerSize = 5;

// Compression type byte of a stored block.
enum class BlockCompression : uint8_t {
  kNone = 0,
  kSnappy = 1,
};

// Where a block lives in a file: `offset` of its first byte and `size` of its
// stored contents, the trailer not included.
struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;

  // Bytes of the varint encoding (index entries), at most.
  static constexpr size_t kMaxVarintEncodedLength = 20;

  // Varint64 offset, varint64 size: the value of an index entry.
  void EncodeTo(std::string* dst) const;
  // Consumes the varint encoding from the front of *input. False if
  // truncated or malformed.
  bool DecodeFrom(std::string_view* input);

  // Fixed64 offset, fixed64 size: how the footer stores handles.
  void EncodeFixedTo(std::string* dst) const;
  void DecodeFixedFrom(const char* p);

  // Offset one past the block's trailer; false on overflow.
  bool EndWithTrailer(uint64_t* end) const;
};

// The fixed-size end of every table.
//
//   filter handle      fixed64 offset, fixed64 size (size 0: no filter)
//   properties handle  fixed64 offset, fixed64 size
//   index handle       fixed64 offset, fixed64 size
//   format version     fixed32
//   checksum           fixed32, Checksum32 of the 52 bytes before it
//   magic              fixed64 kTableMagicNumber
struct Footer {
  static constexpr size_t kEncodedLength = 3 * 16 + 4 + 4 + 8;

  BlockHandle filter;
  BlockHandle properties;
  BlockHandle index;
  uint32_t format_version = kTableFormatVersion;

  bool has_filter() const { return filter.size != 0; }

  void EncodeTo(std::string* dst) const;
  // `input` must be exactly kEncodedLength bytes. Checks magic, checksum and
  // version; errors are absl::DataLossError prefixed by `file_name`.
  absl::Status DecodeFrom(std::string_view input, const std::string& file_name);
};

// The uncompressed contents of a block, owned.
struct BlockContents {
  // Owns the bytes, unless `borrowed` is set.
  std::unique_ptr<char[]> data;
  size_t size = 0;
  // Bytes kept alive by someone else (a memory-mapped table file that
  // outlives every use of the block); nullptr if `data` owns them.
  const char* borrowed = nullptr;

  const char* bytes() const {
    return borrowed != nullptr ? borrowed : data.get();
  }
  std::string_view view() const { return {bytes(), size}; }
};

// Append `contents` stored with `type` (contents already compressed as the
// type says) and its trailer to *dst.
void AppendStoredBlock(std::string_view contents, BlockCompression type,
                       std::string* dst);

// Decode a stored block: `stored` is the block contents followed by the
// trailer, as read from `handle` of `file_name` (both only label errors).
// Checks the checksum if `verify_checksum`, then decompresses. Any damage:
// absl::DataLossError naming the file and the block offset.
absl::StatusOr<BlockContents> DecodeStoredBlock(std::string_view stored,
                                                const BlockHandle& handle,
                                                bool verify_checksum,
                                                const std::string& file_name);

// Memory a reader decodes blocks into, one block at a time, reused: it grows
// to the largest block it has held and is not freed between blocks, so a
// reader that decodes block after block (a point read's thread, a scan)
// allocates nothing per block. A block decoded into it lives until the next
// decode into the same buffer or the buffer's destruction.
//
// Thread safety: none; one per reader.
class BlockBuffer {
 public:
  // Room for n bytes; earlier contents are lost.
  char* Reserve(size_t n) {
    if (n > capacity_) {
      data_ = std::make_unique_for_overwrite<char[]>(n);
      capacity_ = n;
    }
    return data_.get();
  }

  // Frees the memory if it has grown past max_keep bytes (a rare large
  // block), so that a long-lived buffer does not keep it.
  void Trim(size_t max_keep) {
    if (capacity_ > max_keep) {
      data_.reset();
      capacity_ = 0;
    }
  }

  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
};

// DecodeStoredBlock into *buffer: the decoded contents, which live in
// *buffer (see BlockBuffer). Same checks and errors.
absl::StatusOr<std::string_view> DecodeStoredBlockInto(
    std::string_view stored, const BlockHandle& handle, bool verify_checksum,
    const std::string& file_name, BlockBuffer* buffer);

// Read the block at `handle` from `file` (one Read call) and decode it as
// DecodeStoredBlock does. A short read is absl::DataLossError ("truncated").
absl::StatusOr<BlockContents> ReadBlock(const RandomAccessFile& file,
                                        const BlockHandle& handle,
                                        bool verify_checksum,
                                        const std::string& file_name);

}  // namespace sift

#endif  // SIFT_TABLE_FORMAT_H_
