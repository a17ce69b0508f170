#ifndef SIFT_DB_DB_STATE_H_
#define SIFT_DB_DB_STATE_H_

// The state one open database shares between its parts: the write path
// (write_path.h), background flush and compaction (background.h, flush.h),
// recovery (recovery.h) and the read side (db_impl.h).
//
// Locking. There is one DB-level lock, DBState::mutex. It guards every field
// marked ABSL_GUARDED_BY(mutex) and the VersionSet (which relies on external
// synchronization). Lock order: DBState::mutex is always taken first; the
// locks of the lower layers (TableCache and block cache shards, the Logger,
// the Env's own state) may be taken while it is held and never call back into
// the DB. Long I/O (WAL appends and syncs, building tables, compactions,
// MANIFEST writes, file deletion) runs with the mutex released.
//
// Besides the mutex, two roles own state without it:
//   - the front writer of the write queue alone appends to the WAL and adds
//     to the active memtable (WritePath);
//   - the single background thread alone builds tables and calls
//     VersionSet::LogAndApply after Open (BackgroundWork).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "db/compaction_job.h"
#include "db/dbformat.h"
#include "db/memtable.h"
#include "db/read_stats_counter.h"
#include "db/snapshot.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "sift/env.h"
#include "sift/options.h"
#include "util/cache.h"
#include "util/logging.h"
#include "util/mutex.h"

namespace sift {

// What replaying the write-ahead logs found at Open.
struct RecoveryReport {
  uint64_t logs_replayed = 0;
  uint64_t records_replayed = 0;
  uint64_t bytes_dropped = 0;  // damaged log bytes skipped
  std::string first_error;     // the first damage reported, if any
};

class DBState {
 public:
  // REQUIRES: options passed CheckOptions and were sanitized
  // (db/options_check.h), so options.env != nullptr.
  DBState(const Options& options, std::string dbname);
  DBState(const DBState&) = delete;
  DBState& operator=(const DBState&) = delete;
  ~DBState();

  // Make `s` the sticky background error (the first one wins): writes fail
  // with it from now on. Wakes every waiter. No-op for OK.
  void RecordBackgroundError(const absl::Status& s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);

  // The oldest sequence any reader may still read at: the oldest live
  // snapshot, or the last sequence if there is none.
  SequenceNumber SmallestSnapshot() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);

  // Write a line to the informational LOG file, if one is open.
  void Log(std::string_view message) const;

  const std::string dbname;
  const Options options;
  Env* const env;
  const InternalKeyComparator icmp;
  // nullptr when options.block_cache_capacity is 0.
  const std::unique_ptr<Cache> block_cache;
  const std::unique_ptr<TableCache> table_cache;
  // Set once by Open before other threads see the DB; nullable.
  std::unique_ptr<Logger> info_log;

  mutable Mutex mutex;
  // Signalled (SignalAll) whenever background work finishes a step: an
  // immutable memtable flushed, a compaction done, an error recorded, the
  // background thread going idle.
  CondVar bg_cv;
  // Set by the destructor of the DB; background work stops at the next step.
  std::atomic<bool> shutting_down{false};

  const std::unique_ptr<VersionSet> versions ABSL_PT_GUARDED_BY(mutex);
  // The memtable writes go to; never null after Open.
  std::shared_ptr<MemTable> mem ABSL_GUARDED_BY(mutex);
  // The memtable being flushed, or null.
  std::shared_ptr<MemTable> imm ABSL_GUARDED_BY(mutex);
  // imm != nullptr, readable without the mutex (a cheap "is a flush
  // waiting?" check from inside long compactions). Written under the mutex.
  std::atomic<bool> has_imm{false};
  // Number of the WAL that holds the writes of `mem`.
  uint64_t logfile_number ABSL_GUARDED_BY(mutex) = 0;
  SnapshotList snapshots ABSL_GUARDED_BY(mutex);
  // Table files being written (flush and compaction outputs): not yet in any
  // version, and not to be deleted as obsolete.
  std::set<uint64_t> pending_outputs ABSL_GUARDED_BY(mutex);
  // The first background or WAL error; sticky.
  absl::Status bg_error ABSL_GUARDED_BY(mutex);
  // Flushes count at level 0; compactions at their output level.
  std::array<CompactionStats, config::kNumLevels> level_stats
      ABSL_GUARDED_BY(mutex);
  RecoveryReport recovery ABSL_GUARDED_BY(mutex);

  ReadStatsCounter read_stats;
};

}  // namespace sift

#endif  // SIFT_DB_DB_STATE_H_
