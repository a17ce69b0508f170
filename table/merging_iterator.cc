// The merging iterator: a k-way merge of sorted children.
//
// Order: entries are yielded sorted by (key, child index), so equal keys from
// different children come out earlier child first going forward, and in the
// mirror order going backward.
//
// The DB merges a few memtables and level-0 tables plus one iterator per
// deeper level, few enough that a sorted array beats a heap's bookkeeping:
// the valid children are kept in order of their current entries (first in
// the direction of travel at the front), each with its key. A step moves the
// front child and sinks it past the children now before it: one comparison
// when it stays first (the deepest level holds most keys, so runs of entries
// come from one child), one more per child it passes. The cached keys spare
// the comparisons and key() the virtual calls down each child's stack of
// iterators (a level iterator, its table's, its block's).
//
// Invariants while status_ is OK: slots_[0, valid_) holds every valid child
// once, with key == its child's key(), sorted by Before(); current_ is the
// child of slots_[0] (nullptr when valid_ == 0). Forward, every child is at
// its first entry after the current one in (key, child) order, or at the
// current one (the current child); backward, at its last entry before it.
// Only this class moves the children, and every move ends by refreshing the
// slots (a child's key view lives until the child moves).

#include <cassert>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "table/iterators.h"

namespace sift {
namespace {

class MergingIterator final : public Iterator {
 public:
  MergingIterator(const Comparator* comparator, IteratorList&& children)
      : order_(comparator), children_(std::move(children)) {
    if (children_.size() > kInlineSlots) {
      heap_slots_ = std::make_unique<Slot[]>(children_.size());
      slots_ = heap_slots_.get();
    }
  }

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
      const size_t current = slots_[0].child;
      const std::string saved(slots_[0].key);
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i == current) continue;
        Iterator* child = children_[i].get();
        child->Seek(saved);
        if (i < current) {
          // An equal key in an earlier child comes before the current entry.
          while (child->Valid() && order_.Compare(child->key(), saved) == 0) {
            child->Next();
          }
        }
        if (!CheckChild(i)) return;
      }
      direction_ = kForward;
      Rank();  // the current child stays in front: the others are after it
    }
    current_->Next();
    AfterStep();
  }

  void Prev() override {
    assert(Valid());
    if (direction_ != kReverse) {
      // Children other than the current one sit after it; move each to its
      // last entry before (key(), current child).
      const size_t current = slots_[0].child;
      const std::string saved(slots_[0].key);
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i == current) continue;
        Iterator* child = children_[i].get();
        child->Seek(saved);
        if (!CheckChild(i)) return;
        // An equal key in an earlier child comes before the current entry and
        // stays; anything else at or after `saved` is stepped back over.
        const bool keep = i < current && child->Valid() &&
                          order_.Compare(child->key(), saved) == 0;
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
               !BeforeInReverse(i, child->key(), saved, current)) {
          child->Prev();
        }
        if (!CheckChild(i)) return;
      }
      direction_ = kReverse;
      Rank();
    }
    current_->Prev();
    AfterStep();
  }

  std::string_view key() const override {
    assert(Valid());
    return slots_[0].key;
  }
  std::string_view value() const override {
    assert(Valid());
    return current_->value();
  }
  absl::Status status() const override { return status_; }

 private:
  enum Direction { kForward, kReverse };

  // A valid child and its current key.
  struct Slot {
    std::string_view key;
    size_t child;
  };
  // Merges of up to this many children keep their slots inside the iterator.
  static constexpr size_t kInlineSlots = 8;

  // After child i moved: if it stopped on an error, the whole merge stops
  // there (skipping a failed child would silently drop its entries).
  bool CheckChild(size_t i) {
    Iterator* child = children_[i].get();
    if (child->Valid()) return true;
    absl::Status s = child->status();
    if (s.ok()) return true;
    Stop(std::move(s));
    return false;
  }

  void Stop(absl::Status s) {
    status_ = std::move(s);
    valid_ = 0;
    current_ = nullptr;
  }

  // True if slot a's entry comes before slot b's in the direction of
  // travel. Forward: by key, ties to the earlier child; backward, the mirror
  // image (larger key first, ties to the later child).
  bool Before(const Slot& a, const Slot& b) const {
    const int c = order_.Compare(a.key, b.key);
    return direction_ == kForward ? (c < 0 || (c == 0 && a.child < b.child))
                                  : (c > 0 || (c == 0 && a.child > b.child));
  }

  // True if child i's entry `key` comes before (saved, child current) in
  // the (key, child) order, that is, after it going backward.
  bool BeforeInReverse(size_t i, std::string_view key, std::string_view saved,
                       size_t current) const {
    const int c = order_.Compare(key, saved);
    return c < 0 || (c == 0 && i < current);
  }

  // Sorts every valid child into the slots (insertion: the children are
  // few).
  void Rank() {
    valid_ = 0;
    for (size_t i = 0; i < children_.size(); ++i) {
      Iterator* child = children_[i].get();
      if (!child->Valid()) continue;
      const Slot slot{child->key(), i};
      size_t j = valid_++;
      for (; j > 0 && Before(slot, slots_[j - 1]); --j)
        slots_[j] = slots_[j - 1];
      slots_[j] = slot;
    }
    current_ = valid_ > 0 ? children_[slots_[0].child].get() : nullptr;
  }

  // After current_ stepped in the direction of travel: drops it if it ran
  // out (or failed), else sinks its slot past the children now before it.
  void AfterStep() {
    if (!current_->Valid()) {
      if (!CheckChild(slots_[0].child)) return;
      for (size_t j = 1; j < valid_; ++j) slots_[j - 1] = slots_[j];
      --valid_;
    } else {
      const Slot slot{current_->key(), slots_[0].child};
      size_t j = 0;
      for (; j + 1 < valid_ && Before(slots_[j + 1], slot); ++j) {
        slots_[j] = slots_[j + 1];
      }
      slots_[j] = slot;
    }
    current_ = valid_ > 0 ? children_[slots_[0].child].get() : nullptr;
  }

  const KeyOrder order_;
  IteratorList children_;
  Slot inline_slots_[kInlineSlots];
  std::unique_ptr<Slot[]> heap_slots_;  // when there are more children
  Slot* slots_ = inline_slots_;
  size_t valid_ = 0;
  Iterator* current_ = nullptr;
  Direction direction_ = kForward;
  absl::Status status_;  // first child error met; sticky
};

}  // namespace

std::unique_ptr<Iterator> NewMergingIterator(const Comparator* comparator,
                                             IteratorList&& children) {
  if (children.empty()) return NewEmptyIterator();
  if (children.size() == 1) return std::move(children[0]);
  return std::make_unique<MergingIterator>(comparator, std::move(children));
}

}  // namespace sift
