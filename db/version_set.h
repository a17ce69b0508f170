#ifndef SIFT_DB_VERSION_SET_H_
#define SIFT_DB_VERSION_SET_H_

// The version set: the current Version of the database, the counters that go
// with it (next file number, last sequence, live log numbers) and the MANIFEST
// that records every change to them (doc/manifest_format.md).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/compaction.h"
#include "db/dbformat.h"
#include "db/log_writer.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "db/version_edit.h"
#include "sift/env.h"
#include "sift/options.h"
#include "util/mutex.h"

namespace sift {

// Thread safety: external synchronization. Callers hold the DB mutex (a
// sift::Mutex, util/mutex.h) for
// every call; LogAndApply releases it while it writes the MANIFEST. Only one
// LogAndApply runs at a time (the DB calls it from Open, from its single
// background thread, and from an ingestion while that thread is paused).
//
// Opening:
//   - an existing database: Recover(), then LogAndApply of the recovery edit
//     (which starts a new MANIFEST holding the whole state);
//   - a new database: no Recover(); the first LogAndApply creates the first
//     MANIFEST and CURRENT.
class VersionSet {
 public:
  // `options`, `table_cache` and `icmp` are not owned and must outlive the
  // VersionSet and every Version it hands out. REQUIRES: options->env !=
  // nullptr.
  VersionSet(std::string dbname, const Options* options,
             TableCache* table_cache, const InternalKeyComparator* icmp);
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;
  ~VersionSet();

  // Apply *edit to the current version, log it to the MANIFEST and install
  // the result as current. Fills in the edit's log number (if unset), next
  // file number and last sequence (if unset) from this VersionSet. An edit
  // that sets its last sequence (REQUIRES: >= LastSequence(), and no write
  // may advance LastSequence() meanwhile) makes it LastSequence() together
  // with the new version, under *mu: until then no snapshot or read is
  // numbered at it.
  // When no MANIFEST is open (after Recover, on a new database, or after a
  // failed write) a new MANIFEST is started with a record of the whole state
  // and CURRENT is pointed at it.
  //
  // On error nothing changes: the current version and the counters stay as
  // they were and the MANIFEST in use is abandoned, so the next LogAndApply
  // starts a fresh one. The abandoned MANIFEST may still hold the failed
  // record, so files the edit adds must not be deleted while CURRENT may
  // point at it.
  //
  // REQUIRES: *mu held on entry; it is released while writing and syncing
  // the MANIFEST and held again on return. No other LogAndApply running.
  absl::Status LogAndApply(VersionEdit* edit, Mutex* mu)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Load the state named by CURRENT. A missing, empty or damaged CURRENT,
  // a missing or damaged MANIFEST, or one lacking the comparator, log number,
  // next file number or last sequence is absl::DataLossError naming the file:
  // never an empty database. A comparator other than icmp's user comparator
  // is absl::InvalidArgumentError. The caller must LogAndApply before
  // writing, which starts a new MANIFEST (the old one may end in a damaged
  // tail, never to be appended to).
  absl::Status Recover();

  // The installed version. Hold the result for as long as you read from it.
  std::shared_ptr<const Version> current() const { return current_; }

  // A new, never used file number.
  uint64_t NewFileNumber() { return next_file_number_++; }
  // Make sure NewFileNumber never returns `number` (a file found on disk).
  void MarkFileNumberUsed(uint64_t number);
  // Give back `number` if it is the last one NewFileNumber returned and it
  // was never used.
  void ReuseFileNumber(uint64_t number);

  uint64_t ManifestFileNumber() const { return manifest_file_number_; }
  // The MANIFEST's first ManifestFileSize() bytes are the records that make
  // current() (what a checkpoint copies); a record being written by a
  // LogAndApply under way, or left by a failed one, lies beyond them.
  uint64_t ManifestFileSize() const { return manifest_file_size_; }
  // Logs with numbers below LogNumber() are no longer needed: their contents
  // are in tables.
  uint64_t LogNumber() const { return log_number_; }
  // Needs no lock: the write path publishes the sequence of a group's last
  // write (release) only after the group is in the memtable, so a reader
  // that loads it (acquire) sees every entry up to it.
  SequenceNumber LastSequence() const {
    return last_sequence_.load(std::memory_order_acquire);
  }
  // REQUIRES: s >= LastSequence()
  void SetLastSequence(SequenceNumber s);

  int NumLevelFiles(int level) const;
  int64_t NumLevelBytes(int level) const;

  // True if some level is past its size (level 0: file count) target, or a
  // seek compaction is pending.
  bool NeedsCompaction() const;

  // Asks for the compaction of `charge.file` into the level below, whose
  // seek budget iterator seeks spent (Version::RecordSeek). It runs when no
  // level is over its size target; dropped if the file leaves
  // `charge.level` first. One request is kept at a time: while one is
  // pending, others are ignored (their files' later seeks ask again).
  void RequestSeekCompaction(Version::SeekCharge charge);
  // Whether a seek compaction is pending. Needs no lock: a hint that lets
  // seeks skip taking the DB mutex for a request that would be ignored.
  bool SeekCompactionPending() const {
    return seek_compaction_pending_.load(std::memory_order_relaxed);
  }

