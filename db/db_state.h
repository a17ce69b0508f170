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
//     VersionSet::LogAndApply after Open (BackgroundWork), except while an
//     ingestion holds it paused as the front writer (db/ingest.h).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "db/compaction_job.h"
#include "db/dbformat.h"
#include "db/filter_residency.h"
#include "db/memtable.h"
#include "db/snapshot.h"
#include "db/super_version.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "db/wal_replay.h"
#include "db/write_stalls.h"
#include "sift/env.h"
#include "sift/options.h"
#include "util/cache.h"
#include "util/logging.h"
#include "util/mutex.h"

namespace sift {

class DBState;

// A table file number reserved for an output being written (a flush or
// compaction table), registered in its DBState's pending outputs so that
// DeleteObsoleteFiles leaves the file alone although no version names it
// yet. The registration ends when the guard is destroyed: by then the edit
// naming the table has been applied (the version keeps the file), or the
// table was given up (removed, or never created). KeepPending() keeps the
// registration for the DB's lifetime instead, for a table an abandoned
// MANIFEST may name after a failed LogAndApply.
//
// Thread safety: made by DBState::NewPendingOutput; destroy, move-assign and
// KeepPending only with the DBState's mutex held. number() needs no lock.
class PendingOutput {
 public:
  PendingOutput() = default;  // holds nothing
  PendingOutput(PendingOutput&& other) noexcept;
  PendingOutput& operator=(PendingOutput&& other) noexcept;
  PendingOutput(const PendingOutput&) = delete;
  PendingOutput& operator=(const PendingOutput&) = delete;
  ~PendingOutput();

  // REQUIRES: made by NewPendingOutput (not default or moved-from).
  uint64_t number() const { return number_; }

  // Never end the registration. REQUIRES: the mutex held.
  void KeepPending() { state_ = nullptr; }

 private:
  friend class DBState;
  PendingOutput(DBState* state, uint64_t number)
      : state_(state), number_(number) {}
  // The caller holds state_->mutex (see the class comment); the analysis
  // cannot follow a lock held across a destructor call.
  void Unregister() ABSL_NO_THREAD_SAFETY_ANALYSIS;

  DBState* state_ = nullptr;  // nullptr: nothing to unregister
  uint64_t number_ = 0;
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

  // Under a filter memory limit, choose and load the filter units of the
  // current version's open tables (FilterResidency::Reconcile), counting
  // the loads into the read stats; a unit that cannot be read is logged
  // (its table keeps fewer units: more block reads, never a wrong answer).
  // No-op without a limit. `open_tables`: open the version's tables first
  // (as many as the table cache keeps), for DB::Open. REQUIRES: mutex not
  // held.
  void ReconcileFilters(bool open_tables = false) ABSL_LOCKS_EXCLUDED(mutex);

