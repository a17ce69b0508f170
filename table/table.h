#ifndef SIFT_TABLE_TABLE_H_
#define SIFT_TABLE_TABLE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "filter/filter.h"
#include "sift/env.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/read_stats.h"
#include "table/format.h"
#include "table/table_options.h"

namespace sift {

struct TableProperties;
class AlignedWords;
class ModularBloomReader;
struct ModularHeader;

// An open, immutable table. The footer, index, filter and properties are read
// at Open and held in memory; data blocks are read on demand (one pread each)
// through the block cache.
//
// Thread safety: safe for concurrent use by many threads.
class Table {
 public:
  // Read and validate the table in `file` of `file_size` bytes. `file_name`
  // only labels errors. Damage: absl::DataLossError naming the file.
  // `options` is copied; options.block_cache (if any) must outlive the Table.
  // `filter_units` (nullable): given the header of a modular filter
  // (TableOptions::modular_filter), how many of its units to keep in memory
  // (LoadFilterUnit adds more later); without it, all.
  using FilterUnitsFn = std::function<uint32_t(const ModularHeader&)>;
  static absl::StatusOr<std::unique_ptr<Table>> Open(
      const TableOptions& options, std::unique_ptr<RandomAccessFile> file,
      uint64_t file_size, const std::string& file_name,
      const FilterUnitsFn& filter_units = nullptr);

  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  ~Table();

  // Point lookup. If the filter rules out filter_key(key), returns OK at once
  // with no I/O (counted as a filter negative) and does not call `handle`.
  // Otherwise finds the first entry >= key in one data block (see below) and,
  // if there is one, calls
  // handle(entry_key, entry_value), which returns true iff that entry answers
  // the lookup; a filter "maybe" followed by false (or no entry) is counted as
  // a false positive. The views passed to `handle` live only for the call.
  // At most one data block is read: the one whose index separator is the
  // first >= key, and only its entries are considered. So if key is after
  // that block's last entry (but not after its separator), `handle` is not
  // called although the next block holds entries > key. No entry sharing
  // key's filter_key is missed this way provided the comparator's
  // FindShortestSeparator either leaves the start key alone or returns a key
  // whose filter_key is before the limit's (true of the bytewise comparator,
  // and of an internal-key comparator that shortens only the user key).
  absl::Status Get(
      const ReadOptions& options, std::string_view key,
      absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
      ReadStats* stats) const;

  // Get in two steps, for a caller that probes several tables with one key
  // (Version::Get, MultiGet) and so hashes it once for all their filters.
  // REQUIRES: `filter_key` hashes what Get would give the filter for the
  // internal key: TableOptions::filter_key of it (the key itself when unset).
  //
  // FilterMayMatch: false when the filter rules the key out (counted in
  // stats->filter_negatives); true, counted as a filter positive, otherwise
  // and for a table without a filter (counted as nothing).
  // Inline: a lookup calls it for every table it meets.
  bool FilterMayMatch(FilterKeyHash* filter_key, ReadStats* stats) const {
    if (filter_ == nullptr) return true;
    return CountFilterAnswer(filter_->MayMatch(filter_key), stats);
  }
  // The same, finishing the probe LocateInFilter began.
  // REQUIRES: `located` is LocateInFilter(filter_key) of this table.
  bool FilterMayMatch(const FilterReader::Located& located,
                      FilterKeyHash* filter_key, ReadStats* stats) const {
    if (filter_ == nullptr) return true;
    return CountFilterAnswer(filter_->MayMatch(located, filter_key), stats);
  }
  // The rest of Get (index, data block, `handle`), once FilterMayMatch
  // answered true for `key`.
  absl::Status GetAfterFilter(
      const ReadOptions& options, std::string_view key,
      absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
      ReadStats* stats) const;

  // GetAfterFilter in three steps, so that a batch finds and prefetches
  // every lookup's data block before it searches any (the block's first
  // touch is a cache and TLB miss; a batch overlaps them).
  //
  // Where a lookup's block is: the handle its index entry holds (checked to
  // lie inside the data blocks) and where that entry is in the index.
  struct DataBlockLocation {
    BlockHandle handle;
    uint32_t index_entry_offset = 0;
    // The stored block in a mapped file, once PrefetchDataBlock has looked
    // it up (so the search does not read it a second time); else empty.
    std::string_view mapped;
    // The restart point of `mapped` where the key's scan starts, once
    // PrefetchDataBlockEntries has searched for it (so GetInDataBlock does
    // not search again); else std::nullopt.
    std::optional<uint32_t> restart;
  };
  // The index search for `key`: the block that may hold it, or std::nullopt
  // when key is after the table's last entry (counted as a filter false
  // positive when the table has a filter).
  absl::StatusOr<std::optional<DataBlockLocation>> FindDataBlock(
      std::string_view key, ReadStats* stats) const;
  // Start loading the parts of the block the search reads first (a mapped
  // file only; a hint, no I/O, no error), and keep the mapped block in
  // *location for GetInDataBlock.
  void PrefetchDataBlock(DataBlockLocation* location) const;
  // Then start loading the keys the block's restart search reads (a mapped
  // block with no compression; else nothing). Called after
  // PrefetchDataBlock, once the block's restart array had time to arrive.
  void PrefetchDataBlockKeys(const DataBlockLocation& location) const;
  // Then, once those keys had time to arrive, search the restart points for
  // `key`, keep the answer in location->restart and start loading the
  // entries the block search will scan.
  void PrefetchDataBlockEntries(DataBlockLocation* location,
                                std::string_view key) const;
  // The block search of GetAfterFilter at a location FindDataBlock gave for
  // the same key.
  absl::Status GetInDataBlock(
      const ReadOptions& options, const DataBlockLocation& location,
      std::string_view key,
      absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
      ReadStats* stats) const;

