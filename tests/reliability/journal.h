#ifndef SIFT_TESTS_RELIABILITY_JOURNAL_H_
#define SIFT_TESTS_RELIABILITY_JOURNAL_H_

// The expected-state journal of the process-kill campaign.
//
// The crash writer (crash_writer.cc) appends an INTENT record describing an
// operation before it hands the operation to the DB, and an ACK record once
// the DB has returned OK. Each record goes to the file in one write(2) call
// on a descriptor without user-space buffering, so a SIGKILL can only cut off
// the record being written (a torn tail, which the parser drops); everything
// written before is in the operating system's hands and survives the kill.
// The test driver parses the journal after the kill: acknowledged operations
// must all be in the database, and the one operation that was in flight (an
// intent without an ack) may be there or not, atomically.
//
// Record framing: fixed32 payload length, fixed32 Checksum32(payload),
// payload. Payloads:
//   INTENT  'I' varint64 op_id, byte sync, varint32 n, n x (byte kind
//           ('P' put, 'D' delete), varint32 key length, key,
//           [varint32 value length, value  -- puts only])
//   ACK     'A' varint64 op_id

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sift::reliability {

// One update of an operation.
struct JournalUpdate {
  bool is_delete = false;
  std::string key;
  std::string value;  // empty for deletes
};

// One DB call: a Put, a Delete (one update each) or a WriteBatch.
struct JournalOp {
  uint64_t id = 0;
  bool sync = false;
  std::vector<JournalUpdate> updates;
  bool acked = false;
};

// Appends records to a journal file with unbuffered write(2) calls.
//
// Thread safety: not safe for concurrent use.
class JournalWriter {
 public:
  // Create or truncate `path`. With `fsync_each_record`, every record is
  // also fdatasync'ed (only needed to survive a machine crash, not a process
  // kill).
  static absl::StatusOr<JournalWriter> Open(const std::string& path,
                                            bool fsync_each_record);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&&) = delete;
  ~JournalWriter();

  absl::Status LogIntent(const JournalOp& op);
  absl::Status LogAck(uint64_t op_id);

 private:
  JournalWriter(int fd, std::string path, bool fsync_each_record)
      : fd_(fd), path_(std::move(path)), fsync_(fsync_each_record) {}
  absl::Status WriteRecord(std::string_view payload);

  int fd_;
  std::string path_;
  bool fsync_;
};

// The operations recorded in journal `contents`, in order, with `acked` set
// from the ACK records. A torn last record is dropped. Damage anywhere else,
// an ACK without its INTENT, or a new INTENT while an earlier one is still
// unacknowledged (the writer has one operation in flight at a time):
// absl::DataLossError.
absl::StatusOr<std::vector<JournalOp>> ParseJournal(std::string_view contents);

using KvMap = std::map<std::string, std::string>;

// Apply `op`'s updates to `state`.
void ApplyOp(const JournalOp& op, KvMap* state);

}  // namespace sift::reliability

#endif  // SIFT_TESTS_RELIABILITY_JOURNAL_H_
