#ifndef SIFT_DB_WAL_LINK_H_
#define SIFT_DB_WAL_LINK_H_

// The link record (doc/log_format.md, "Link record"): the first record of a
// write-ahead log started by a memtable switch. It names the log before it
// and how many records that log held when the switch happened.
//
// Why: a switch does not wait for the old log to be synced. After a machine
// crash the old log may have lost an unsynced tail while the new log kept
// records, and replaying both would keep later writes without earlier ones.
// Replay compares the old log's records read back with the count here and
// stops before the new log if any are missing (db/wal_replay.h), so the
// recovered state stays a prefix of the writes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sift {

class WalLink {
 public:
  // Version 1: magic, version byte, varint64 previous log number, varint64
  // previous log's record count.
  static constexpr uint8_t kFormatVersion = 1;

  WalLink() = default;
  WalLink(uint64_t previous_log, uint64_t previous_records)
      : previous_log_(previous_log), previous_records_(previous_records) {}

  // True if `record` starts like a link record (and so is not a write batch:
  // a batch starts with its sequence number, which is below 2^56, while a
  // link starts with eight 0xff bytes).
  static bool IsLink(std::string_view record);

  void EncodeTo(std::string* dst) const;
  // DataLossError (naming the field) if `record` is not a well-formed link
  // record of a version this build reads; *this is then unchanged.
  absl::Status DecodeFrom(std::string_view record);
  // DecodeFrom for the record at byte `offset` of its log; also
  // DataLossError unless it is the log's first record (a switch writes a
  // link only there). Replay and kvtool verify both decode with this.
  absl::Status DecodeAt(std::string_view record, uint64_t offset);

  // The log read back just before the one this link starts.
  struct ReadBack {
    uint64_t number = 0;
    uint64_t records = 0;  // intact records read, its own link included
  };
  enum class Check {
    kSatisfied,
    kPredecessorMissing,  // the log read before is not previous_log()
    kPredecessorShort,    // it is, with fewer than previous_records()
  };
  // Whether this link is satisfied by `previous` (nullopt: no log was read
  // before this one). A previous log numbered below `min_log_number` (the
  // MANIFEST's log number: its writes are in tables) always satisfies it.
  // Anything else means a machine crash lost writes the previous log had
  // not synced, so its successors must not be replayed.
  Check CheckAgainst(const std::optional<ReadBack>& previous,
                     uint64_t min_log_number) const;

  uint64_t previous_log() const { return previous_log_; }
  // Records in the previous log, its own link record included.
  uint64_t previous_records() const { return previous_records_; }

 private:
  uint64_t previous_log_ = 0;
  uint64_t previous_records_ = 0;
};

}  // namespace sift

#endif  // SIFT_DB_WAL_LINK_H_
