#ifndef SIFT_DB_VERSION_H_
#define SIFT_DB_VERSION_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "db/dbformat.h"
#include "db/level_bounds.h"
#include "db/level_iterator.h"
#include "db/retired_memory.h"
#include "db/table_cache.h"
#include "db/version_edit.h"
#include "filter/filter.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/read_stats.h"
#include "table/iterators.h"

namespace sift {

// Index of the first file in `files` whose largest key is >= internal_key
// (files.size() if none). REQUIRES: `files` is sorted by key range and the
// ranges do not overlap (a level >= 1).
size_t FindFile(const InternalKeyComparator& icmp, const FileList& files,
                std::string_view internal_key);

// True if some file in `files` overlaps the user-key range
// [*smallest_user_key, *largest_user_key]; nullptr means an open end.
// `disjoint_sorted_files`: `files` is a level >= 1 (binary search) rather
// than level 0 (every file checked).
bool SomeFileOverlapsRange(const InternalKeyComparator& icmp,
                           bool disjoint_sorted_files, const FileList& files,
                           const std::string_view* smallest_user_key,
                           const std::string_view* largest_user_key);

// An iterator over the concatenation of the tables in `files` (a level >= 1,
// sorted and disjoint) that overlap options' iteration bounds; the others
// are never opened. Tables are opened lazily through `table_cache`, and with
// `deferred` (nullable) a position at a table's first key opens it only when
// used (db/level_iterator.h). Block reads are counted into *stats (nullable)
// as Table::NewIterator says. REQUIRES: `files` (not copied), `table_cache`,
// `icmp`, *stats and *deferred outlive the iterator, and so do the bounds'
// bytes.
// `pin_hint` and `bounds`: as NewLevelIterator's.
std::unique_ptr<Iterator> NewFileListIterator(
    TableCache* table_cache, const InternalKeyComparator* icmp,
    const ReadOptions& options, const FileList& files,
    ReadStats* stats = nullptr, DeferredPositions* deferred = nullptr,
    std::optional<TablePinHint> pin_hint = std::nullopt,
    const LevelBounds* bounds = nullptr);

// The set of tables making up the database at one point: per level, the files
// in it. Level 0 files may overlap each other and are kept in the order they
// were added (file number ascending); files of a level >= 1 are sorted by key
// and disjoint.
//
// A Version is immutable once the VersionSet installs it, and is shared as
// std::shared_ptr<const Version>: a reader or iterator holds one for as long
// as it reads, and the VersionSet reports the files of every version still
// held as live (AddLiveFiles), so their tables stay on disk.
//
// Thread safety: an installed Version is safe for concurrent use.
class Version {
 public:
  // `table_cache` and `icmp` are not owned and must outlive the Version.
  // `max_file_size` sizes the grandparent-overlap limit of
  // PickLevelForMemTableOutput; `level1_max_bytes` is level 1's target
  // (Level1MaxBytes).
  Version(TableCache* table_cache, const InternalKeyComparator* icmp,
          uint64_t max_file_size, double level1_max_bytes);
  Version(const Version&) = delete;
  Version& operator=(const Version&) = delete;

  // The bytes level >= 1 may hold before it needs compaction.
  double LevelTargetBytes(int level) const;

  // Look up key.user_key() as of key's sequence: level-0 tables whose range
  // covers the key, newest first, then at most one table per level >= 1,
  // found by binary search on the largest keys. The first table holding an
  // entry for the user key answers. Counts tables_probed (one per table whose
  // range covers the key) into *stats (nullable); the table layer counts the
  // filter and block counters.
  // Returns OK with *value set, NotFound if the newest entry is a deletion or
  // there is none, or the error met reading a table.
  absl::Status Get(const ReadOptions& options, const LookupKey& key,
                   std::string* value, ReadStats* stats) const;
  // As above, with the filter hash of key.user_key() shared with the
  // memtables' filters. REQUIRES: `filter_key` hashes key.user_key().
  absl::Status Get(const ReadOptions& options, const LookupKey& key,
                   FilterKeyHash* filter_key, std::string* value,
                   ReadStats* stats) const;

  // A batch of up to this many lookups keeps its per-key state on the stack
  // (DBImpl::MultiGet and MultiGet below), about 11 KiB of it; a larger one
  // on the heap.
  static constexpr size_t kInlineBatch = 32;

  // One key of a batched lookup (MultiGet).
  struct BatchLookup {
    const LookupKey* key;
    FilterKeyHash* filter_key;  // hashes key->user_key()
    std::string* value;         // set when found
    absl::Status* status;       // set when done: as Get would return
    bool done = false;          // answered (by a memtable, or here)
  };

  // Get for every lookup not yet done, as if each were a Get at its key's
  // sequence: sets *status (and *value), marks it done. REQUIRES: `lookups`
  // sorted by user key (the user comparator's order), and every lookup key
  // built with the same sequence (a batch reads one view). The lookups go down
  // the tree together: for each level-0 table (newest first) and each deeper
  // level, the filter lines of every lookup still open are prefetched before
  // any is probed. Counters go to *stats (nullable) per key, as Get counts
  // them.
  void MultiGet(const ReadOptions& options, absl::Span<BatchLookup> lookups,
                ReadStats* stats) const;

