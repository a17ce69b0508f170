#ifndef SIFT_DB_LOG_READER_H_
#define SIFT_DB_LOG_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "sift/env.h"

namespace sift::log {

// Reads the records of a log file in order.
//
// Damage handling: a record cut short at the end of the file (the write that
// was in progress at a crash) ends the log cleanly and is not reported. Any
// other damage (bad checksum, impossible length, fragment out of order) is
// reported to the Reporter with the number of bytes dropped, and reading
// resumes at the next intact record.
//
// Thread safety: not safe for concurrent use.
class Reader {
 public:
  class Reporter {
   public:
    virtual ~Reporter() = default;
    // `bytes` were dropped because of `status` (a DataLossError naming the
    // offset).
    virtual void Corruption(size_t bytes, const absl::Status& status) = 0;
  };

  // `file` and `reporter` (may be nullptr) are not owned and must outlive the
  // Reader. Records starting before `initial_offset` are skipped.
  Reader(SequentialFile* file, Reporter* reporter, bool verify_checksums,
         uint64_t initial_offset = 0);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader();

  // Read the next record into *record, which views either *scratch or the
  // reader's buffer and stays valid until the next ReadRecord. False at end of
  // log (or when a read of the file fails, which is reported).
  bool ReadRecord(std::string_view* record, std::string* scratch);

  // File offset of the last record ReadRecord returned.
  uint64_t LastRecordOffset() const;

  // The error that stopped reading, if reading the file failed (not damage:
  // damage goes to the Reporter).
  absl::Status status() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace sift::log

#endif  // SIFT_DB_LOG_READER_H_
