#ifndef SIFT_DB_LOG_FORMAT_H_
#define SIFT_DB_LOG_FORMAT_H_

// Record framing shared by the write-ahead log and the MANIFEST
// (doc/log_format.md): the file is a sequence of 32 KiB blocks; a record is
// split into fragments that never cross a block boundary, each with a 7-byte
// header: checksum (4, over type + payload), length (2), type (1).

#include <cstddef>
#include <cstdint>

namespace sift::log {

enum RecordType : uint8_t {
  // Zero is reserved for preallocated (all-zero) space.
  kZeroType = 0,
  kFullType = 1,
  // A record split over several fragments.
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
inline constexpr uint8_t kMaxRecordType = kLastType;

inline constexpr size_t kBlockSize = 32768;
inline constexpr size_t kHeaderSize = 4 + 2 + 1;

}  // namespace sift::log

#endif  // SIFT_DB_LOG_FORMAT_H_
