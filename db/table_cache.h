#ifndef SIFT_DB_TABLE_CACHE_H_
#define SIFT_DB_TABLE_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/dbformat.h"
#include "db/retired_memory.h"
#include "db/version_edit.h"
#include "sift/env.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/read_stats.h"
#include "table/table.h"
#include "table/table_options.h"
#include "util/cache.h"

namespace sift {

// Where a file stands in the reader's version, for the pinning policy of
// TableCache::GetTable.
struct TablePinHint {
  // The file is in the deepest non-empty level.
  bool last_level = false;
  // Files in the levels above the deepest non-empty one.
  size_t upper_level_tables = 0;
};

// Keeps up to `max_open_tables` tables open (file handle, index and filter in
// memory), least recently used first out. Tables are keyed by file number; a
// table is opened on first use and closed when evicted and no longer in use.
// The memory held by the filters and indexes of the open tables is tracked
// and reported (sift.filter-memory-bytes).
//
// Thread safety: safe for concurrent use by many threads.
class TableCache {
 public:
  // `icmp` and `block_cache` (nullable) are not owned and must outlive the
  // TableCache. `options` is copied; options.env must outlive it.
  // REQUIRES: max_open_tables >= 1, options.env != nullptr.
  TableCache(std::string dbname, const Options& options,
             const InternalKeyComparator* icmp, Cache* block_cache,
             int max_open_tables);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;
  // REQUIRES: no iterator from NewIterator and no TableRef is alive.
  ~TableCache();

  // The options tables of this database are written and read with: internal
  // keys ordered by `icmp`, filters over user keys (filter_key =
  // ExtractUserKey), block layout, compression and filter from `options`.
  static TableOptions MakeTableOptions(const Options& options,
                                       const InternalKeyComparator* icmp,
                                       Cache* block_cache);
  const TableOptions& table_options() const { return table_options_; }

  // An open table, pinned in the cache for as long as the TableRef lives.
  class TableRef {
   public:
    TableRef() = default;
    TableRef(TableRef&& other) noexcept;
    TableRef& operator=(TableRef&& other) noexcept;
    ~TableRef();

    // REQUIRES: *this came from FindTable (not default or moved-from).
    const Table& table() const;
    // False for a default-constructed or moved-from TableRef.
    bool valid() const { return handle_ != nullptr; }

   private:
    friend class TableCache;
    TableRef(Cache* cache, Cache::Handle* handle)
        : cache_(cache), handle_(handle) {}
    Cache* cache_ = nullptr;
    Cache::Handle* handle_ = nullptr;
  };

  // Open table file_number (of file_size bytes) or find it already open.
  // Errors: opening or validating the file (DataLossError for damage, naming
  // the file). A failed open is not cached: the next call tries again.
  absl::StatusOr<TableRef> FindTable(uint64_t file_number, uint64_t file_size);

  using PinHint = TablePinHint;

  // The open table of `file`, without a cache lookup once it is pinned in
  // file.pin. The first use opens (or finds) the table and pins it there if
  // the policy below allows; otherwise the table is found in the cache each
  // time and held by *ref. The table lives as long as `file` (or *ref).
  // Counts a table_loads in *stats (nullable) when the table had to be
  // opened. Errors as FindTable.
  //
  // Pinning policy: at most max_open_tables tables are pinned, and a pin
  // lasts as long as its file. A lookup consults the filter of a table in
  // every level above the last (and of each level-0 table covering the
  // key), and the last level holds most of the tables; so a table above
  // the last level pins while any place is free, a last-level table only
  // while places remain for all hint.upper_level_tables upper tables. When
  // the tree outgrows max_open_files, the tables opened, read and dropped
  // again (table_loads) are then last-level tables only.
  absl::StatusOr<const Table*> GetTable(const FileMetaData& file, TableRef* ref,
                                        PinHint hint = {},
                                        ReadStats* stats = nullptr);

  // Point lookup of `internal_key` in `file`'s table (see Table::Get),
  // through GetTable.
  absl::Status Get(
      const ReadOptions& options, const FileMetaData& file,
      std::string_view internal_key,
      absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
      ReadStats* stats);

  // Point lookup of `internal_key` in table file_number: see Table::Get.
  // `handle` is called with the first entry >= internal_key unless the
  // table's filter rules the user key out; filter and block counters go to
  // *stats (nullable).
  absl::Status Get(
      const ReadOptions& options, uint64_t file_number, uint64_t file_size,
      std::string_view internal_key,
      absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
      ReadStats* stats);

