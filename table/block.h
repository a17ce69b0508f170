#ifndef SIFT_TABLE_BLOCK_H_
#define SIFT_TABLE_BLOCK_H_

// A parsed block (doc/table_format.md, "Blocks") and the iterator over it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sift/iterator.h"
#include "table/format.h"
#include "util/cache.h"
#include "util/coding.h"
#include "util/comparator.h"
#include "util/key_buffer.h"

namespace sift {

class BlockIterator;

// A restart search over at most this many points loads all their keys
// before it compares any (a data block has about 16 points; an index block,
// with a point per entry, is searched as is).
inline constexpr uint32_t kPrefetchedRestarts = 32;

// The immutable contents of one block, owned, with the restart array located
// and checked. Entries are decoded lazily by iterators, which check every
// length, so damaged entries surface as iterator errors, never as reads out
// of bounds.
//
// Thread safety: immutable after Create; safe for concurrent use.
class Block {
 public:
  // Take `contents` and validate the restart array: a count that fits, the
  // first restart at 0, every restart strictly after the previous one and
  // inside the entries. Damage: absl::DataLossError naming `file_name` and
  // `file_offset` (both only label errors).
  static absl::StatusOr<std::unique_ptr<Block>> Create(
      BlockContents contents, uint64_t file_offset,
      const std::string& file_name);

  // As Create, for a Block held by value (a point read parses a block of a
  // memory-mapped table on its stack, allocating nothing).
  static absl::StatusOr<Block> Parse(BlockContents contents,
                                     uint64_t file_offset,
                                     const std::string& file_name);

  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  Block(Block&&) = default;
  Block& operator=(Block&&) = default;

  // Start loading the keys at the restart points of a block's `contents`
  // (uncompressed, not yet checked by Create or Parse), which the restart
  // search of a Seek reads: a batch of reads calls this for every block
  // before searching any, so the misses overlap. A hint: nothing outside
  // `contents` is read, damaged bytes are ignored.
  static void PrefetchRestartKeys(std::string_view contents);

  // Bytes of the uncompressed contents (the block cache charge).
  size_t size() const { return contents_.size; }
  uint64_t file_offset() const { return file_offset_; }
  uint32_t num_restarts() const { return num_restarts_; }

  // An iterator over the block in `comparator`'s order. Neither the block,
  // nor `comparator`, nor `file_name` (labels errors; may be nullptr) are
  // owned; all must outlive the iterator.
  std::unique_ptr<BlockIterator> NewIterator(
      const Comparator* comparator, const std::string* file_name) const;

 private:
  friend class BlockIterator;
  Block(BlockContents contents, uint64_t file_offset, uint32_t restart_offset,
        uint32_t num_restarts);

  BlockContents contents_;
  uint64_t file_offset_;
  uint32_t restart_offset_;  // where the restart array starts = end of entries
  uint32_t num_restarts_;    // >= 1
};

// Keeps a Block alive for as long as it is held: owns it, pins it in a cache,
// or merely points at a block someone else keeps alive. Move-only.
class BlockRef {
 public:
  BlockRef() = default;
  static BlockRef Owned(std::unique_ptr<Block> block);
  // Takes over one pin of `handle`, whose value is a Block*.
  static BlockRef Cached(Cache* cache, Cache::Handle* handle);
  static BlockRef Borrowed(const Block* block);

  BlockRef(BlockRef&& other) noexcept;
  BlockRef& operator=(BlockRef&& other) noexcept;
  ~BlockRef();

  const Block* get() const { return block_; }

 private:
  void Reset();

  const Block* block_ = nullptr;
  std::unique_ptr<Block> owned_;
  Cache* cache_ = nullptr;
  Cache::Handle* handle_ = nullptr;
};

// Iterates over one block. Seek binary-searches the restart points, then
// scans forward; Prev rescans from the restart point before the current entry.
// A damaged entry makes the iterator !Valid() with an absl::DataLossError.
// Not movable: key() views a buffer inside the iterator.
//
// Thread safety: not safe for concurrent use.
class BlockIterator final : public Iterator {
 public:
  BlockIterator(const Block* block, const Comparator* comparator,
                const std::string* file_name);
  // An iterator over no block yet: never Valid() until Reset gives it one.
  BlockIterator(const Comparator* comparator, const std::string* file_name);

  // Iterate over `block` from now on, not Valid() until positioned, with an
  // OK status. The buffers of the key already held are kept, so an iterator
  // that walks many blocks allocates nothing per block. Does not touch the
  // pin: the caller keeps `block` alive. nullptr: over no block.
  void Reset(const Block* block);

