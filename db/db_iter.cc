#include "db/db_iter.h"

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "db/scan_prefix.h"
#include "table/iterators.h"
#include "util/key_buffer.h"

namespace sift {
namespace {

// Positions and invariants:
//   kForward: when valid_, iter_ is at the entry that supplies key() and
//     value(): the newest entry of that user key visible at sequence_.
//   kReverse: when valid_, key() and value() are copies in saved_key_ and
//     saved_value_, and iter_ is before every entry of saved_key_: at an
//     entry of a smaller user key, or off the front of the sequence.
// Any error (damaged internal key, or one reported by iter_) makes the
// iterator invalid; status() reports it.
// Bounds (lower_ inclusive, upper_ exclusive, user keys): no key outside
// them is ever yielded. A seek never asks iter_ for a key before lower_;
// forward scans stop at the first entry at or past upper_ and backward ones
// at the first before lower_, so neither walks past a bound, and iter_'s
// tables stop below at the bounds too (ReadOptions reaches them).
// Prefix scope (ReadOptions::prefix_same_as_start): while in_prefix_, lower_
// and upper_ are options' bounds narrowed to the range of the prefix of the
// last Seek's target, and iter_ was built with exactly those bounds.
// Otherwise they are options' own bounds and so are iter_'s.
class DBIter final : public Iterator {
 public:
  // `internal` null: built here from the pins (NewDBIterator's second form).
  DBIter(const InternalKeyComparator* icmp, std::unique_ptr<Iterator> internal,
         SequenceNumber sequence, const ReadOptions& options, IteratorPins pins)
      : pins_(std::move(pins)),
        icmp_(icmp),
        deferred_(internal == nullptr ? &own_deferred_ : pins_.deferred),
        iter_(std::move(internal)),
        sequence_(sequence),
        options_(options),
        prefix_scoped_(options.prefix_same_as_start &&
                       pins_.prefix_extractor != nullptr &&
                       pins_.mem != nullptr && pins_.version != nullptr),
        lower_(options.iterate_lower_bound),
        upper_(options.iterate_upper_bound) {
    if (iter_ == nullptr) {
      iter_ = NewInternalIterator(icmp_, pins_, options, &stats_, deferred_);
    }
  }

  ~DBIter() override {
    if (pins_.publisher != nullptr) pins_.publisher->AddStats(stats_);
  }

  bool Valid() const override { return valid_; }

  std::string_view key() const override {
    assert(valid_);
    return direction_ == kForward ? ExtractUserKey(iter_->key())
                                  : saved_key_.view();
  }
  std::string_view value() const override {
    assert(valid_);
    return direction_ == kForward ? iter_->value()
                                  : std::string_view(saved_value_);
  }
  absl::Status status() const override {
    if (!status_.ok()) return status_;
    return iter_->status();
  }

  void SeekToFirst() override {
    if (in_prefix_) LeavePrefixScope();
    if (lower_.has_value()) return SeekInScope(*lower_);
    CountSeek();
    direction_ = kForward;
    ClearSavedValue();
    saved_key_.clear();
    iter_->SeekToFirst();
    if (iter_->Valid()) {
      FindNextUserEntry(false, &saved_key_);
    } else {
      valid_ = false;
    }
    CheckStatus();
  }

  void SeekToLast() override {
    if (in_prefix_) LeavePrefixScope();
    CountSeek();
    direction_ = kReverse;
    ClearSavedValue();
    saved_key_.clear();
    if (upper_.has_value()) {
      if (EmptyBounds()) return Stop();
      // The last entry before the bound: the one before the first entry at
      // or past it (its first internal key), else the very last.
      const LookupKey bound(*upper_, kMaxSequenceNumber);
      iter_->Seek(bound.internal_key());
      if (iter_->Valid()) {
        iter_->Prev();
      } else if (iter_->status().ok()) {
        iter_->SeekToLast();
      }
    } else {
      iter_->SeekToLast();
    }
    FindPrevUserEntry();
    CheckStatus();
  }

  void Seek(std::string_view target) override {
    if (prefix_scoped_) {
      // target may be a view of this iterator's key(), which a change of
      // scope invalidates.
      std::string copy(target);
      EnterPrefixScope(copy);
      return SeekInScope(copy);
    }
    SeekInScope(target);
  }

