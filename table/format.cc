#include "table/format.h"

#include <cstring>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "table/compression.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift {
namespace {

std::string BlockLabel(const std::string& file_name, uint64_t offset) {
  return absl::StrCat(file_name, ": block at offset ", offset);
}

}  // namespace

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset);
  PutVarint64(dst, size);
}

bool BlockHandle::DecodeFrom(std::string_view* input) {
  return GetVarint64(input, &offset) && GetVarint64(input, &size);
}

void BlockHandle::EncodeFixedTo(std::string* dst) const {
  PutFixed64(dst, offset);
  PutFixed64(dst, size);
}

void BlockHandle::DecodeFixedFrom(const char* p) {
  offset = DecodeFixed64(p);
  size = DecodeFixed64(p + 8);
}

bool BlockHandle::EndWithTrailer(uint64_t* end) const {
  uint64_t e = offset + size;
  if (e < offset) return false;
  if (e + kBlockTrailerSize < e) return false;
  *end = e + kBlockTrailerSize;
  return true;
}

void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  filter.EncodeFixedTo(dst);
  properties.EncodeFixedTo(dst);
  index.EncodeFixedTo(dst);
  PutFixed32(dst, format_version);
  PutFixed32(dst, Checksum32(std::string_view(*dst).substr(start, 52)));
  PutFixed64(dst, kTableMagicNumber);
}

absl::Status Footer::DecodeFrom(std::string_view input,
                                const std::string& file_name) {
  if (input.size() != kEncodedLength) {
    return absl::DataLossError(
        absl::StrCat(file_name, ": truncated table footer"));
  }
  const char* p = input.data();
  if (DecodeFixed64(p + 56) != kTableMagicNumber) {
    return absl::DataLossError(
        absl::StrCat(file_name, ": bad table magic number (not a sift table)"));
  }
  if (DecodeFixed32(p + 52) != Checksum32(input.substr(0, 52))) {
    return absl::DataLossError(
        absl::StrCat(file_name, ": table footer checksum mismatch"));
  }
  format_version = DecodeFixed32(p + 48);
  if (format_version != kTableFormatVersion) {
    return absl::DataLossError(absl::StrCat(
        file_name, ": unsupported table format version ", format_version));
  }
  filter.DecodeFixedFrom(p);
  properties.DecodeFixedFrom(p + 16);
  index.DecodeFixedFrom(p + 32);
  return absl::OkStatus();
}

void AppendStoredBlock(std::string_view contents, BlockCompression type,
                       std::string* dst) {
  const size_t start = dst->size();
  dst->append(contents.data(), contents.size());
  dst->push_back(static_cast<char>(type));
  PutFixed32(dst, Checksum32(std::string_view(*dst).substr(
                      start, contents.size() + 1)));
}

namespace {

// The checks DecodeStoredBlock makes before decompressing: the contents
// (without the trailer) of a stored block that is whole and, if asked,
// matches its checksum.
absl::StatusOr<std::string_view> CheckStoredBlock(
    std::string_view stored, const BlockHandle& handle, bool verify_checksum,
    const std::string& file_name) {
  if (stored.size() < kBlockTrailerSize ||
      stored.size() - kBlockTrailerSize != handle.size) {
    return absl::DataLossError(absl::StrCat(
        BlockLabel(file_name, handle.offset), ": truncated block"));
  }
  const size_t n = stored.size() - kBlockTrailerSize;
  if (verify_checksum && DecodeFixed32(stored.data() + n + 1) !=
                             Checksum32(stored.substr(0, n + 1))) {
    return absl::DataLossError(absl::StrCat(
        BlockLabel(file_name, handle.offset), ": block checksum mismatch"));
  }
  return stored.substr(0, n);
}

// DecodeStoredBlock's work, decoding into the `length` bytes that
// allocate(length) returns; the decoded contents.
absl::StatusOr<std::string_view> DecodeStoredBlockWith(
    std::string_view stored, const BlockHandle& handle, bool verify_checksum,
    const std::string& file_name, absl::FunctionRef<char*(size_t)> allocate) {
  absl::StatusOr<std::string_view> contents =
      CheckStoredBlock(stored, handle, verify_checksum, file_name);
  if (!contents.ok()) return contents.status();
  const auto type = static_cast<BlockCompression>(stored[contents->size()]);
  absl::StatusOr<size_t> length = UncompressedLength(type, *contents);
  absl::Status s = length.status();
  char* out = nullptr;
  if (s.ok()) {
    out = allocate(*length);
    s = UncompressTo(type, *contents, *length, out);
  }
  if (!s.ok()) {
    // The label is built here only: building it for every block decoded
    // would allocate per block.
    return absl::DataLossError(
        absl::StrCat(BlockLabel(file_name, handle.offset), s.message()));
  }
  return std::string_view(out, *length);
}

}  // namespace

absl::StatusOr<BlockContents> DecodeStoredBlock(std::string_view stored,
                                                const BlockHandle& handle,
                                                bool verify_checksum,
                                                const std::string& file_name) {
  BlockContents result;
  absl::StatusOr<std::string_view> decoded = DecodeStoredBlockWith(
      stored, handle, verify_checksum, file_name, [&](size_t n) {
        result.data = std::make_unique_for_overwrite<char[]>(n);
        return result.data.get();
      });
  if (!decoded.ok()) return decoded.status();
  result.size = decoded->size();
  return result;
}

absl::StatusOr<std::string_view> DecodeStoredBlockInto(
    std::string_view stored, const BlockHandle& handle, bool verify_checksum,
    const std::string& file_name, BlockBuffer* buffer) {
  return DecodeStoredBlockWith(stored, handle, verify_checksum, file_name,
                               [&](size_t n) { return buffer->Reserve(n); });
}

absl::StatusOr<BlockContents> ReadBlock(const RandomAccessFile& file,
                                        const BlockHandle& handle,
                                        bool verify_checksum,
                                        const std::string& file_name) {
  uint64_t end;
  if (!handle.EndWithTrailer(&end) ||
      handle.size > (uint64_t{1} << 40)) {  // no sane block is a TiB
    return absl::DataLossError(absl::StrCat(
        BlockLabel(file_name, handle.offset), ": bad block handle"));
  }
  const size_t n = static_cast<size_t>(handle.size);
  auto buf = std::make_unique_for_overwrite<char[]>(n + kBlockTrailerSize);
  std::string_view stored;
  absl::Status s =
      file.Read(handle.offset, n + kBlockTrailerSize, &stored, buf.get());
  if (!s.ok()) return s;
  if (stored.size() != n + kBlockTrailerSize) {
    return absl::DataLossError(absl::StrCat(
        BlockLabel(file_name, handle.offset), ": truncated block read"));
  }
  // The common case, a raw block read into our buffer, keeps the buffer
  // instead of copying it (the trailer bytes ride along unused).
  if (stored.data() == buf.get() &&
      static_cast<BlockCompression>(stored[n]) == BlockCompression::kNone) {
    if (verify_checksum && DecodeFixed32(stored.data() + n + 1) !=
                               Checksum32(stored.substr(0, n + 1))) {
      return absl::DataLossError(absl::StrCat(
          BlockLabel(file_name, handle.offset), ": block checksum mismatch"));
    }
    return BlockContents{std::move(buf), n};
  }
  return DecodeStoredBlock(stored, handle, verify_checksum, file_name);
}

}  // namespace sift