  // A new table file number, protected from DeleteObsoleteFiles for as long
  // as the result lives (see PendingOutput). Waits (releasing the mutex)
  // while a deletion pass is listing files.
  PendingOutput NewPendingOutput() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);
  // Table files being written (flush and compaction outputs): not yet in any
  // version, and not to be deleted as obsolete.
  const std::set<uint64_t>& pending_outputs() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
    return pending_outputs_;
  }

  const std::string dbname;
  const Options options;
  Env* const env;
  const InternalKeyComparator icmp;
  // nullptr when options.block_cache_capacity is 0.
  const std::unique_ptr<Cache> block_cache;
  const std::unique_ptr<TableCache> table_cache;
  // Under options.filter_memory_limit: which filter units stay resident
  // (set before any table opens); nullptr without a limit.
  const std::unique_ptr<FilterResidency> filter_residency;
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

  // ---- Memtables and the read view ----
  // The memtable writes go to (never null after Open), the one being flushed
  // (nullable) and the WAL that holds the writes of `mem`. They change only
  // through the methods below, which keep them in step with has_imm() and
  // publish every change (and every new version) to point reads through
  // super_versions.

  const std::shared_ptr<MemTable>& mem() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
    return mem_;
  }
  const std::shared_ptr<MemTable>& imm() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
    return imm_;
  }
  uint64_t logfile_number() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex) {
    return logfile_number_;
  }
  // imm() != nullptr, readable without the mutex (a cheap "is a flush
  // waiting?" check from inside long compactions).
  bool has_imm() const { return has_imm_.load(std::memory_order_acquire); }

  // An empty memtable sized for options.write_buffer_size, with its filter.
  std::shared_ptr<MemTable> NewMemTable() const;
  // Make `mem` the active memtable, its writes logged in WAL `log_number`
  // (Open, after recovery). REQUIRES: no immutable memtable.
  void SetMemTable(std::shared_ptr<MemTable> mem, uint64_t log_number)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);
  // The active memtable becomes the immutable one; a new empty memtable
  // takes writes logged in WAL `new_log_number`. REQUIRES: no immutable
  // memtable.
  void SwitchMemTable(uint64_t new_log_number)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);
  // The immutable memtable is in a table of the current version now.
  // REQUIRES: imm() != nullptr
  void DropImmutableMemTable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);
  // Publish the memtables and versions->current() to point reads. Called by
  // the methods above and after every VersionSet::LogAndApply.
  void InstallSuperVersion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);

  // ---- WALs closed by the background thread ----
  // Takes a WAL the write path has switched out, whose memtable is already
  // in a synced table (nothing in it is needed any more), to be closed by
  // CloseRetiredLogs. Closing a WAL that was written through a mapping can
  // take tens of milliseconds (the kernel writes the file's pages back as
  // its last descriptor goes); the front writer, which every other writer
  // waits behind, should not pay that.
  void RetireLog(std::unique_ptr<WritableFile> log)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);
  // Closes the WALs RetireLog took, with the mutex released (a failure is
  // logged: the WAL's writes are in a table already). The background thread
  // calls it after each step; the rest are closed when this object goes.
  void CloseRetiredLogs() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex);

  // ---- Obsolete-file deletion (obsolete_files.h) ----
  // While above zero, DeleteObsoleteFiles deletes nothing: a checkpoint is
  // reading files that a flush or compaction may make obsolete meanwhile.
  // Changed only by FileDeletionPause.
  int file_deletion_pauses ABSL_GUARDED_BY(mutex) = 0;
  // A DeleteObsoleteFiles pass is deleting with the mutex released; it
  // signals bg_cv when it is done.
  bool deleting_files ABSL_GUARDED_BY(mutex) = false;

  SnapshotList snapshots ABSL_GUARDED_BY(mutex);
  // The first background or WAL error; sticky.
  absl::Status bg_error ABSL_GUARDED_BY(mutex);
  // Flushes count at level 0; compactions at their output level.
  std::array<CompactionStats, config::kNumLevels> level_stats
      ABSL_GUARDED_BY(mutex);
  // What writers waited for since Open (counted by the write path).
  WriteStalls write_stalls ABSL_GUARDED_BY(mutex);
  // Bytes appended to WALs since Open (the sift.bytes-written property).
  uint64_t wal_bytes_written ABSL_GUARDED_BY(mutex) = 0;
  RecoveryReport recovery ABSL_GUARDED_BY(mutex);

  // Point reads get their memtables and version here without the mutex,
  // and count their stats here per thread. Declared last: destroyed first,
  // so the references it caches go before the table cache they point into.
  SuperVersionPublisher super_versions;

 private:
  std::shared_ptr<MemTable> mem_ ABSL_GUARDED_BY(mutex);
  std::shared_ptr<MemTable> imm_ ABSL_GUARDED_BY(mutex);
  std::atomic<bool> has_imm_{false};
  uint64_t logfile_number_ ABSL_GUARDED_BY(mutex) = 0;
  std::vector<std::unique_ptr<WritableFile>> retired_logs_
      ABSL_GUARDED_BY(mutex);

  friend class PendingOutput;
  // Added to only by NewPendingOutput, erased only by PendingOutput.
  std::set<uint64_t> pending_outputs_ ABSL_GUARDED_BY(mutex);
};

}  // namespace sift

#endif  // SIFT_DB_DB_STATE_H_