  // Seek within the current bounds (lower_, upper_).
  void SeekInScope(std::string_view target) {
    CountSeek();
    direction_ = kForward;
    ClearSavedValue();
    saved_key_.clear();
    if (lower_.has_value() && icmp_->CompareUserKeys(target, *lower_) < 0) {
      target = *lower_;
    }
    if (PastUpperBound(target)) return Stop();
    // The first internal key of `target` visible at sequence_ (built in
    // place: a Seek allocates nothing for its target).
    const LookupKey seek_key(target, sequence_);
    ChargeSeek(seek_key.internal_key());
    iter_->Seek(seek_key.internal_key());
    if (iter_->Valid()) {
      FindNextUserEntry(false, &saved_key_);
    } else {
      valid_ = false;
    }
    CheckStatus();
  }

  void Next() override {
    assert(valid_);
    if (direction_ == kReverse) {
      // iter_ is before the entries of the current key (saved_key_): step
      // forward into them; FindNextUserEntry below skips them.
      direction_ = kForward;
      if (lower_.has_value()) {
        // A backward walk that stopped at the lower bound left iter_ at an
        // entry before it, and the tables below stop at the bound by
        // themselves: entries of other keys may lie between iter_ and
        // saved_key_. Seek back to saved_key_ rather than step.
        const LookupKey seek_key(saved_key_.view(), kMaxSequenceNumber);
        iter_->Seek(seek_key.internal_key());
      } else if (iter_->Valid()) {
        iter_->Next();
      } else {
        iter_->SeekToFirst();
      }
    } else {
      // Skip the remaining (older) entries of the current key.
      saved_key_.assign(ExtractUserKey(iter_->key()));
      iter_->Next();
    }
    if (iter_->Valid()) {
      FindNextUserEntry(true, &saved_key_);
    } else {
      valid_ = false;
      saved_key_.clear();
    }
    CheckStatus();
  }

  void Prev() override {
    assert(valid_);
    if (direction_ == kForward) {
      // iter_ is at the current entry; newer invisible entries of the same
      // user key may sit just before it. Move before all of them.
      saved_key_.assign(ExtractUserKey(iter_->key()));
      while (true) {
        iter_->Prev();
        if (!iter_->Valid()) {
          valid_ = false;
          saved_key_.clear();
          ClearSavedValue();
          CheckStatus();
          return;
        }
        if (icmp_->CompareUserKeys(ExtractUserKey(iter_->key()),
                                   saved_key_.view()) < 0) {
          break;
        }
      }
      direction_ = kReverse;
    }
    FindPrevUserEntry();
    CheckStatus();
  }

 private:
  enum Direction { kForward, kReverse };

  // Narrows the bounds to the range of target's prefix (target clamped to
  // options' lower bound first), or goes back to options' bounds when
  // target has no prefix. iter_ is rebuilt only when the scope changes.
  void EnterPrefixScope(std::string_view target) {
    const std::optional<std::string_view>& user_lower =
        options_.iterate_lower_bound;
    if (user_lower.has_value() &&
        icmp_->CompareUserKeys(target, *user_lower) < 0) {
      target = *user_lower;
    }
    const PrefixExtractor& extractor = *pins_.prefix_extractor;
    if (!extractor.InDomain(target)) {
      if (in_prefix_) LeavePrefixScope();
      return;
    }
    const std::string_view prefix = extractor.Transform(target);
    if (in_prefix_ && prefix == prefix_) return;
    // iter_ holds views of the bound buffers: drop it before they change.
    iter_.reset();
    prefix_.assign(prefix);
    ReadOptions scoped = options_;
    // The prefix's range [prefix, successor) inside options' bounds. A
    // lower bound after the prefix but before target starts with it too.
    if (!user_lower.has_value() ||
        icmp_->CompareUserKeys(*user_lower, prefix_) < 0) {
      scoped.iterate_lower_bound = prefix_;
    }
    if (std::optional<std::string> successor = PrefixSuccessor(prefix_);
        successor.has_value() &&
        (!options_.iterate_upper_bound.has_value() ||
         icmp_->CompareUserKeys(*successor, *options_.iterate_upper_bound) <
             0)) {
      prefix_upper_ = *std::move(successor);
      scoped.iterate_upper_bound = prefix_upper_;
    }
    Rebuild(scoped);
    in_prefix_ = true;
  }

  void LeavePrefixScope() {
    Rebuild(options_);
    in_prefix_ = false;
    prefix_.clear();
  }