  // The next compaction to run, or nullptr if no level needs one. Levels
  // are compacted round-robin through their key space (compact pointers).
  // A compaction of a level >= 1 starts at the compact pointer and takes the
  // following files too, as many as bring the level back to its target,
  // while each overlaps the level below and the inputs of both levels stay
  // within 25 table sizes. With every level within its target, the pending
  // seek compaction (RequestSeekCompaction), if any: its file and what
  // overlaps it in the next level.
  std::unique_ptr<Compaction> PickCompaction();

  // A compaction of the files of `level` overlapping [begin, end] (nullptr:
  // open end) into level + 1, or nullptr if no file overlaps.
  // REQUIRES: 0 <= level < config::kNumLevels - 1
  std::unique_ptr<Compaction> CompactRange(int level, const InternalKey* begin,
                                           const InternalKey* end);

  // The last step of a manual compaction of [begin, end], for which
  // level + 1 is the deepest level holding data in the range: every file of
  // level + 1 in the range is rewritten, merged with the files of `level`
  // overlapping the range if there are any (else rewritten in place, at
  // level + 1). So all of the range's data ends merged at the bottom, where
  // deletion markers with nothing below them are dropped. nullptr if neither
  // level has a file in the range. The outputs are not cut at gaps between
  // inputs (see Compaction::CrossesInputGap).
  // REQUIRES: 0 <= level < config::kNumLevels - 1; no table is added to
  // level + 1 while the compaction runs (the DB flushes only to level 0
  // while any compaction job runs).
  std::unique_ptr<Compaction> CompactRangeToBottom(int level,
                                                   const InternalKey* begin,
                                                   const InternalKey* end);

  // Add the numbers of the table files of every version still referenced
  // (the current one and any a reader or compaction still holds) to *live.
  void AddLiveFiles(std::set<uint64_t>* live) const;

  // "files[ n0 n1 ... ]": the number of files per level.
  std::string LevelSummary() const;

 private:
  class Builder;
  struct ManifestState;

  // Recover's steps: the number of the MANIFEST that CURRENT names; the
  // MANIFEST's records applied to *builder and *state in order.
  absl::StatusOr<uint64_t> ReadCurrentFile() const;
  absl::Status ReplayManifest(const std::string& manifest_name,
                              Builder* builder, ManifestState* state) const;

  // The MANIFEST record that describes the whole current state: comparator,
  // counters, compact pointers and every file. The head of each new MANIFEST.
  std::string EncodeSnapshot() const;
  // An empty version under this set's options (its level targets).
  std::shared_ptr<Version> NewVersion() const;
  void AppendVersion(std::shared_ptr<Version> v);
  void SetupOtherInputs(Compaction* c);
  // Adds to c's inputs the files of its level (>= 1) after files[first], the
  // one chosen, as described at PickCompaction.
  void TakeLevelExcess(Compaction* c, size_t first);
  // The pending seek compaction, taken (nullptr if none).
  std::unique_ptr<Compaction> PickSeekCompaction();
  // The level + 2 files overlapping [start, limit] become c's grandparents;
  // the compaction of c's level resumes after `largest` next time.
  void SetupGrandparentsAndPointer(Compaction* c, const InternalKey& start,
                                   const InternalKey& limit,
                                   const InternalKey& largest);
  std::unique_ptr<Compaction> NewCompaction(int level, int output_level);

  const std::string dbname_;
  const Options* const options_;
  Env* const env_;
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;

  uint64_t next_file_number_ = 2;
  uint64_t manifest_file_number_ = 0;
  uint64_t manifest_file_size_ = 0;
  std::atomic<SequenceNumber> last_sequence_{0};
  uint64_t log_number_ = 0;

  // The open MANIFEST; both null until the first LogAndApply after Recover,
  // or after a failed write.
  std::unique_ptr<WritableFile> descriptor_file_;
  std::unique_ptr<log::Writer> descriptor_log_;

  std::shared_ptr<const Version> current_;
  // Every version installed so far that may still be referenced; expired
  // entries are pruned by AppendVersion.
  std::vector<std::weak_ptr<const Version>> versions_;

  // Per level, the largest internal key of the last compaction there (empty:
  // start from the beginning): where the next compaction of the level starts.
  std::array<InternalKey, config::kNumLevels> compact_pointer_;

  // The pending seek compaction: a file of current_ at that level, or none
  // (file null). AppendVersion drops it when the file leaves the level.
  Version::SeekCharge seek_compaction_;
  // seek_compaction_.file != nullptr, for readers without the lock.
  std::atomic<bool> seek_compaction_pending_{false};
};

}  // namespace sift

#endif  // SIFT_DB_VERSION_SET_H_
