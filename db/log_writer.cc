#include "db/log_writer.h"

#include <algorithm>

#include "util/coding.h"
#include "util/hash.h"

namespace sift::log {

Writer::Writer(WritableFile* dest, uint64_t dest_length)
    : dest_(dest),
      block_offset_(dest_length % kBlockSize),
      size_(dest_length) {}

absl::Status Writer::AddRecord(std::string_view record) {
  const char* ptr = record.data();
  size_t left = record.size();
  bool begin = true;
  // Emits at least one fragment, so an empty record is a zero-length FULL.
  do {
    const size_t leftover = kBlockSize - block_offset_;
    if (leftover < kHeaderSize) {
      // Too small for a header: fill the block's tail with zeros, which the
      // reader skips, and start the next block.
      if (leftover > 0) {
        static constexpr char kZeros[kHeaderSize] = {};
        if (absl::Status s = dest_->Append(std::string_view(kZeros, leftover));
            !s.ok()) {
          return s;
        }
        size_ += leftover;
      }
      block_offset_ = 0;
    }
    const size_t avail = kBlockSize - block_offset_ - kHeaderSize;
    const size_t fragment = std::min(left, avail);
    const bool end = fragment == left;
    RecordType type;
    if (begin && end) {
      type = kFullType;
    } else if (begin) {
      type = kFirstType;
    } else if (end) {
      type = kLastType;
    } else {
      type = kMiddleType;
    }
    if (absl::Status s = EmitFragment(type, ptr, fragment); !s.ok()) return s;
    ptr += fragment;
    left -= fragment;
    begin = false;
  } while (left > 0);
  return dest_->Flush();
}

absl::Status Writer::EmitFragment(RecordType type, const char* data, size_t n) {
  // Header and payload go out in one Append. Building them contiguously also
  // lets the checksum cover type + payload in a single pass.
  fragment_.resize(kHeaderSize + n);
  char* buf = fragment_.data();
  buf[4] = static_cast<char>(n & 0xff);
  buf[5] = static_cast<char>(n >> 8);
  buf[6] = static_cast<char>(type);
  if (n > 0) std::copy(data, data + n, buf + kHeaderSize);
  EncodeFixed32(buf, Checksum32(std::string_view(buf + 6, 1 + n)));
  block_offset_ += kHeaderSize + n;
  if (absl::Status s = dest_->Append(fragment_); !s.ok()) return s;
  size_ += fragment_.size();
  return absl::OkStatus();
}

}  // namespace sift::log
