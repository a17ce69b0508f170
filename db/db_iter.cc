#include "db/db_iter.h"

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"

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
class DBIter final : public Iterator {
 public:
  DBIter(const InternalKeyComparator* icmp, std::unique_ptr<Iterator> internal,
         SequenceNumber sequence, const ReadOptions& options, IteratorPins pins)
      : pins_(std::move(pins)),
        ucmp_(icmp->user_comparator()),
        iter_(std::move(internal)),
        sequence_(sequence),
        lower_(options.iterate_lower_bound),
        upper_(options.iterate_upper_bound) {}

  ~DBIter() override {
    if (pins_.stats != nullptr && pins_.publisher != nullptr) {
      pins_.publisher->AddStats(*pins_.stats);
    }
  }

  bool Valid() const override { return valid_; }

  std::string_view key() const override {
    assert(valid_);
    return direction_ == kForward ? ExtractUserKey(iter_->key())
                                  : std::string_view(saved_key_);
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
    if (lower_.has_value()) return Seek(*lower_);
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
    CountSeek();
    direction_ = kReverse;
    ClearSavedValue();
    saved_key_.clear();
    if (upper_.has_value()) {
      if (EmptyBounds()) return Stop();
      // The last entry before the bound: the one before the first entry at
      // or past it (its first internal key), else the very last.
      AppendInternalKey(&saved_key_, *upper_, kMaxSequenceNumber,
                        kValueTypeForSeek);
      iter_->Seek(saved_key_);
      saved_key_.clear();
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
    CountSeek();
    direction_ = kForward;
    ClearSavedValue();
    saved_key_.clear();
    if (lower_.has_value() && ucmp_->Compare(target, *lower_) < 0) {
      target = *lower_;
    }
    if (PastUpperBound(target)) return Stop();
    // The first internal key of `target` visible at sequence_.
    AppendInternalKey(&saved_key_, target, sequence_, kValueTypeForSeek);
    ChargeSeek();
    iter_->Seek(saved_key_);
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
        seek_key_.clear();
        AppendInternalKey(&seek_key_, saved_key_, kMaxSequenceNumber,
                          kValueTypeForSeek);
        iter_->Seek(seek_key_);
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
        if (ucmp_->Compare(ExtractUserKey(iter_->key()), saved_key_) < 0) {
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

  // False (and the iterator stopped with a DataLossError) if iter_'s key is
  // not a valid internal key.
  bool ParseKey(ParsedInternalKey* ikey) {
    if (ParseInternalKey(iter_->key(), ikey)) return true;
    status_ = absl::DataLossError("DB iterator: damaged internal key");
    return false;
  }

  // Moves forward from iter_ (valid) to the first visible, undeleted entry,
  // skipping entries of user keys <= *skip while `skipping`.
  void FindNextUserEntry(bool skipping, std::string* skip) {
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
        } else if (!skipping || ucmp_->Compare(ikey.user_key, *skip) > 0) {
          valid_ = true;
          saved_key_.clear();
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
            ucmp_->Compare(ikey.user_key, saved_key_) < 0) {
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

  void CountSeek() {
    if (pins_.stats != nullptr) ++pins_.stats->seeks;
  }

  // Charges a seek to saved_key_ (an internal key) to the version's tables:
  // a tree whose runs keep costing seeks gets flatter (SeekBudget).
  void ChargeSeek() {
    if (pins_.seek_sink == nullptr || pins_.version == nullptr) return;
    if (std::optional<Version::SeekCharge> charge =
            pins_.version->RecordSeek(saved_key_)) {
      pins_.seek_sink->RequestSeekCompaction(std::move(*charge));
    }
  }

  bool PastUpperBound(std::string_view user_key) const {
    return upper_.has_value() && ucmp_->Compare(user_key, *upper_) >= 0;
  }
  bool BeforeLowerBound(std::string_view user_key) const {
    return lower_.has_value() && ucmp_->Compare(user_key, *lower_) < 0;
  }
  bool EmptyBounds() const {
    return lower_.has_value() && upper_.has_value() &&
           ucmp_->Compare(*lower_, *upper_) >= 0;
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
  const Comparator* const ucmp_;
  const std::unique_ptr<Iterator> iter_;
  const SequenceNumber sequence_;
  // The caller keeps the bytes alive (ReadOptions' contract).
  const std::optional<std::string_view> lower_;
  const std::optional<std::string_view> upper_;

  absl::Status status_;
  std::string saved_key_;    // see the invariants above
  std::string saved_value_;  // kReverse: value of the current entry
  std::string seek_key_;     // Next's internal seek target (buffer reused)
  Direction direction_ = kForward;
  bool valid_ = false;
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(const InternalKeyComparator* icmp,
                                        std::unique_ptr<Iterator> internal,
                                        SequenceNumber sequence,
                                        const ReadOptions& options,
                                        IteratorPins pins) {
  return std::make_unique<DBIter>(icmp, std::move(internal), sequence, options,
                                  std::move(pins));
}

}  // namespace sift
