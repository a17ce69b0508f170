#ifndef SIFT_TABLE_TABLE_REP_H_
#define SIFT_TABLE_TABLE_REP_H_

// What an open Table holds, shared by the point-read path (table.cc) and the
// table iterator (table_iterator.cc). Internal to table/.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "filter/filter.h"
#include "filter/modular_bloom.h"
#include "filter/range_filter.h"
#include "sift/env.h"
#include "sift/options.h"
#include "sift/read_stats.h"
#include "table/block.h"
#include "table/format.h"
#include "table/range_filter_key.h"
#include "table/readahead.h"
#include "table/table.h"
#include "table/table_options.h"
#include "table/table_properties.h"

namespace sift {

struct Table::Rep {
  TableOptions options;
  std::unique_ptr<RandomAccessFile> file;
  std::string file_name;
  uint64_t file_size = 0;
  uint64_t cache_id = 0;
  // Data blocks occupy [0, data_end); the meta blocks and footer follow.
  uint64_t data_end = 0;
  TableProperties properties;
  std::unique_ptr<Block> index;
  // When every index entry is a restart point (as the builder writes them)
  // and the comparator orders a part of each key bytewise first
  // (Comparator::BytewisePart): the bytes every index key's part but perhaps
  // the last's starts with (the common prefix of the first and the one
  // before the last), and the word (BytewiseOrderWord) of each index key's
  // part after that prefix, in order; the last key's word is the largest
  // there is when its part lacks the prefix (it then sorts after every part
  // that has it). Else both empty. A search narrows
  // to the entries whose word ties the target's in this array, in memory,
  // instead of a binary search whose every step reads a key out of the
  // index block.
  std::string index_prefix;
  std::vector<uint64_t> index_words;
  std::unique_ptr<FilterReader> filter;  // nullptr: no filter
  // filter.get() when it is a modular filter (filter/modular_bloom.h).
  const ModularBloomReader* modular = nullptr;
  // Where the filter block starts in the file (its units are read from
  // there).
  uint64_t filter_offset = 0;
  // nullptr: no range filter; else with the map of this table's keys.
  std::unique_ptr<RangeFilterReader> range_filter;
  std::optional<RangeFilterKeyMap> range_key_map;
  // file->StableReads(): uncompressed data blocks are used in place.
  bool stable_reads = false;
  // For stable reads: bit i set once the data block named by the index
  // entry at offset 4i of the index block has passed its checksum (raw
  // blocks used in place and compressed ones decoded from the map alike). Index
  // entries (three lengths and a block handle) are at least five bytes
  // long, so no two share a bit. Set bits are never cleared: the mapped
  // file is immutable, so a block is verified once per open table.
  std::unique_ptr<std::atomic<uint64_t>[]> verified;

  bool IsVerified(uint32_t index_entry_offset) const {
    const uint32_t bit = index_entry_offset / 4;
    return (verified[bit / 64].load(std::memory_order_relaxed) >> (bit % 64)) &
           1;
  }
  void MarkVerified(uint32_t index_entry_offset) const {
    const uint32_t bit = index_entry_offset / 4;
    verified[bit / 64].fetch_or(uint64_t{1} << (bit % 64),
                                std::memory_order_relaxed);
  }

  std::string_view FilterKey(std::string_view key) const {
    return options.filter_key != nullptr ? options.filter_key(key) : key;
  }

  absl::Status Corruption(std::string_view what) const {
    return absl::DataLossError(absl::StrCat(
        file_name, ": ", absl::string_view(what.data(), what.size())));
  }

  // What Open reads from the end of the file: the footer and the meta
  // blocks, in one buffer holding the file's bytes from `offset` on.
  struct Tail {
    Footer footer;
    std::unique_ptr<char[]> buf;
    std::string_view bytes;
    uint64_t offset = 0;
  };
  // Read [offset, offset + n) into *tail. A short read is damage.
  absl::Status ReadTailBytes(uint64_t offset, size_t n, Tail* tail) const;
  // Read the tail (one I/O, two if the meta blocks are larger than
  // kTailReadSize), decode the footer, check the block handles it holds and
  // set data_end.
  absl::Status ReadTail(Tail* tail);
  // Verify and parse the properties, index and filter blocks of `tail`.
  // `filter_units`: Table::Open's.
  absl::Status LoadMetaBlocks(const Tail& tail,
                              const Table::FilterUnitsFn& filter_units);