  void Rebuild(const ReadOptions& options) {
    iter_.reset();
    iter_ = NewInternalIterator(icmp_, pins_, options, &stats_, deferred_);
    lower_ = options.iterate_lower_bound;
    upper_ = options.iterate_upper_bound;
    valid_ = false;
    direction_ = kForward;
  }

  // False (and the iterator stopped with a DataLossError) if iter_'s key is
  // not a valid internal key.
  bool ParseKey(ParsedInternalKey* ikey) {
    if (ParseInternalKey(iter_->key(), ikey)) return true;
    status_ = absl::DataLossError("DB iterator: damaged internal key");
    return false;
  }

  // Moves forward from iter_ (valid) to the first visible, undeleted entry,
  // skipping entries of user keys <= *skip while `skipping`.
  void FindNextUserEntry(bool skipping, KeyBuffer* skip) {
    assert(iter_->Valid());
    assert(direction_ == kForward);
    do {
      ParsedInternalKey ikey;
      if (!ParseKey(&ikey)) break;
      if (PastUpperBound(ikey.user_key)) break;
      if (ikey.sequence <= sequence_) {
        if (ikey.type == kTypeDeletion) {
          // Every older entry of this user key is deleted.
          skip->assign(ikey.user_key);
          skipping = true;
        } else if (!skipping ||
                   icmp_->CompareUserKeys(ikey.user_key, skip->view()) > 0) {
          saved_key_.clear();
          valid_ = true;
          if (deferred_ != nullptr && deferred_->count > 0) {
            // A level may have deferred opening this entry's table
            // (db/level_iterator.h): open it now, so that an error ends the
            // iteration rather than shows an empty value.
            iter_->value();
            if (!deferred_->error.ok()) {
              status_ = deferred_->error;
              valid_ = false;
            }
          }
          return;
        }
      }
      iter_->Next();
    } while (iter_->Valid());
    saved_key_.clear();
    valid_ = false;
  }

  // Moves backward from iter_ to the previous user key that has a visible,
  // undeleted newest entry, copying it into saved_key_/saved_value_. Entries
  // of one user key are met oldest first, so the last visible one seen is the
  // newest; the key is settled once an entry of a smaller key shows up.
  void FindPrevUserEntry() {
    assert(direction_ == kReverse);
    ValueType value_type = kTypeDeletion;
    while (iter_->Valid()) {
      ParsedInternalKey ikey;
      if (!ParseKey(&ikey)) break;
      // Before the lower bound: as if the front were reached (iter_ stays
      // before saved_key_'s entries, as the invariant wants).
      if (BeforeLowerBound(ikey.user_key)) break;
      // At or past the upper bound: passed over. A walk that starts at the
      // bound (SeekToLast) begins below it, but entries newer than this
      // iterator's sequence that a memtable took meanwhile may show up above
      // the bound too.
      if (PastUpperBound(ikey.user_key)) {
        iter_->Prev();
        continue;
      }
      if (ikey.sequence <= sequence_) {
        if (value_type != kTypeDeletion &&
            icmp_->CompareUserKeys(ikey.user_key, saved_key_.view()) < 0) {
          // saved_key_ holds the answer; iter_ stays before its entries.
          valid_ = true;
          return;
        }
        value_type = ikey.type;
        if (value_type == kTypeDeletion) {
          saved_key_.clear();
          ClearSavedValue();
        } else {
          saved_key_.assign(ikey.user_key);
          saved_value_.assign(iter_->value());
        }
      }
      iter_->Prev();
    }
    if (status_.ok() && value_type != kTypeDeletion) {
      // Reached the front: the last key seen is the answer.
      valid_ = true;
      return;
    }
    valid_ = false;
    saved_key_.clear();
    ClearSavedValue();
    direction_ = kForward;
  }

  void CountSeek() { ++stats_.seeks; }

  // Charges a seek to `internal_key` to the version's tables: a tree whose
  // runs keep costing seeks gets flatter (SeekBudget).
  void ChargeSeek(std::string_view internal_key) {
    if (pins_.seek_sink == nullptr || pins_.version == nullptr) return;
    if (std::optional<Version::SeekCharge> charge =
            pins_.version->RecordSeek(internal_key)) {
      pins_.seek_sink->RequestSeekCompaction(std::move(*charge));
    }
  }

