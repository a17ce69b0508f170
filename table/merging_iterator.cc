// The merging iterator: a k-way merge of sorted children.
//
// Order: entries are yielded sorted by (key, child index), so equal keys from
// different children come out earlier child first going forward, and in the
// mirror order going backward. Children are ranked by a linear scan: the DB
// merges a few memtables and level-0 tables plus one iterator per deeper
// level, a number small enough that a scan beats a heap's bookkeeping. The
// scan keeps the runner-up as well as the current child: a step usually
// leaves the current child first (the deepest level holds most keys, so runs
// of entries come from one child), which one comparison with the runner-up
// confirms; only when it does not are all children ranked again.
//
// Invariant while Valid(): in the forward direction every child is positioned
// at its first entry after the current one in (key, child) order, or at the
// current one (the current child); backward, at its last entry before it.
// runner_up_ is the valid child that would come next in the direction of
// travel if current_ were gone (kNone if current_ is the only valid one).

#include <cassert>
#include <memory>
#include <utility>
#include <vector>

#include "table/iterators.h"

namespace sift {
namespace {

class MergingIterator final : public Iterator {
 public:
  MergingIterator(const Comparator* comparator,
                  std::vector<std::unique_ptr<Iterator>> children)
      : comparator_(comparator), children_(std::move(children)) {}

  bool Valid() const override { return current_ != nullptr; }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    for (size_t i = 0; i < children_.size(); ++i) {
      children_[i]->SeekToFirst();
      if (!CheckChild(i)) return;
    }
    direction_ = kForward;
    Rank();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    for (size_t i = 0; i < children_.size(); ++i) {
      children_[i]->SeekToLast();
      if (!CheckChild(i)) return;
    }
    direction_ = kReverse;
    Rank();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    for (size_t i = 0; i < children_.size(); ++i) {
      children_[i]->Seek(target);
      if (!CheckChild(i)) return;
    }
    direction_ = kForward;
    Rank();
  }

  void Next() override {
    assert(Valid());
    if (direction_ != kForward) {
      // Children other than the current one sit before it; move each to its
      // first entry after (key(), current child).
      const std::string saved(current_->key());
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i == current_index_) continue;
        Iterator* child = children_[i].get();
        child->Seek(saved);
        if (i < current_index_) {
          // An equal key in an earlier child comes before the current entry.
          while (child->Valid() &&
                 comparator_->Compare(child->key(), saved) == 0) {
            child->Next();
          }
        }
        if (!CheckChild(i)) return;
      }
      direction_ = kForward;
      Rank();
    }
    current_->Next();
    if (!CheckChild(current_index_)) return;
    AfterStep();
  }

  void Prev() override {
    assert(Valid());
    if (direction_ != kReverse) {
      // Children other than the current one sit after it; move each to its
      // last entry before (key(), current child).
      const std::string saved(current_->key());
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i == current_index_) continue;
        Iterator* child = children_[i].get();
        child->Seek(saved);
        if (!CheckChild(i)) return;
        // An equal key in an earlier child comes before the current entry and
        // stays; anything else at or after `saved` is stepped back over.
        const bool keep = i < current_index_ && child->Valid() &&
                          comparator_->Compare(child->key(), saved) == 0;
        if (keep) continue;
        if (child->Valid()) {
          child->Prev();
        } else {
          child->SeekToLast();
        }
        // A child can grow while it is read (a memtable takes writes newer
        // than any reader's sequence): what SeekToLast finds may have been
        // added after the Seek found nothing at or after `saved`. Step back
        // over anything that does not come before the current entry.
        while (child->Valid() &&
               !BeforeInReverse(i, child->key(), saved, current_index_)) {
          child->Prev();
        }
        if (!CheckChild(i)) return;
      }
      direction_ = kReverse;
      Rank();
    }
    current_->Prev();
    if (!CheckChild(current_index_)) return;
    AfterStep();
  }

  std::string_view key() const override {
    assert(Valid());
    return current_->key();
  }
  std::string_view value() const override {
    assert(Valid());
    return current_->value();
  }
  absl::Status status() const override { return status_; }

 private:
  enum Direction { kForward, kReverse };

  // After child i moved: if it stopped on an error, the whole merge stops
  // there (skipping a failed child would silently drop its entries).
  bool CheckChild(size_t i) {
    Iterator* child = children_[i].get();
    if (child->Valid()) return true;
    absl::Status s = child->status();
    if (s.ok()) return true;
    status_ = std::move(s);
    current_ = nullptr;
    return false;
  }

  static constexpr size_t kNone = ~size_t{0};

  // True if child i's entry comes before child j's in the direction of
  // travel. Forward: by key, ties to the earlier child; backward, the mirror
  // image (larger key first, ties to the later child).
  bool First(size_t i, size_t j) const {
    const int c =
        comparator_->Compare(children_[i]->key(), children_[j]->key());
    return direction_ == kForward ? (c < 0 || (c == 0 && i < j))
                                  : (c > 0 || (c == 0 && i > j));
  }

  // True if child i's entry `key` comes before (saved, child current) in
  // the (key, child) order, that is, after it going backward.
  bool BeforeInReverse(size_t i, std::string_view key, std::string_view saved,
                       size_t current) const {
    const int c = comparator_->Compare(key, saved);
    return c < 0 || (c == 0 && i < current);
  }

  // Rank every valid child: the first in the direction of travel becomes
  // current_, the next runner_up_.
  void Rank() {
    current_ = nullptr;
    runner_up_ = kNone;
    for (size_t i = 0; i < children_.size(); ++i) {
      if (!children_[i]->Valid()) continue;
      if (current_ == nullptr) {
        current_ = children_[i].get();
        current_index_ = i;
      } else if (First(i, current_index_)) {
        runner_up_ = current_index_;
        current_ = children_[i].get();
        current_index_ = i;
      } else if (runner_up_ == kNone || First(i, runner_up_)) {
        runner_up_ = i;
      }
    }
  }

  // After current_ stepped in the direction of travel: it stays first if it
  // still comes before the runner-up (which comes before every other child).
  void AfterStep() {
    if (!current_->Valid()) return Rank();
    if (runner_up_ != kNone && !First(current_index_, runner_up_)) Rank();
  }

  const Comparator* const comparator_;
  std::vector<std::unique_ptr<Iterator>> children_;
  Iterator* current_ = nullptr;
  size_t current_index_ = 0;
  size_t runner_up_ = kNone;
  Direction direction_ = kForward;
  absl::Status status_;  // first child error met; sticky
};

}  // namespace

std::unique_ptr<Iterator> NewMergingIterator(
    const Comparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children) {
  if (children.empty()) return NewEmptyIterator();
  if (children.size() == 1) return std::move(children[0]);
  return std::make_unique<MergingIterator>(comparator, std::move(children));
}

}  // namespace sift
