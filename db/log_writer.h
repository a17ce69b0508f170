#ifndef SIFT_DB_LOG_WRITER_H_
#define SIFT_DB_LOG_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "db/log_format.h"
#include "sift/env.h"

namespace sift::log {

// Appends records to a log file.
//
// Thread safety: not safe for concurrent use (the DB's write path is the only
// writer of its log).
class Writer {
 public:
  // `dest` (not owned, must outlive the Writer) is empty, or already holds
  // `dest_length` bytes of log written before (appending to a reused log).
  explicit Writer(WritableFile* dest, uint64_t dest_length = 0);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Append one record and Flush it to the OS (not Sync: the caller decides).
  absl::Status AddRecord(std::string_view record);

  // The bytes in the file: `dest_length` plus every byte appended since.
  // After an AddRecord that succeeded, the file's first size() bytes are whole
  // records (a reader copying that prefix sees no torn tail).
  uint64_t size() const { return size_; }

 private:
  absl::Status EmitFragment(RecordType type, const char* data, size_t n);

  WritableFile* dest_;
  size_t block_offset_;   // bytes used in the current block
  uint64_t size_;         // see size()
  std::string fragment_;  // header + payload of the fragment being written
};

}  // namespace sift::log

#endif  // SIFT_DB_LOG_WRITER_H_