  bool PastUpperBound(std::string_view user_key) const {
    return upper_.has_value() && icmp_->CompareUserKeys(user_key, *upper_) >= 0;
  }
  bool BeforeLowerBound(std::string_view user_key) const {
    return lower_.has_value() && icmp_->CompareUserKeys(user_key, *lower_) < 0;
  }
  bool EmptyBounds() const {
    return lower_.has_value() && upper_.has_value() &&
           icmp_->CompareUserKeys(*lower_, *upper_) >= 0;
  }
  // Not Valid(), without touching iter_: nothing inside the bounds is left
  // in the direction asked.
  void Stop() {
    valid_ = false;
    saved_key_.clear();
    ClearSavedValue();
    direction_ = kForward;
    CheckStatus();
  }

  void ClearSavedValue() {
    // Do not keep a large buffer alive for the iterator's whole life.
    if (saved_value_.capacity() > (size_t{1} << 20)) {
      std::string().swap(saved_value_);
    } else {
      saved_value_.clear();
    }
  }

  // An iterator that met an error stays invalid.
  void CheckStatus() {
    if (!status().ok()) valid_ = false;
  }

  // Declared first: destroyed after iter_, which points into what they pin.
  const IteratorPins pins_;
  // User keys compare through icmp_->CompareUserKeys: inline for the bytewise
  // order, where a Comparator call would be virtual on every step.
  const InternalKeyComparator* const icmp_;
  // Also declared before iter_, whose tables count and report into them:
  // the iterator's counters (published when it is destroyed), and where its
  // levels report deferred positions (own_deferred_, or pins_.deferred for
  // an internal iterator made elsewhere; null: none are taken).
  ReadStats stats_;
  DeferredPositions own_deferred_;
  DeferredPositions* const deferred_;
  // Declared before iter_, which may hold views of them (prefix scope).
  std::string prefix_;        // in_prefix_: the scope's prefix
  std::string prefix_upper_;  // in_prefix_: its successor, if the bound
  std::unique_ptr<Iterator> iter_;
  const SequenceNumber sequence_;
  // The caller keeps the bounds' bytes alive (ReadOptions' contract).
  const ReadOptions options_;
  // ReadOptions::prefix_same_as_start is in effect.
  const bool prefix_scoped_;
  bool in_prefix_ = false;
  // The bounds in effect (see the invariants above).
  std::optional<std::string_view> lower_;
  std::optional<std::string_view> upper_;

  absl::Status status_;
  // User keys (see the invariants above), inline: the 16 bytes of a
  // typical key are past std::string's own, and an iterator per scan would
  // allocate for its first Next.
  KeyBuffer saved_key_;
  std::string saved_value_;  // kReverse: value of the current entry
  Direction direction_ = kForward;
  bool valid_ = false;
};

}  // namespace

std::unique_ptr<Iterator> NewInternalIterator(const InternalKeyComparator* icmp,
                                              const IteratorPins& pins,
                                              const ReadOptions& options,
                                              ReadStats* stats,
                                              DeferredPositions* deferred) {
  IteratorList children;
  // The memtables, one per level-0 table, one per other non-empty level:
  // reserved at once rather than grown (an iterator is made per scan; each
  // growth is an allocation and a move), and no more than that, so that a
  // usual tree's fit inline.
  size_t count = (pins.imm != nullptr ? 2 : 1) +
                 static_cast<size_t>(pins.version->NumFiles(0));
  for (int level = 1; level < config::kNumLevels; ++level) {
    if (pins.version->NumFiles(level) > 0) ++count;
  }
  children.reserve(count);
  children.push_back(pins.mem->NewIterator());
  if (pins.imm != nullptr) children.push_back(pins.imm->NewIterator());
  pins.version->AddIterators(options, &children, stats, deferred);
  return NewMergingIterator(icmp, std::move(children));
}

std::unique_ptr<Iterator> NewDBIterator(const InternalKeyComparator* icmp,
                                        std::unique_ptr<Iterator> internal,
                                        SequenceNumber sequence,
                                        const ReadOptions& options,
                                        IteratorPins pins) {
  return std::make_unique<DBIter>(icmp, std::move(internal), sequence, options,
                                  std::move(pins));
}

std::unique_ptr<Iterator> NewDBIterator(const InternalKeyComparator* icmp,
                                        SequenceNumber sequence,
                                        const ReadOptions& options,
                                        IteratorPins pins) {
  return std::make_unique<DBIter>(icmp, nullptr, sequence, options,
                                  std::move(pins));
}

}  // namespace sift
