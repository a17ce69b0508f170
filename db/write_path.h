#ifndef SIFT_DB_WRITE_PATH_H_
#define SIFT_DB_WRITE_PATH_H_

#include <cstdint>
#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "db/background.h"
#include "db/db_state.h"
#include "db/log_writer.h"
#include "db/write_stalls.h"
#include "sift/env.h"
#include "sift/options.h"
#include "sift/write_batch.h"

namespace sift {

// The write path: a queue of writers committed in groups.
//
// A writer enqueues under the DB mutex and waits until it is at the front
// (or a front writer has done its work). The front writer makes room (see
// MakeRoomForWrite), merges the batches queued behind it into one group
// (up to about 1 MiB; a sync write never joins a group led by a non-sync
// write, so a non-sync leader never pays for an fsync it did not ask for),
// numbers it with the next sequence numbers, and, with the mutex released,
// appends it to the WAL as one record, syncs the WAL if the group asked for
// it, and inserts it into the active memtable. It then publishes the last
// sequence (only now do readers see the group) and wakes the group. If more
// writers queued meanwhile, it commits their group as well, once, before it
// wakes the next front writer: on a busy machine a woken writer may wait a
// scheduler tick for a core, and every writer behind it with it.
//
// A memtable switch starts a new WAL without syncing the old one; the new
// WAL's first record links it to the old one (db/wal_link.h), and the old
// one is synced before anything that promises durability (a synced write,
// RunAlone, Close).
//
// A failed WAL append or sync, or a failed WAL switch, is sticky: it becomes
// the DB's background error and every later write returns it (the DB turns
// read-only for writes). Readers are unaffected.
//
// Thread safety: Write is safe for concurrent use. The WAL (logfile_, log_)
// and group_batch_ are touched only by the front writer, without the mutex;
// queue membership is guarded by the mutex.
class WritePath {
 public:
  // Neither is owned; both must outlive this object.
  WritePath(DBState& state, BackgroundWork& background);
  WritePath(const WritePath&) = delete;
  WritePath& operator=(const WritePath&) = delete;
  ~WritePath();

  // Install the WAL that Open created (number state.logfile_number).
  // REQUIRES: no write has started yet.
  void SetLog(std::unique_ptr<WritableFile> file);

  // Commit `updates` (not modified). nullptr asks for a memtable switch
  // instead: the active memtable, unless empty, becomes the immutable one and
  // a new WAL starts (DB::Flush).
  absl::Status Write(const WriteOptions& options, const WriteBatch* updates)
      ABSL_LOCKS_EXCLUDED(state_.mutex);

  // Run `fn` as the front writer, alone: no write commits, no sequence
  // number is taken and the memtable is not switched while it runs. First,
  // if needs_flush() (called with the mutex held) is true, the active
  // memtable is switched out and the memtables are flushed to tables; then
  // the WAL is synced, so every write before fn is durable. `fn` runs with the
  // mutex held and may release it. Returns the DB's background error if there
  // is one (fn is then not run), else the flush's error or fn's result. A
  // failed fn is not a write error: later writes go on.
  absl::Status RunAlone(absl::FunctionRef<bool()> needs_flush,
                        absl::FunctionRef<absl::Status()> fn)
      ABSL_LOCKS_EXCLUDED(state_.mutex);

  // Sync and close the WAL at shutdown. REQUIRES: no write running or to
  // come.
  absl::Status Close();

  // The size of the active WAL (number state.logfile_number()) up to the end
  // of the last group committed: every acknowledged write to it is in that
  // prefix, and the prefix ends at a record boundary (no partial record of a
  // group being appended), so a copy of it is a clean log.
  uint64_t LoggedBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex) {
    return logged_bytes_;
  }

 private:
  struct Writer;

  // Wait until the active memtable has room (or, with `force`, switch it out
  // unless it is empty): delay the write 1 ms once when level 0 reaches
  // config::kL0SlowdownWritesTrigger tables, wait while the previous memtable
  // is still being flushed or level 0 holds config::kL0StopWritesTrigger
  // tables, and switch to a new memtable and WAL when the active one is full.
  // Counts what the call waited for in state_.write_stalls, each cause once.
  // REQUIRES: mutex held, the caller is the front writer.
  absl::Status MakeRoomForWrite(bool force)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // MakeRoomForWrite's work, adding its waits to *waits.
  absl::Status WaitForRoom(bool force, WriteStalls::Waits* waits)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  // Microseconds from `start_micros` (Env::NowMicros) to now.
  uint64_t MicrosSince(uint64_t start_micros) const;

  // Start a new WAL and memtable; the old memtable becomes immutable and a
  // flush is scheduled.
  // REQUIRES: mutex held, the caller is the front writer, state_.imm null.
  absl::Status SwitchMemTable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  // As the front writer's thread: make room, then commit the group that
  // writers_.front() leads (its batch and those BuildGroup merges), or, for
  // a switch request, the switch alone; pop the group and mark each of its
  // writers done with the outcome, which it also returns. Does not wake the
  // next front writer.
  // REQUIRES: mutex held; writers_ not empty; the calling thread is the
  // front writer, or committed the group of the writer that was.
  absl::Status CommitFrontGroup() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  // Merge the front writer's batch and those queued behind it that may join
  // it into group_batch_; *last_writer is the last one merged.
  // REQUIRES: mutex held; the front writer has a batch.
  void BuildGroup(Writer** last_writer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  DBState& state_;
  BackgroundWork& background_;

  std::deque<Writer*> writers_ ABSL_GUARDED_BY(state_.mutex);
  // A thread is in CommitFrontGroup, possibly for a group it does not belong
  // to, whose front writer must not start one of its own.
  bool committing_ ABSL_GUARDED_BY(state_.mutex) = false;
  uint64_t logged_bytes_ ABSL_GUARDED_BY(state_.mutex) = 0;

  // Sync and close previous_logfile_, after syncing the directory (which
  // holds the active log's entry). No-op without one. With
  // `previous_flushed` (its memtable is in a table, so its writes are
  // durable there) it is closed without a sync.
  // REQUIRES: the caller is the front writer (or Close); mutex not needed.
  absl::Status SyncPreviousLog(bool previous_flushed = false);

  // Front writer only (see the class comment).
  std::unique_ptr<WritableFile> logfile_;
  std::unique_ptr<log::Writer> log_;
  uint64_t log_records_ = 0;  // records appended to the active log
  // The log switched out last, while its writes and the active log's
  // directory entry may not be durable yet; null once synced (or once its
  // memtable's flush made it obsolete). See SwitchMemTable.
  std::unique_ptr<WritableFile> previous_logfile_;
  WriteBatch group_batch_;
};

}  // namespace sift

#endif  // SIFT_DB_WRITE_PATH_H_
