#include "db/background.h"

#include <cassert>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/compaction_job.h"
#include "db/flush.h"
#include "db/obsolete_files.h"
#include "util/release_memory.h"

namespace sift {

BackgroundWork::BackgroundWork(DBState& state) : state_(state) {}

BackgroundWork::~BackgroundWork() = default;

void BackgroundWork::MaybeSchedule() {
  if (scheduled_ || paused_ > 0) return;
  if (state_.shutting_down.load(std::memory_order_acquire)) return;
  if (!state_.bg_error.ok()) return;
  if (!WorkPending()) return;
  scheduled_ = true;
  state_.env->Schedule([this] { Run(); });
}

bool BackgroundWork::WorkPending() const {
  return state_.imm() != nullptr || manual_ != nullptr ||
         state_.versions->NeedsCompaction();
}

void BackgroundWork::WaitUntilIdle() {
  while (scheduled_) state_.bg_cv.Wait(&state_.mutex);
}

void BackgroundWork::Pause() {
  ++paused_;
  WaitUntilIdle();
}

void BackgroundWork::Resume() {
  assert(paused_ > 0);
  --paused_;
  MaybeSchedule();
  state_.bg_cv.SignalAll();
}

void BackgroundWork::RequestSeekCompaction(Version::SeekCharge charge) {
  // Every seek into a table past its budget asks until one request is
  // taken; the lock is taken only when none is pending.
  if (state_.versions->SeekCompactionPending()) return;
  MutexLock lock(&state_.mutex);
  state_.versions->RequestSeekCompaction(std::move(charge));
  MaybeSchedule();
}

absl::Status BackgroundWork::WaitForFlush() {
  while (state_.imm() != nullptr && state_.bg_error.ok()) {
    state_.bg_cv.Wait(&state_.mutex);
  }
  return state_.bg_error;
}

absl::Status BackgroundWork::CompactLevelRange(int level,
                                               const InternalKey* begin,
                                               const InternalKey* end,
                                               bool to_bottom) {
  assert(level >= 0 && level < config::kNumLevels - 1);
  ManualCompaction manual;
  manual.level = level;
  manual.begin = begin;
  manual.end = end;
  manual.to_bottom = to_bottom;
  // Each round removes at least one of the files there now from `level`. A
  // rewrite of the bottom runs once: a second round would rewrite it again.
  manual.rounds_left =
      to_bottom ? 1 : state_.versions->NumLevelFiles(level) + 1;
  while ((!manual.done && state_.bg_error.ok()) || manual.in_step) {
    if (manual_ == nullptr && !manual.done && state_.bg_error.ok()) {
      // One manual compaction at a time; later callers wait their turn.
      manual_ = &manual;
      MaybeSchedule();
    }
    state_.bg_cv.Wait(&state_.mutex);
  }
  if (manual_ == &manual) manual_ = nullptr;
  if (!manual.status.ok()) return manual.status;
  return state_.bg_error;
}

void BackgroundWork::Run() {
  MutexLock lock(&state_.mutex);
  assert(scheduled_);
  if (!state_.shutting_down.load(std::memory_order_acquire) &&
      state_.bg_error.ok()) {
    Step();
    // A memtable switch hands its previous WAL here to be closed, off the
    // writers' path.
    state_.CloseRetiredLogs();
    if (state_.filter_residency != nullptr) {
      // The tree may have changed shape: filter memory follows it.
      state_.mutex.Unlock();
      state_.ReconcileFilters();
      state_.mutex.Lock();
    }
  }
  if (merged_since_release_ && !WorkPending()) {
    // The work is done for now: hand back what the merges freed (their
    // inputs' filters and indexes, their own buffers), which glibc would
    // keep resident in this thread's arena (util/release_memory.h). Only
    // here, not after every merge: a release costs system calls and the
    // page faults of touching the memory again, about a third more CPU in a
    // fill when done after each one.
    merged_since_release_ = false;
    state_.mutex.Unlock();
    ReleaseFreeMemory();
    state_.mutex.Lock();
  }
  scheduled_ = false;
  // The step may have made more work (a compaction can leave a level over
  // its target).
  MaybeSchedule();
  state_.bg_cv.SignalAll();
}

void BackgroundWork::Step() {
  if (state_.imm() != nullptr) {
    // Flushing comes first: writers may be waiting for room.
    FlushImmutableMemTable(state_, /*pick_level=*/true)
        .IgnoreError();  // recorded as bg_error
    return;
  }

  ManualCompaction* const manual = manual_;
  if (manual != nullptr) manual->in_step = true;
  std::unique_ptr<Compaction> c;
  if (manual != nullptr && manual->to_bottom) {
    c = state_.versions->CompactRangeToBottom(manual->level, manual->begin,
                                              manual->end);
  } else if (manual != nullptr) {
    c = state_.versions->CompactRange(manual->level, manual->begin,
                                      manual->end);
  } else {
    c = state_.versions->PickCompaction();
  }

  absl::Status s;
  if (c == nullptr) {
    // Nothing (left) to do.
  } else if (manual == nullptr && c->IsTrivialMove()) {
    s = TrivialMove(c.get());
  } else {
    s = RunCompactionJob(c.get());
    merged_since_release_ = true;
  }
  const bool did_work = c != nullptr;
  // Let go of the input version before looking for obsolete files.
  c.reset();

  if (!s.ok()) {
    if (state_.shutting_down.load(std::memory_order_acquire) &&
        absl::IsAborted(s)) {
      // The compaction stopped for shutdown; nothing is lost.
    } else {
      state_.RecordBackgroundError(s);
    }
  }
  if (manual != nullptr) {
    if (!s.ok()) {
      manual->status = s;
      manual->done = true;
    } else if (!did_work || --manual->rounds_left <= 0) {
      manual->done = true;
    }
    if (manual->done) manual_ = nullptr;
    // Last touch: its owner may return (and free it) once woken.
    manual->in_step = false;
  }
  if (did_work && s.ok()) DeleteObsoleteFiles(state_);
}

absl::Status BackgroundWork::TrivialMove(Compaction* c) {
  const FileMetaData* f = c->input(0, 0);
  const uint64_t number = f->number;
  const uint64_t size = f->file_size;
  c->MakeTrivialMoveEdit();
  absl::Status s = state_.versions->LogAndApply(c->edit(), &state_.mutex);
  if (s.ok()) state_.InstallSuperVersion();
  state_.Log(absl::StrCat("moved table #", number, " (", size,
                          " bytes) to level ", c->output_level(), ": ",
                          s.ToString(), "; ", state_.versions->LevelSummary()));
  return s;
}

absl::Status BackgroundWork::RunCompactionJob(Compaction* c) {
  const SequenceNumber smallest_snapshot = state_.SmallestSnapshot();
  // The outputs' guards, kept until the edit naming them is applied.
  // Touched only under the mutex; declared before `job`, so they outlive it.
  std::vector<PendingOutput> outputs;
  auto new_file_number = [this, &outputs]() {
    MutexLock lock(&state_.mutex);
    outputs.push_back(state_.NewPendingOutput());
    return outputs.back().number();
  };
  CompactionJob job(state_.dbname, state_.options, &state_.icmp,
                    state_.table_cache.get(), c, smallest_snapshot,
                    new_file_number, &state_.shutting_down);
  job.SetInterleaveHook([this] { FlushIfWaiting(); });

  absl::Status s;
  {
    state_.mutex.Unlock();
    s = job.Run();
    if (s.ok() && !job.outputs().empty()) {
      // Make the outputs' directory entries durable before the MANIFEST
      // names them.
      s = state_.env->SyncDir(state_.dbname);
    }
    state_.mutex.Lock();
  }
  bool manifest_failed = false;
  if (s.ok()) {
    s = state_.versions->LogAndApply(c->edit(), &state_.mutex);
    manifest_failed = !s.ok();
    if (s.ok()) state_.InstallSuperVersion();
  }
  // Once applied, the outputs are live in the current version; a failed job
  // removed its own outputs: either way their guards go at the end of this
  // function. Only after a failed LogAndApply do they stay pending: the
  // abandoned MANIFEST may name them.
  if (manifest_failed) {
    for (PendingOutput& output : outputs) output.KeepPending();
  }
  const CompactionStats stats = job.stats();
  state_.level_stats[c->output_level()] += stats;
  state_.Log(absl::StrCat(
      "compacted level ", c->level(), " (", c->num_input_files(0), " files) + ",
      c->output_level(), " (", c->num_input_files(1), " files) into level ",
      c->output_level(), ": ", stats.bytes_read, " bytes in, ",
      stats.bytes_written, " bytes out in ", stats.output_files, " files, ",
      stats.entries_dropped, " entries dropped: ", s.ToString(), "; ",
      state_.versions->LevelSummary()));
  return s;
}

void BackgroundWork::FlushIfWaiting() {
  if (!state_.has_imm()) return;
  MutexLock lock(&state_.mutex);
  if (state_.imm() != nullptr && state_.bg_error.ok()) {
    // A compaction is running: level 0 only (see FlushImmutableMemTable).
    FlushImmutableMemTable(state_, /*pick_level=*/false)
        .IgnoreError();  // recorded as bg_error
  }
}

}  // namespace sift
