#include "db/level_iterator.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "db/global_seqno.h"
#include "db/level_bounds.h"

namespace sift {
namespace {

// Positions (index_ in [begin_, end_) when Valid()):
//   deferred_: at files_[index_]->smallest; table_ is not positioned there
//     (it may be null, or open on any table).
//   otherwise: table_ is open on files_[index_] (table_index_ == index_) and
//     Valid().
// index_ == end_: not Valid() (exhausted, or stopped by status_).
class LevelIterator final : public Iterator {
 public:
  LevelIterator(TableCache* table_cache, const InternalKeyComparator* icmp,
                const ReadOptions& options, const FileList& files, size_t begin,
                size_t end, ReadStats* stats, DeferredPositions* deferred,
                std::optional<TablePinHint> pin_hint, const LevelBounds* bounds)
      : table_cache_(table_cache),
        icmp_(icmp),
        bounds_(bounds),
        options_(options),
        files_(files),
        begin_(begin),
        end_(end),
        stats_(stats),
        report_(deferred),
        pin_hint_(pin_hint),
        index_(end),
        table_index_(end) {}

  ~LevelIterator() override { SetDeferred(false); }

  bool Valid() const override { return status_.ok() && index_ < end_; }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    index_ = FindFile(target);
    if (index_ == end_) return;
    if (CanDefer(index_) &&
        icmp_->Compare(target, files_[index_]->smallest.Encode()) <= 0) {
      SetDeferred(true);
      return;
    }
    SetDeferred(false);
    if (!OpenTable(index_)) return;
    table_->Seek(target);
    SkipEmptyForward();
  }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    index_ = begin_;
    EnterForward();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    SetDeferred(false);
    if (begin_ == end_) {
      index_ = end_;
      return;
    }
    index_ = end_ - 1;
    if (!OpenTable(index_)) return;
    table_->SeekToLast();
    SkipEmptyBackward();
  }

  void Next() override {
    assert(Valid());
    if (deferred_ && !Undefer()) return;
    table_->Next();
    SkipEmptyForward();
  }

  void Prev() override {
    assert(Valid());
    if (deferred_ && !Undefer()) return;
    table_->Prev();
    SkipEmptyBackward();
  }

  std::string_view key() const override {
    assert(Valid());
    return deferred_ ? files_[index_]->smallest.Encode() : table_->key();
  }

  std::string_view value() const override {
    assert(Valid());
    if (deferred_ && !Undefer()) {
      if (report_->error.ok()) report_->error = status_;
      return {};
    }
    return table_->value();
  }

  absl::Status status() const override { return status_; }

 private:
  // The first file in [begin_, end_) whose largest key is at or after
  // `target`, end_ if none. The level's windows (bounds_) find it over the
  // whole level with integer compares, most often with no key compare at
  // all; files before begin_ end before any file in range does, and files
  // from end_ on after, so clamping gives the answer in range.
  size_t FindFile(std::string_view target) const {
    if (bounds_ == nullptr || target.size() < 8) {
      return FindFileBetween(*icmp_, files_, target, begin_, end_);
    }
    const size_t i = bounds_->FindFile(*icmp_, files_, target,
                                       bounds_->Locate(ExtractUserKey(target)));
    return std::clamp(i, begin_, end_);
  }

  // A deferred position at file i's smallest key is allowed (see the file
  // comment: the key must be inside the lower bound).
  bool CanDefer(size_t i) const {
    return report_ != nullptr && (!options_.iterate_lower_bound.has_value() ||
                                  icmp_->user_comparator()->Compare(
                                      files_[i]->smallest.user_key(),
                                      *options_.iterate_lower_bound) >= 0);
  }

  // At index_ (a table just entered going forward): deferred if allowed,
  // else the table's first entry, or the next table's if it is empty.
  void EnterForward() {
    SetDeferred(false);
    while (index_ < end_) {
      if (CanDefer(index_)) {
        SetDeferred(true);
        return;
      }
      if (!OpenTable(index_)) return;
      table_->SeekToFirst();
      if (table_->Valid()) return;
      if (!table_->status().ok()) {
        Fail(table_->status());
        return;
      }
      ++index_;
    }
  }

  // Opens files_[index_] at its first entry, which must be its smallest key.
  // False (and stopped) if it cannot be.
  bool Undefer() const {
    SetDeferred(false);
    if (!OpenTable(index_)) return false;
    table_->SeekToFirst();
    if (!table_->Valid()) {
      absl::Status s = table_->status();
      return Fail(s.ok() ? Mismatch() : std::move(s));
    }
    if (table_->key() != files_[index_]->smallest.Encode()) {
      return Fail(Mismatch());
    }
    return true;
  }

  absl::Status Mismatch() const {
    return absl::DataLossError(
        absl::StrCat("table #", files_[index_]->number,
                     ": its first key is not the smallest key the MANIFEST "
                     "records for it"));
  }

  // table_ open on file i (kept if it already is, so seeks within one table
  // reuse its iterator and its current block). False (and stopped) if the
  // table could not be opened.
  bool OpenTable(size_t i) const {
    if (table_ != nullptr && table_index_ == i) return true;
    table_ =
        NewTableFileIterator(table_cache_, options_, *files_[i], stats_,
                             pin_hint_.has_value() ? &*pin_hint_ : nullptr);
    table_index_ = i;
    absl::Status s = table_->status();
    return s.ok() || Fail(std::move(s));
  }

  void SkipEmptyForward() {
    if (table_->Valid()) return;
    if (!table_->status().ok()) {
      Fail(table_->status());
      return;
    }
    ++index_;
    EnterForward();
  }

  void SkipEmptyBackward() {
    while (!table_->Valid()) {
      if (!table_->status().ok()) {
        Fail(table_->status());
        return;
      }
      if (index_ == begin_) {
        index_ = end_;
        return;
      }
      --index_;
      if (!OpenTable(index_)) return;
      table_->SeekToLast();
    }
  }

  // Records the first error and stops. Returns false for use in conditions.
  bool Fail(absl::Status s) const {
    if (status_.ok()) status_ = std::move(s);
    table_.reset();
    table_index_ = end_;
    index_ = end_;
    SetDeferred(false);
    return false;
  }

  // Keeps report_->count in step with deferred_.
  void SetDeferred(bool deferred) const {
    if (deferred == deferred_) return;
    deferred_ = deferred;
    report_->count += deferred ? 1 : -1;
  }

  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;
  const LevelBounds* const bounds_;  // of files_, or null
  const ReadOptions options_;        // the bounds' bytes are the caller's
  const FileList& files_;
  const size_t begin_;
  const size_t end_;
  ReadStats* const stats_;
  DeferredPositions* const report_;  // null: never deferred
  const std::optional<TablePinHint> pin_hint_;
  // Position and the open table; mutable because value() may open a
  // deferred position's table (see the file comment of level_iterator.h).
  mutable size_t index_;
  mutable bool deferred_ = false;
  mutable std::unique_ptr<Iterator> table_;
  mutable size_t table_index_;   // end_: table_ is null
  mutable absl::Status status_;  // first error met; sticky
};

}  // namespace

std::unique_ptr<Iterator> NewLevelIterator(
    TableCache* table_cache, const InternalKeyComparator* icmp,
    const ReadOptions& options, const FileList& files, size_t begin, size_t end,
    ReadStats* stats, DeferredPositions* deferred,
    std::optional<TablePinHint> pin_hint, const LevelBounds* bounds) {
  return std::make_unique<LevelIterator>(table_cache, icmp, options, files,
                                         begin, end, stats, deferred, pin_hint,
                                         bounds);
}

}  // namespace sift