  // Keep `ref` (the block this iterates over) alive as long as the iterator.
  void Pin(BlockRef ref) { pin_ = std::move(ref); }

  bool Valid() const override { return current_ < restart_offset_; }
  void SeekToFirst() override;
  void SeekToLast() override;
  void Seek(std::string_view target) override;
  void Next() override;
  void Prev() override;
  std::string_view key() const override { return key_.view(); }
  std::string_view value() const override { return value_; }
  absl::Status status() const override { return status_; }

  // Start loading the entries Seek(target) would read, without moving: a
  // batch of reads calls this for every block before searching any, so the
  // misses of their scans overlap. Returns the restart point Seek(target)
  // scans from, for SeekFromRestart; std::nullopt for an empty block or on
  // damage, which is then reported as Seek would (status()).
  std::optional<uint32_t> PrefetchSeek(std::string_view target);
  // Seek(target) without its restart search: the scan starts at `restart`.
  // Lands where Seek(target) does whenever every entry before restart point
  // `restart` is < target: when `restart` is what PrefetchSeek(target)
  // returned for this block's bytes (a batch searches each block once), or
  // when the caller narrowed the search some other way. restart ==
  // num_restarts(): every entry is < target, so !Valid() after.
  // REQUIRES: restart <= the block's num_restarts()
  void SeekFromRestart(std::string_view target, uint32_t restart);
  // Seek(target) with its restart search confined to [left, right]: lands
  // where Seek(target) does when every entry before restart point `left` is
  // < target and every restart point after `right` has a key >= target.
  // REQUIRES: left <= right < the block's num_restarts()
  void SeekBetweenRestarts(std::string_view target, uint32_t left,
                           uint32_t right);

  // Offset of the current entry in the block: tells entries apart.
  // REQUIRES: Valid()
  uint32_t entry_offset() const { return current_; }

 private:
  uint32_t RestartOffset(uint32_t index) const {
    return DecodeFixed32(data_ + restart_offset_ + 4 * index);
  }
  // At most this many cache lines of one restart interval are loaded ahead.
  static constexpr uint32_t kMaxPrefetchedLines = 32;
  // Start loading `lines` cache lines of entries from `offset` (a hint; no
  // read past the entries).
  void PrefetchEntries(uint32_t offset, uint32_t lines) const;
  // The last restart point in [*left, right] whose key is < target, or
  // *left when there is none, into *left; false on a damaged key.
  bool SearchRestarts(std::string_view target, uint32_t* left, uint32_t right);
  // In a search of restart points [l, right] that compares key(mid) now:
  // start loading what the next two steps will read (no read outside the
  // restart array; a key's offset from a damaged array is bounded as in
  // PrefetchEntries).
  void PrefetchSearchAhead(uint32_t l, uint32_t mid, uint32_t right) const;
  // Start loading the entries of restart interval `index`.
  void PrefetchInterval(uint32_t index);
  // From the current position, steps to the first entry >= target (or
  // !Valid() when there is none, or on damage).
  void ScanTo(std::string_view target);
  // The restart search over [left, right], then the scan of the interval it
  // lands in: what Seek and SeekBetweenRestarts share.
  void SearchAndScan(std::string_view target, uint32_t left, uint32_t right);
  void SetRestartIndex(uint32_t index);
  void SeekToRestartPoint(uint32_t index);
  // Decode the entry at next_ into key_/value_; false at the end or on damage.
  bool ParseNextEntry();
  // The full key stored at restart point `index`; false on damage.
  bool RestartKey(uint32_t index, std::string_view* key);
  void MarkInvalid();
  void Corrupt(uint32_t entry_offset);

  // The block's bytes and layout; change only in Reset.
  const char* data_;
  uint32_t restart_offset_;
  uint32_t num_restarts_;
  uint64_t block_file_offset_;
  const KeyOrder order_;
  const std::string* const file_name_;

  // Offset of the current entry; restart_offset_ when not Valid().
  uint32_t current_;
  // Offset just past the current entry.
  uint32_t next_;
  // Index of the restart point at or before current_.
  uint32_t restart_index_;
  // Offset of restart point restart_index_ + 1 (restart_offset_ if none).
  uint32_t next_restart_;
  KeyBuffer key_;
  std::string_view value_;
  absl::Status status_;
  BlockRef pin_;
};

}  // namespace sift

#endif  // SIFT_TABLE_BLOCK_H_
