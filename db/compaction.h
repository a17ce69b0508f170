#ifndef SIFT_DB_COMPACTION_H_
#define SIFT_DB_COMPACTION_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/dbformat.h"
#include "db/version.h"
#include "db/version_edit.h"

namespace sift {

// One compaction: the files of `level` (inputs 0) and the overlapping files of
// level + 1 (inputs 1) to be merged into new files of the output level,
// level + 1. Made by VersionSet::PickCompaction or VersionSet::CompactRange;
// holds the version it was picked from, so its input files stay live until
// it is destroyed.
//
// One kind has output level == level: the rewrite in place of the bottom of
// a manual compaction's range (VersionSet::CompactRangeToBottom), whose
// inputs 1 are empty.
//
// Thread safety: not safe for concurrent use; one compaction belongs to the
// background thread that runs it.
class Compaction {
 public:
  Compaction(const Compaction&) = delete;
  Compaction& operator=(const Compaction&) = delete;

  // The level being compacted.
  int level() const { return level_; }
  // Where the outputs go: level() + 1, or level() for a rewrite in place.
  int output_level() const { return output_level_; }

  // The edit this compaction will apply: the VersionSet puts the new compact
  // pointer in it; the compaction adds input deletions and outputs.
  VersionEdit* edit() { return &edit_; }

  // which: 0 for `level`, 1 for `level + 1` (empty for a rewrite in place).
  int num_input_files(int which) const {
    return static_cast<int>(inputs_[which].size());
  }
  const FileMetaData* input(int which, int i) const {
    return inputs_[which][i].get();
  }
  const FileList& inputs(int which) const { return inputs_[which]; }
  const std::shared_ptr<const Version>& input_version() const {
    return input_version_;
  }

  // Largest size of one output file.
  uint64_t MaxOutputFileSize() const { return max_output_file_size_; }

  // True if the compaction is a single file with nothing to merge with in
  // level + 1 and little overlap in level + 2: it can move down by an edit
  // alone (MakeTrivialMoveEdit), without rewriting the file. Never true for a
  // rewrite in place.
  bool IsTrivialMove() const;
  // Fill edit() for a trivial move: the input leaves `level` and joins
  // `level + 1` unchanged. REQUIRES: IsTrivialMove().
  void MakeTrivialMoveEdit();

  // Add the deletion of every input file to *edit.
  void AddInputDeletions(VersionEdit* edit) const;

  // True if no level below the output level holds user_key, so a deletion
  // marker of it has nothing left to hide once compacted into the output
  // level.
  // REQUIRES: successive calls pass non-decreasing user keys.
  bool IsBaseLevelForKey(std::string_view user_key);

  // True if the output file being built should end before internal_key
  // because it already overlaps too many grandparent (output level + 1)
  // bytes.
  // REQUIRES: successive calls pass increasing internal keys.
  bool ShouldStopBefore(std::string_view internal_key);

  // True if user_key lies in a different stretch of the input files' key
  // space than the previous key passed (the input files' ranges, merged where
  // they overlap, form one or more disjoint stretches). An output that ends
  // at such a step never spans a gap between inputs, where a table flushed
  // meanwhile may have been placed (it overlaps no input). Always false for
  // a compaction made by VersionSet::CompactRangeToBottom: merging small
  // tables across such gaps is its purpose, and its caller keeps new tables
  // out of its output level while it runs.
  // REQUIRES: successive calls pass increasing user keys.
  bool CrossesInputGap(std::string_view user_key);

  // Total bytes of the input files.
  uint64_t TotalInputBytes() const;

 private:
  friend class VersionSet;

  Compaction(int level, int output_level,
             std::shared_ptr<const Version> input_version,
             const InternalKeyComparator* icmp, uint64_t max_file_size);

  const int level_;
  const int output_level_;
  const std::shared_ptr<const Version> input_version_;
  const InternalKeyComparator* const icmp_;
  const uint64_t max_output_file_size_;
  VersionEdit edit_;
  std::array<FileList, 2> inputs_;
  FileList grandparents_;  // files of output level + 1 overlapping the inputs
  // False for VersionSet::CompactRangeToBottom (see CrossesInputGap).
  bool cut_at_input_gaps_ = true;

  // ShouldStopBefore state: the grandparent files passed so far and their
  // bytes counted against the current output.
  size_t grandparent_index_ = 0;
  bool seen_key_ = false;
  uint64_t overlapped_bytes_ = 0;

  // IsBaseLevelForKey state: per level, the first file whose largest key may
  // still be >= the keys to come.
  std::array<size_t, config::kNumLevels> level_ptrs_{};

  // CrossesInputGap state: the merged user-key ranges of all inputs, in
  // order (built on first use), and the one the last key fell in.
  std::vector<std::pair<std::string, std::string>> input_ranges_;
  size_t input_range_index_ = 0;
  bool input_ranges_built_ = false;
};

}  // namespace sift

#endif  // SIFT_DB_COMPACTION_H_
