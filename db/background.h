#ifndef SIFT_DB_BACKGROUND_H_
#define SIFT_DB_BACKGROUND_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "db/compaction.h"
#include "db/db_iter.h"
#include "db/db_state.h"
#include "db/dbformat.h"

namespace sift {

// Background flushes and compactions of one database, run one step at a
// time through Env::Schedule (so at most one step runs at once). Each step
// does the most urgent work: flush the immutable memtable if there is one,
// else a requested manual compaction, else the compaction the version set
// picks (a trivial move when the file can move down unchanged): by size, or,
// with every level within its target, one that iterator seeks asked for.
// Obsolete files are deleted after every change to the version. A failure
// becomes the DB's sticky background error and stops further background work.
//
// Thread safety: all methods require the DB mutex (state.mutex).
class BackgroundWork final : public SeekCompactionSink {
 public:
  // `state` is not owned and must outlive this object.
  explicit BackgroundWork(DBState& state);
  BackgroundWork(const BackgroundWork&) = delete;
  BackgroundWork& operator=(const BackgroundWork&) = delete;
  // REQUIRES: WaitUntilIdle returned after shutting_down was set.
  ~BackgroundWork();

  // Schedule a step if there is work to do and none is scheduled.
  void MaybeSchedule() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  // Wait until no step is scheduled or running. With shutting_down set, no
  // new step is scheduled afterwards.
  void WaitUntilIdle() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  // Wait for the running step (if any) to end and run no other until
  // Resume: while paused, the caller alone may change the version (an
  // ingestion's LogAndApply). Calls nest.
  void Pause() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // REQUIRES: paired with an earlier Pause.
  void Resume() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  // Records the seek compaction (VersionSet::RequestSeekCompaction) and
  // schedules a step for it. Takes the DB mutex.
  void RequestSeekCompaction(Version::SeekCharge charge) override
      ABSL_LOCKS_EXCLUDED(state_.mutex);

  // Wait until the immutable memtable (if any) is flushed. Returns the
  // background error if one stops it.
  absl::Status WaitForFlush() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  // Compact the files of `level` overlapping [begin, end] (nullptr: open end)
  // into level + 1, repeating until none is left, and wait for it. With
  // `to_bottom` (level + 1 is the deepest level holding data in the range),
  // one VersionSet::CompactRangeToBottom instead, which rewrites all of the
  // range's level + 1 files too.
  // REQUIRES: 0 <= level < config::kNumLevels - 1
  absl::Status CompactLevelRange(int level, const InternalKey* begin,
                                 const InternalKey* end, bool to_bottom)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

 private:
  struct ManualCompaction {
    int level = 0;
    const InternalKey* begin = nullptr;  // nullptr: open end
    const InternalKey* end = nullptr;
    bool to_bottom = false;  // one CompactRangeToBottom round
    // Rounds left before giving up on a range that keeps refilling (new
    // level-0 files from concurrent writes).
    int rounds_left = 0;
    bool done = false;
    // A step is working on it (with the mutex released inside). The owning
    // CompactLevelRange call must not return, and free it, until the step
    // is through with it, even when a background error already decided
    // the outcome.
    bool in_step = false;
    absl::Status status;
  };

  // A memtable to flush, a manual compaction waiting, or a level over its
  // target: what MaybeSchedule schedules a step for, and what Run checks
  // before handing memory back.
  bool WorkPending() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // The function Env::Schedule runs.
  void Run();
  void Step() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Move a file down a level by an edit alone.
  absl::Status TrivialMove(Compaction* c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Merge the inputs into new files with a CompactionJob.
  absl::Status RunCompactionJob(Compaction* c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Called from inside long compactions (mutex not held): flush the
  // immutable memtable at once so writers do not wait for the compaction.
  void FlushIfWaiting() ABSL_LOCKS_EXCLUDED(state_.mutex);

  DBState& state_;
  // A step is scheduled or running.
  bool scheduled_ ABSL_GUARDED_BY(state_.mutex) = false;
  // Pause calls not yet resumed; no step is scheduled while > 0.
  int paused_ ABSL_GUARDED_BY(state_.mutex) = 0;
  // A compaction job ran since the last ReleaseFreeMemory.
  bool merged_since_release_ ABSL_GUARDED_BY(state_.mutex) = false;
  // The manual compaction in progress, owned by the CompactLevelRange call
  // waiting for it.
  ManualCompaction* manual_ ABSL_GUARDED_BY(state_.mutex) = nullptr;
};

}  // namespace sift

#endif  // SIFT_DB_BACKGROUND_H_
