#ifndef SIFT_DB_LOG_READER_H_
#define SIFT_DB_LOG_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "sift/env.h"

namespace sift::log {

// A problem found while reading a log.
struct Problem {
  enum class Kind {
    // Bytes that cannot be read as records: bad checksum, impossible length,
    // fragment out of order, unknown type.
    kDamage,
    // The file ends inside a record (its header, its payload, or before its
    // last fragment): the write a crash interrupted. The end of the log, not
    // an error.
    kTornTail,
  };
  Kind kind = Kind::kDamage;
  uint64_t offset = 0;  // file offset of the first byte dropped
  uint64_t bytes = 0;   // bytes dropped from there
  std::string reason;   // what is wrong, without file name or offset
};

// Reads the records of a log file in order; the one parser of the framing in
// log_format.h, for recovery, the MANIFEST and kvtool alike.
//
// Damage handling: a record cut short at the end of the file (the write that
// was in progress at a crash) ends the log and is reported as a torn tail.
// Any other damage is reported as damage with the bytes dropped, and reading
// resumes at the next intact fragment. A caller that must not go past damage
// (recovery: its state has to be a prefix of what was written) stops at the
// first damage its Reporter sees: the reporter is told before ReadRecord
// returns any record that follows the damage.
//
// Thread safety: not safe for concurrent use.
class Reader {
 public:
  class Reporter {
   public:
    virtual ~Reporter() = default;
    // Damage: `bytes` were dropped because of `status` (a DataLossError
    // naming the offset). Default: nothing.
    virtual void Corruption(size_t bytes, const absl::Status& status);
    // Every problem, damage and torn tail, with its offset: the diagnostic
    // view (kvtool). Default: damage goes to Corruption; a torn tail, which
    // is not an error, is dropped.
    virtual void Report(const Problem& problem);
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
  // damage goes to the Reporter, and so does this error, via Corruption).
  absl::Status status() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace sift::log

#endif  // SIFT_DB_LOG_READER_H_
