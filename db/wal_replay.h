#ifndef SIFT_DB_WAL_REPLAY_H_
#define SIFT_DB_WAL_REPLAY_H_

// Replaying write-ahead logs into memtables: the one implementation, used by
// recovery at Open and by kvtool's read-only view of a database.
//
// Replay is point-in-time: it applies the records of the logs in order and
// stops at the first damaged record (bad checksum, impossible length, a batch
// that does not decode). Nothing after it is applied, neither the rest of
// that log nor any later log, so the state replayed is a prefix of what was
// written. A record cut short at the very end of a log (the write a crash
// interrupted) is a torn tail: it ends that log and is not damage. A log
// whose predecessor lost records in a crash (see WalReplayOptions::
// min_log_number) is not replayed either, nor any log after it.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "db/dbformat.h"
#include "db/memtable.h"
#include "sift/env.h"

namespace sift {

// What replaying the write-ahead logs found (Open reports it in the LOG file
// and the sift.recovery property).
struct RecoveryReport {
  uint64_t logs_replayed = 0;  // logs read, in full or up to the damage
  uint64_t records_replayed = 0;
  // Damage stopped the replay. The fields below are then set.
  bool stopped_at_damage = false;
  // ...and the "damage" was a log that lost unsynced records in a machine
  // crash, so a later log could not be replayed without a hole.
  bool stopped_at_lost_writes = false;
  std::string first_error;  // the damage, naming the log and the offset
  // Intact records after the damage (in its log and every later one), and
  // the bytes from the damage to the end of its log plus the later logs:
  // what a prefix-preserving recovery had to leave out.
  uint64_t records_dropped = 0;
  uint64_t bytes_dropped = 0;
  // The damaged log and every later one, oldest first: not (fully)
  // replayed.
  std::vector<uint64_t> unreplayed_logs;
  // The names (no directory) they were kept under, once recovery kept them.
  std::vector<std::string> kept_aside;
};

// Where replayed batches go.
class ReplayTarget {
 public:
  virtual ~ReplayTarget() = default;
  // The memtable the next batch is inserted into; never null.
  virtual MemTable* MemTableForInsert() = 0;
  // After each batch was inserted (e.g. flush a full memtable). An error
  // stops the replay and is returned.
  virtual absl::Status BatchApplied() = 0;
};

struct WalReplayOptions {
  // Damage fails the replay with DataLossError instead of ending it
  // (paranoid_checks).
  bool fail_on_damage = false;
  // Receives one line per event worth the LOG file (damage, torn tails);
  // may be empty.
  std::function<void(const std::string&)> info;
  // The MANIFEST's log number: logs below it are covered by tables. A log
  // whose link record (db/wal_link.h) names a log at or above it must follow
  // that log, with all of its records read back; otherwise a crash lost
  // unsynced writes of that log, and replay stops before the linking log
  // (as at damage, but never failing under fail_on_damage).
  uint64_t min_log_number = 0;
};

// Replay WALs `numbers` (oldest first) of database `dbname` into `target`,
// raising *max_sequence to the last sequence applied, and add what was found
// to *report. Errors: a log that cannot be read (as the Env says), damage
// under fail_on_damage (DataLossError naming the log and offset), and
// target's errors.
absl::Status ReplayWals(Env* env, std::string_view dbname,
                        const std::vector<uint64_t>& numbers,
                        const WalReplayOptions& options, ReplayTarget* target,
                        SequenceNumber* max_sequence, RecoveryReport* report);

// The report as the sift.recovery property shows it: one "name: value" line
// per field.
std::string RecoveryReportText(const RecoveryReport& report);

}  // namespace sift

#endif  // SIFT_DB_WAL_REPLAY_H_