  // Append iterators that together yield every entry of this version inside
  // options' iteration bounds (and maybe some outside them): one per level-0
  // table that overlaps the bounds and one concatenating iterator per
  // non-empty level >= 1, which opens only tables that overlap them.
  // REQUIRES: this Version (held by the caller) outlives the iterators.
  // Their block reads are counted into *stats (nullable, outlives them).
  // With `deferred` (nullable, outlives them) the level iterators take
  // deferred positions and report them there (db/level_iterator.h); the
  // caller must then read the value of every entry it yields while
  // deferred->count > 0 and check deferred->error.
  void AddIterators(const ReadOptions& options, IteratorList* iters,
                    ReadStats* stats = nullptr,
                    DeferredPositions* deferred = nullptr) const;

  // A table whose seek budget an iterator seek just spent (RecordSeek).
  struct SeekCharge {
    int level = -1;
    std::shared_ptr<const FileMetaData> file;
  };

  // Charges an iterator's seek to `internal_key` (as DBIter seeks) to the
  // first table a point read would probe for its user key (the newest
  // level-0 table holding it in range, else the shallowest level's), if at
  // least one more run below holds it in range too: the seek read a block
  // of each. Returns the table when its budget is spent (SeekBudget), for
  // the caller to ask for its compaction (VersionSet::RequestSeekCompaction).
  std::optional<SeekCharge> RecordSeek(std::string_view internal_key) const;

  // REQUIRES: 0 <= level < config::kNumLevels
  int NumFiles(int level) const {
    return static_cast<int>(files_[level].size());
  }
  // REQUIRES: 0 <= level < config::kNumLevels
  const FileList& files(int level) const { return files_[level]; }
  int64_t NumLevelBytes(int level) const;

  // True if some file of `level` overlaps the user-key range; nullptr means
  // an open end.
  bool OverlapInLevel(int level, const std::string_view* smallest_user_key,
                      const std::string_view* largest_user_key) const;

  // The level a flushed memtable covering [smallest_user_key,
  // largest_user_key] should go to: 0 if it overlaps level 0, otherwise the
  // deepest level up to config::kMaxMemCompactLevel that it can be placed in
  // without overlapping that level or the next one and without overlapping
  // too many bytes two levels down.
  int PickLevelForMemTableOutput(std::string_view smallest_user_key,
                                 std::string_view largest_user_key) const;

  // The files of `level` overlapping the user-key range of [begin, end]
  // (nullptr: open end). For level 0 the range grows to cover every file
  // that overlaps a file already chosen, so that a compaction never leaves an
  // older version of a key behind in level 0.
  void GetOverlappingInputs(int level, const InternalKey* begin,
                            const InternalKey* end, FileList* inputs) const;

  // The level most in need of compaction and its score (>= 1: needs it).
  int compaction_level() const { return compaction_level_; }
  double compaction_score() const { return compaction_score_; }

  // One line per non-empty level: its files with number, size and range.
  std::string DebugString() const;

  // Where memory that readers of this version (or an older one) may still
  // use is retired (db/retired_memory.h): freed once no such reader is left.
  RetiredMemory& retired() const { return *retired_; }

 private:
  friend class VersionSet;

  // Where a table of `level` stands in this version, for the table cache's
  // pinning policy (TableCache::GetTable).
  TableCache::PinHint PinHintFor(int level) const;

  // The open table of `f` (of `level`): its pin, one atomic load, when it
  // has one (nearly every probe), else TableCache::GetTable, which may pin
  // it or leave it held by *ref.
  absl::StatusOr<const Table*> TableFor(const FileMetaData& f, int level,
                                        TableCache::TableRef* ref,
                                        ReadStats* stats) const;

  // Computes compaction_level_/score_ and bounds_. Called once before
  // installing.
  void Finalize();

  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  const uint64_t max_file_size_;
  const double level1_max_bytes_;
  std::array<FileList, config::kNumLevels> files_;
  // Of each level (built by Finalize): the range tests and searches of Get
  // and MultiGet, when usable.
  std::array<LevelBounds, config::kNumLevels> bounds_;
  int compaction_level_ = -1;
  double compaction_score_ = -1;
  // Linked to the next installed version's by VersionSet::AppendVersion.
  const std::shared_ptr<RetiredMemory> retired_ =
      std::make_shared<RetiredMemory>();
};

// Level 1's target for memtables of `write_buffer_size` bytes: 2.5 memtables'
// worth (the ratio of the default 10 MiB to the default 4 MiB memtable), at
// least kLevel1MaxBytes. A fixed 10 MiB under 64 MiB memtables is over its
// target after every level-0 compaction, so each flush is pushed on into
// level 2 at once, and level 2 into level 3 sooner.
double Level1MaxBytes(uint64_t write_buffer_size);
// Bytes a level >= 1 may hold before it needs compaction: `level1_bytes` at
// level 1, 10x more per level below.
double MaxBytesForLevel(int level, double level1_bytes);

// The most bytes of grandparent (level + 2) data one compaction output, a
// trivial move or a flushed table placed below level 0 may overlap: about ten
// output files' worth, so that compacting it later stays cheap.
inline uint64_t MaxGrandParentOverlapBytes(uint64_t max_file_size) {
  return 10 * max_file_size;
}

}  // namespace sift

#endif  // SIFT_DB_VERSION_H_