  // Fill index_words (left empty where they do not apply, or where the
  // index is damaged: the search of the block itself then reports it).
  void BuildIndexWords();
  // index_iter->Seek(key), narrowed by index_words when it has them.
  void SeekIndex(BlockIterator* index_iter, std::string_view key) const;

  // The data block handle an index entry's value holds, checked to lie
  // inside the data blocks.
  absl::Status DecodeDataHandle(std::string_view index_value,
                                BlockHandle* handle) const;

  // For stable reads: checks the checksum of `stored`, the mapped bytes
  // (block and trailer) of the data block at `handle` named by the index
  // entry at `index_entry_offset`, unless this open table already has.
  absl::Status VerifyMappedOnce(std::string_view stored,
                                const BlockHandle& handle,
                                uint32_t index_entry_offset) const;

  // The data block at `handle` if the block cache holds it (counted in
  // stats->block_cache_hits, and noted by *readahead when not nullptr).
  std::optional<BlockRef> CachedDataBlock(const BlockHandle& handle,
                                          ReadStats* stats,
                                          Readahead* readahead) const;

  // The data block at `handle`: from the block cache, or else as
  // ReadDataBlock gives it (read, through *readahead when not nullptr).
  absl::StatusOr<BlockRef> GetDataBlock(const ReadOptions& ro,
                                        const BlockHandle& handle,
                                        ReadStats* stats,
                                        Readahead* readahead) const;

  // Whether the data block at `handle`, just missed in the block cache,
  // goes into it once decoded: there is a cache, ro.fill_cache, and the
  // cache admits it (Cache::Admit; ask once per miss).
  bool CacheAdmits(const ReadOptions& ro, const BlockHandle& handle) const;

  // The data block at `handle`, not looked for in the block cache: decoded
  // from `stored` (its stored bytes, when the caller has them) or else read,
  // through *readahead when not nullptr (an iterator's); inserted into the
  // block cache if `fill` (CacheAdmits's answer). Counts into *stats if not
  // nullptr. `stored_checked`: the caller has verified the checksum of
  // `stored` (a mapped block, verified once per open table), so it is not
  // verified again.
  absl::StatusOr<BlockRef> ReadDataBlock(const ReadOptions& ro,
                                         const BlockHandle& handle,
                                         ReadStats* stats, Readahead* readahead,
                                         std::optional<std::string_view> stored,
                                         bool stored_checked, bool fill) const;

  // The data block at `handle` (DecodeDataHandle's), named by the index
  // entry at `index_entry_offset`: parsed in place in the mapped file into
  // *in_place when it is stored uncompressed (no allocation, no block cache,
  // its checksum verified once per open table), else as GetDataBlock gives it,
  // into *ref; except that a compressed block of a mapped file that is not
  // to be cached (CacheAdmits) is decoded into *buffer, when not nullptr, and
  // parsed there into *in_place (no allocation once the buffer has grown).
  // The result lives as long as *in_place, *ref and *buffer are not changed.
  // `mapped`: the stored block as a mapped file's Read already returned it
  // (PrefetchDataBlock), or empty to read it here. Counts into *stats.
  // `readahead` (nullable): an iterator's, used where the file is read with
  // system calls.
  absl::StatusOr<const Block*> LoadDataBlock(
      const ReadOptions& ro, const BlockHandle& handle,
      uint32_t index_entry_offset, std::string_view mapped, ReadStats* stats,
      std::optional<Block>* in_place, BlockRef* ref, BlockBuffer* buffer,
      Readahead* readahead = nullptr) const;

  // For a point read: calls fn(block) with LoadDataBlock's block and returns
  // its status. A block decoded and not cached goes into a buffer of the
  // calling thread's, reused by its next point read (none is allocated per
  // read; one grown past 256 KiB by a large block is freed after the read);
  // a point read that fn itself makes on the same thread, if any, allocates
  // its own.
  absl::Status WithDataBlock(
      const ReadOptions& ro, const BlockHandle& handle,
      uint32_t index_entry_offset, std::string_view mapped, ReadStats* stats,
      absl::FunctionRef<absl::Status(const Block&)> fn) const;
};

// See Table::NewIterator.
std::unique_ptr<Iterator> NewTableIterator(const Table::Rep* rep,
                                           const ReadOptions& options,
                                           ReadStats* stats);

}  // namespace sift

#endif  // SIFT_TABLE_TABLE_REP_H_
