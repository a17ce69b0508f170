// The iterator over one table: the index block and the data block its
// current entry names, both walked in place.
//
// A data block comes from Table::Rep::LoadDataBlock: where the file is
// mapped and the block stored uncompressed it is parsed where it lies (no
// copy, no block cache, its checksum verified once per open table, as point
// reads do); otherwise it is pinned in the block cache, or, when the cache
// does not take it (fill_cache false, or Cache::Admit refuses), decoded into
// the iterator's own reusable buffer (a mapped file) or owned (a file read
// with system calls); a long forward run of such reads reads ahead
// (table/readahead.h). Moving to another block re-binds the one
// BlockIterator to it, so a scan allocates nothing per block or per entry
// (the key buffer grows to the longest key once).
//
// Invariants:
//   - data_ iterates over the block named by the index entry at
//     block_entry_ (when has_block_), which in_place_ (with buffer_, when
//     it was decoded there) or ref_ keeps alive;
//     without a block, data_ is over nothing and not Valid().
//   - While Valid(): index_ is at the entry naming the loaded block, and
//     data_ is Valid() in it.
//   - Any error, from the index, a block read or a damaged entry, stops the
//     iterator for good (status_ is sticky): skipping a failed block would
//     silently drop its entries.
//
// Bounds (ReadOptions::iterate_lower_bound / iterate_upper_bound, compared
// with TableOptions::user_key of the stored keys): an index entry's key is a
// separator at or after every key of its block and before every key of the
// next block. So once the separator of block i is at or past the upper bound,
// no later block holds a key inside the bounds; and a block whose separator
// is before the lower bound holds none either. Neither is read. Entries of a
// block that is read are yielded whatever the bounds: the DB iterator checks
// each key.

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "table/block.h"
#include "table/iterators.h"
#include "table/table_rep.h"

namespace sift {
namespace {

class TableIterator final : public Iterator {
 public:
  TableIterator(const Table::Rep* rep, const ReadOptions& options,
                ReadStats* stats)
      : rep_(rep),
        options_(options),
        stats_(stats),
        index_(rep->index.get(), rep->options.comparator, &rep->file_name),
        data_(rep->options.comparator, &rep->file_name) {}

  bool Valid() const override { return data_.Valid(); }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    index_.SeekToFirst();
    if (!LoadBlock()) return;
    data_.SeekToFirst();
    SkipEmptyForward();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    if (options_.iterate_upper_bound.has_value()) {
      // The last entry before the bound is the one before the first entry
      // at or past it; blocks after that one are never read.
      bound_key_.clear();
      if (rep_->options.seek_key != nullptr) {
        rep_->options.seek_key(*options_.iterate_upper_bound, &bound_key_);
      } else {
        bound_key_.assign(*options_.iterate_upper_bound);
      }
      rep_->SeekIndex(&index_, bound_key_);
      if (index_.Valid()) {
        if (!LoadBlock()) return;
        data_.Seek(bound_key_);
        if (data_.Valid()) {
          data_.Prev();
        } else if (data_.status().ok()) {
          data_.SeekToLast();  // every entry of the block is before the bound
        }
        SkipEmptyBackward();
        return;
      }
      if (!index_.status().ok()) {
        Fail(index_.status());
        return;
      }
      // Every entry is before the bound.
    }
    index_.SeekToLast();
    if (!LoadBlock()) return;
    data_.SeekToLast();
    SkipEmptyBackward();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    if (AtOrPastUpperBound(target)) return Stop();
    rep_->SeekIndex(&index_, target);
    if (index_.Valid() && PreviousSeparatorPastUpperBound()) return Stop();
    if (!LoadBlock()) return;
    data_.Seek(target);
    SkipEmptyForward();
  }

  void Next() override {
    assert(Valid());
    data_.Next();
    SkipEmptyForward();
  }

  void Prev() override {
    assert(Valid());
    data_.Prev();
    SkipEmptyBackward();
  }

  std::string_view key() const override {
    assert(Valid());
    return data_.key();
  }
  std::string_view value() const override {
    assert(Valid());
    return data_.value();
  }
  absl::Status status() const override { return status_; }

 private:
  std::string_view UserKey(std::string_view key) const {
    return rep_->options.user_key != nullptr ? rep_->options.user_key(key)
                                             : key;
  }
  // True if every key at or after stored key `key` is outside the bounds.
  bool AtOrPastUpperBound(std::string_view key) const {
    return options_.iterate_upper_bound.has_value() &&
           UserKey(key) >= *options_.iterate_upper_bound;
  }
  // True if every key at or before stored key `key` is outside the bounds.
  bool BeforeLowerBound(std::string_view key) const {
    return options_.iterate_lower_bound.has_value() &&
           UserKey(key) < *options_.iterate_lower_bound;
  }