  // Iterator over table file_number; keeps the table open while it lives. If
  // the table cannot be opened, an empty iterator carrying the error. Under
  // Options::use_direct_reads an iterator with options.fill_cache false (a
  // compaction input) reads through a buffered table of its own instead of
  // the shared direct one, so the kernel reads ahead for it. When options'
  // bounds confine the scan to one prefix (ScanPrefix in db/scan_prefix.h)
  // and the table's prefix filter rules the prefix out, an empty iterator
  // (no block read). Block reads are counted into *stats as Table::NewIterator
  // says (nullptr: not counted). REQUIRES: the TableCache, and *stats, outlive
  // the iterator.
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options,
                                        uint64_t file_number,
                                        uint64_t file_size,
                                        ReadStats* stats = nullptr);

  // NewIterator over `file`'s table, as above, but a table pinned in
  // file.pin (GetTable) is used as it is: no cache lookup, no reference to
  // take and give back. With `pin_hint`, a table not pinned yet is found as
  // GetTable finds it, and pinned if its policy allows. REQUIRES: as above,
  // and `file` outlives the iterator (its pin may be what keeps the table
  // open).
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options,
                                        const FileMetaData& file,
                                        ReadStats* stats,
                                        const PinHint* pin_hint);

  // Table file_number if it is open right now, else a TableRef that is not
  // valid(). Does not open the table (but counts as a use for the LRU order).
  TableRef LookupOpenTable(uint64_t file_number) const;

  // Close table file_number once nobody uses it (its file is being deleted).
  void Evict(uint64_t file_number);

  // How many units of its modular filter (given the filter's header) a
  // table opened from now on keeps in memory, by file number
  // (Options::filter_memory_limit; unset: all). REQUIRES: not called
  // concurrently with opens (DB::Open sets it once, before recovery).
  void SetFilterUnitsAtOpen(
      std::function<uint32_t(uint64_t file_number, const ModularHeader&)>
          units);

  // If table file_number is open and has a modular filter, make `target`
  // of its units resident (at most all): units dropped are retired into
  // *retired, units loaded are read from the file and counted in
  // stats->filter_unit_loads (stats nullable), and the memory accounting
  // follows. With retired == nullptr it only loads: a table holding more
  // than `target` units keeps them. A table that is not open is left alone.
  // Errors: reading or checking a unit (DataLossError naming the file); the
  // units loaded before it stay. REQUIRES: calls serialized (one owner of
  // residency).
  absl::Status SetFilterUnits(uint64_t file_number, uint32_t target,
                              RetiredMemory* retired, ReadStats* stats);

  // Bytes of filters (indexes) held in memory by the currently open tables.
  size_t FilterMemoryUsage() const;
  size_t IndexMemoryUsage() const;
  // Tables currently open.
  size_t NumOpenTables() const;
  // Filter bytes of table file_number if it is open right now, else 0s. Does
  // not open the table (but counts as a use for the LRU order).
  struct FilterBytes {
    size_t total = 0;  // point and range filter
    size_t range = 0;  // the range filter's part of total
  };
  FilterBytes FilterMemoryUsageOf(uint64_t file_number) const;

  // Memory accounting shared with the cache entries: an entry's deleter
  // subtracts what its table added, even while the cache is being destroyed.
  struct Usage {
    std::atomic<size_t> filter_bytes{0};
    std::atomic<size_t> index_bytes{0};
    std::atomic<size_t> open_tables{0};
    std::atomic<size_t> pinned_tables{0};
  };

 private:
  // Open and validate table file_number with its file read as `mode` asks.
  absl::StatusOr<std::unique_ptr<Table>> OpenTableFile(
      uint64_t file_number, uint64_t file_size, RandomAccessMode mode) const;
  // FindTable; sets *opened (nullable) if the table had to be opened.
  absl::StatusOr<TableRef> FindOrOpen(uint64_t file_number, uint64_t file_size,
                                      bool* opened);

  const std::string dbname_;
  const size_t max_pinned_tables_;
  const RandomAccessMode read_mode_;
  Env* const env_;
  const Comparator* const user_comparator_;  // iteration bounds compare so
  const TableOptions table_options_;
  std::function<uint32_t(uint64_t, const ModularHeader&)> filter_units_at_open_;
  Usage usage_;  // declared before cache_: outlives the entries' deleters
  std::unique_ptr<Cache> cache_;
};

}  // namespace sift

#endif  // SIFT_DB_TABLE_CACHE_H_