  // Find the filter memory FilterMayMatch will probe and start loading it
  // (FilterReader::Locate); a batch of lookups calls this for all its keys
  // first, and passes the result to FilterMayMatch. Same REQUIRES as
  // FilterMayMatch.
  FilterReader::Located LocateInFilter(FilterKeyHash* filter_key) const {
    if (filter_ == nullptr) return {};
    return filter_->Locate(filter_key);
  }

  // Iterator over all entries. Its data block reads and block cache hits
  // are added to stats->iterator_block_reads and iterator_block_cache_hits
  // (stats may be nullptr: not counted).
  // REQUIRES: the Table, and *stats, outlive it.
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options,
                                        ReadStats* stats = nullptr) const;

  // Offset in the file at which `key`'s data would begin (for sizing ranges).
  uint64_t ApproximateOffsetOf(std::string_view key) const;

  const TableProperties& properties() const;
  // nullptr if the table has no filter. (It may hold prefixes only, see
  // properties().whole_key_filtering; the point lookups above then read the
  // table as if it had none.)
  const FilterReader* filter() const;

  // The filter as a modular filter (TableOptions::modular_filter), or
  // nullptr when it is another kind or there is none.
  const ModularBloomReader* modular_filter() const;
  // Read the next unit of the modular filter from the file and make it
  // resident (counted in stats->filter_unit_loads, stats nullable). A short
  // read or a bad checksum: DataLossError naming the file, nothing changed.
  // REQUIRES: modular_filter() != nullptr with fewer than all its units
  // resident; calls to this and DropFilterUnit are serialized by the caller.
  absl::Status LoadFilterUnit(ReadStats* stats) const;
  // Stop consulting the last resident unit and hand over its memory, to be
  // freed once no probe that began before the call can still read it
  // (ModularBloomReader::DropLastUnit). REQUIRES: modular_filter() !=
  // nullptr with a unit resident; serialized as above.
  std::unique_ptr<AlignedWords> DropFilterUnit() const;

  // False when the table's prefix filter rules out every key starting with
  // `prefix`, `prefix` being TableOptions::prefix_extractor's Transform of
  // some key: the table was written with an extractor of the same Name(),
  // so its filter holds the prefix of each of its keys in the domain. True
  // (and nothing counted) for any other table. A filter answer is counted
  // in stats->prefix_filter_probes and prefix_filter_negatives.
  bool PrefixMayMatch(std::string_view prefix, ReadStats* stats) const;

  // False when the table's range filter rules out every filter key k with
  // *lower <= k < *upper (std::nullopt: that side open), the bounds being
  // filter keys (TableOptions::filter_key's images). True for a table
  // without a range filter (nothing counted); an answer of the filter is
  // counted in stats->range_filter_probes and range_filter_negatives.
  bool RangeMayMatch(std::optional<std::string_view> lower,
                     std::optional<std::string_view> upper,
                     ReadStats* stats) const;
  bool has_range_filter() const;
  // Bytes held in memory for the filters, point and range (0 if none).
  size_t FilterMemoryUsage() const;
  // The range filter's share of FilterMemoryUsage() (0 if none).
  size_t RangeFilterMemoryUsage() const;
  // Bytes held in memory for the index block and its order words.
  size_t IndexMemoryUsage() const;

  // What the table holds; defined in table/table_rep.h, for table/ alone.
  struct Rep;

 private:
  explicit Table(std::unique_ptr<Rep> rep);
  static bool CountFilterAnswer(bool may_match, ReadStats* stats) {
    ++(may_match ? stats->filter_positives : stats->filter_negatives);
    return may_match;
  }

  std::unique_ptr<Rep> rep_;
  // rep_->filter if it holds whole keys (else nullptr), held here so that
  // the point lookups' filter calls above inline without reaching into Rep.
  // Never changes after construction.
  const FilterReader* const filter_;
  // rep_->filter if it holds prefixes of the extractor in rep_->options.
  const FilterReader* const prefix_filter_;
};

}  // namespace sift

#endif  // SIFT_TABLE_TABLE_H_
