#ifndef SIFT_DB_COMPACTION_JOB_H_
#define SIFT_DB_COMPACTION_JOB_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "db/compaction.h"
#include "db/dbformat.h"
#include "db/table_cache.h"
#include "db/version_edit.h"
#include "sift/env.h"
#include "sift/options.h"
#include "table/table_builder.h"
#include "table/table_options.h"

namespace sift {

// What one compaction (or flush) did, for sift.stats.
struct CompactionStats {
  uint64_t micros = 0;
  uint64_t bytes_read = 0;     // bytes of the input files
  uint64_t bytes_written = 0;  // bytes of the output files
  uint64_t input_files = 0;
  uint64_t output_files = 0;
  uint64_t entries_read = 0;
  uint64_t entries_dropped = 0;  // hidden entries and obsolete deletions

  CompactionStats& operator+=(const CompactionStats& o) {
    micros += o.micros;
    bytes_read += o.bytes_read;
    bytes_written += o.bytes_written;
    input_files += o.input_files;
    output_files += o.output_files;
    entries_read += o.entries_read;
    entries_dropped += o.entries_dropped;
    return *this;
  }
};

// Runs one compaction that rewrites its inputs (for a trivial move, see
// Compaction::MakeTrivialMoveEdit): merges the input tables and writes the
// surviving entries to new tables of the output level.
//
// Which entries survive: for each user key, the newest entry, plus each older
// entry that some snapshot may still read (an entry is dropped when a newer
// entry of the same user key has a sequence <= smallest_snapshot). A deletion
// marker with sequence <= smallest_snapshot is dropped too when no deeper
// level holds its user key (Compaction::IsBaseLevelForKey).
//
// Outputs end at MaxOutputFileSize(), where they would overlap too much of
// the level below the output, and where the keys step over a gap between
// input files (Compaction::CrossesInputGap: so that a table flushed below
// level 0 while the job runs, which overlaps no input, overlaps no output
// either); never between two entries of the same user key
// (so a user key lives in one file per level). Each output is synced, closed,
// and opened once through the table cache to check it.
//
// Thread safety: Run runs without the DB mutex; `new_file_number` is called
// from Run and must take whatever lock the VersionSet needs. One job per
// Compaction.
class CompactionJob {
 public:
  // Not owned, must outlive the job: icmp, table_cache, compaction,
  // shutting_down (nullable). `options` is copied. REQUIRES: options.env !=
  // nullptr.
  CompactionJob(const std::string& dbname, const Options& options,
                const InternalKeyComparator* icmp, TableCache* table_cache,
                Compaction* compaction, SequenceNumber smallest_snapshot,
                std::function<uint64_t()> new_file_number,
                const std::atomic<bool>* shutting_down);
  CompactionJob(const CompactionJob&) = delete;
  CompactionJob& operator=(const CompactionJob&) = delete;
  ~CompactionJob();

  // Optional: called between input entries, without any lock, so that the
  // caller can do urgent work (flush an immutable memtable) during a long
  // compaction. Must be cheap when there is nothing to do.
  void SetInterleaveHook(std::function<void()> hook) {
    interleave_hook_ = std::move(hook);
  }

  // Do the work. On success, compaction->edit() holds the deletion of every
  // input and the addition of every output at the output level (the caller
  // runs LogAndApply). On failure (an input or output error, or *shutting_down
  // seen: absl::AbortedError) the output files written so far are removed
  // and the edit is left untouched.
  absl::Status Run();

  const std::vector<FileMetaData>& outputs() const { return outputs_; }
  CompactionStats stats() const { return stats_; }

 private:
  // The merge loop over the inputs; stops at the first error.
  absl::Status ProcessInput(Iterator* input);
  // The merge reached the first entry of `user_key`: end the current output
  // if a cut is due.
  absl::Status StartUserKey(std::string_view user_key);
  // True if nobody can read the entry (the rules in the class comment).
  // Records its sequence as the last seen of its user key.
  bool DropEntry(const ParsedInternalKey& ikey);
  // Append the entry to the current output, opening one if there is none.
  absl::Status AddToOutput(std::string_view key, std::string_view value);
  absl::Status OpenOutput();
  // Finish the current output; `input_status` is the merge iterator's status.
  absl::Status FinishOutput(const absl::Status& input_status);
  void RemoveOutputs();
  std::unique_ptr<Iterator> MakeInputIterator();

  const std::string dbname_;
  const Options options_;
  Env* const env_;
  const InternalKeyComparator* const icmp_;
  TableCache* const table_cache_;
  Compaction* const compaction_;
  const SequenceNumber smallest_snapshot_;
  const std::function<uint64_t()> new_file_number_;
  const std::atomic<bool>* const shutting_down_;
  // The table cache's options with the outputs' filter size (all outputs of
  // one job go to one level and share it; see filter_allocation.h).
  const TableOptions table_options_;
  std::function<void()> interleave_hook_;

  // The output being written, if any.
  std::unique_ptr<WritableFile> outfile_;
  std::unique_ptr<TableBuilder> builder_;
  std::vector<FileMetaData> outputs_;  // the last one is being written
  CompactionStats stats_;

  // The user key of the entries being read, and the sequence of the last
  // (newer) entry of it seen, if any.
  std::string current_user_key_;
  bool has_current_user_key_ = false;
  std::optional<SequenceNumber> last_sequence_for_key_;
  // The grandparent limit asked for a cut, which waits for the next user key.
  bool cut_pending_ = false;
};

}  // namespace sift

#endif  // SIFT_DB_COMPACTION_JOB_H_