  // With an upper bound, index_ (Valid) just found the block a Seek lands
  // in: true if that block's keys all follow a separator at or past the
  // bound (so the block need not be read). index_ is left where it was.
  bool PreviousSeparatorPastUpperBound() {
    if (!options_.iterate_upper_bound.has_value()) return false;
    const uint32_t at = index_.entry_offset();
    index_.Prev();
    const bool past = index_.Valid() && AtOrPastUpperBound(index_.key());
    // The index entry itself was valid a moment ago: Seek to its key again
    // lands there (index keys are distinct). An index that cannot step back
    // (damage) is reported by the Seek.
    if (index_.Valid()) {
      index_.Next();
    } else {
      index_.SeekToFirst();
    }
    if (!index_.Valid() || index_.entry_offset() != at) {
      if (index_.status().ok()) {
        Fail(rep_->Corruption("index block iterator lost its place"));
      } else {
        Fail(index_.status());
      }
      return true;
    }
    return past;
  }

  // Record the first error and stop.
  bool Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
    DropBlock();
    return false;
  }

  // Stop without an error: not Valid() until the next seek.
  void Stop() { DropBlock(); }

  void DropBlock() {
    data_.Reset(nullptr);
    has_block_ = false;
    in_place_.reset();
    ref_ = BlockRef();
  }

  // Load the block index_ names (keeping the one loaded if it is the same),
  // or none when index_ is not Valid(). False on an error.
  bool LoadBlock() {
    if (!index_.Valid()) {
      if (!index_.status().ok()) return Fail(index_.status());
      DropBlock();
      return true;
    }
    const uint32_t entry = index_.entry_offset();
    if (has_block_ && entry == block_entry_) return true;
    DropBlock();
    BlockHandle handle;
    if (absl::Status s = rep_->DecodeDataHandle(index_.value(), &handle);
        !s.ok()) {
      return Fail(s);
    }
    ReadStats counted;
    absl::StatusOr<const Block*> block =
        rep_->LoadDataBlock(options_, handle, entry, {}, &counted, &in_place_,
                            &ref_, &buffer_, &readahead_);
    if (stats_ != nullptr) {
      stats_->iterator_block_reads += counted.block_reads;
      stats_->iterator_block_cache_hits += counted.block_cache_hits;
    }
    if (!block.ok()) return Fail(block.status());
    data_.Reset(*block);
    block_entry_ = entry;
    has_block_ = true;
    return true;
  }

  void SkipEmptyForward() {
    while (!data_.Valid()) {
      if (!data_.status().ok()) {
        Fail(data_.status());
        return;
      }
      if (!index_.Valid()) return;
      if (AtOrPastUpperBound(index_.key())) return Stop();
      index_.Next();
      if (!LoadBlock() || !index_.Valid()) return;
      data_.SeekToFirst();
    }
  }

  void SkipEmptyBackward() {
    while (!data_.Valid()) {
      if (!data_.status().ok()) {
        Fail(data_.status());
        return;
      }
      if (!index_.Valid()) return;
      index_.Prev();
      if (index_.Valid() && BeforeLowerBound(index_.key())) return Stop();
      if (!LoadBlock() || !index_.Valid()) return;
      data_.SeekToLast();
    }
  }

  const Table::Rep* const rep_;
  const ReadOptions options_;
  // Where block reads are counted; nullptr: nowhere.
  ReadStats* const stats_;
  BlockIterator index_;
  BlockIterator data_;
  // Whichever holds the block data_ iterates over.
  std::optional<Block> in_place_;
  BlockRef ref_;
  // Where a compressed block that the block cache does not take is decoded
  // (in_place_ then views it); reused from block to block.
  BlockBuffer buffer_;
  // Reads blocks ahead during a long forward run where the file is read
  // with system calls (unused, and never allocating, over a mapped file).
  Readahead readahead_;
  uint32_t block_entry_ = 0;
  bool has_block_ = false;
  // The stored key SeekToLast seeks for the upper bound (kept to reuse its
  // buffer).
  std::string bound_key_;
  absl::Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewTableIterator(const Table::Rep* rep,
                                           const ReadOptions& options,
                                           ReadStats* stats) {
  return std::make_unique<TableIterator>(rep, options, stats);
}

}  // namespace sift
