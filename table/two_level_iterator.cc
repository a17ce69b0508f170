// The two-level iterator: walks an index iterator and, for each index value,
// the second-level iterator built from it, as one sequence.
//
// Invariant while Valid(): the index is positioned at the entry whose value
// built second_, and second_ is Valid(). Empty second-level iterators are
// stepped over in the direction of travel. Any error, from the index or from a
// second-level iterator, stops the iteration (sticky): skipping a failed block
// would silently drop its entries.

#include <cassert>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "table/iterators.h"

namespace sift {
namespace {

class TwoLevelIterator final : public Iterator {
 public:
  using MakeSecond =
      std::function<std::unique_ptr<Iterator>(std::string_view index_value)>;

  TwoLevelIterator(std::unique_ptr<Iterator> index, MakeSecond make_second)
      : index_(std::move(index)), make_second_(std::move(make_second)) {}

  bool Valid() const override {
    return status_.ok() && second_ != nullptr && second_->Valid();
  }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    index_->SeekToFirst();
    if (!InitSecond()) return;
    if (second_ != nullptr) second_->SeekToFirst();
    SkipEmptyForward();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    index_->SeekToLast();
    if (!InitSecond()) return;
    if (second_ != nullptr) second_->SeekToLast();
    SkipEmptyBackward();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    index_->Seek(target);
    if (!InitSecond()) return;
    if (second_ != nullptr) second_->Seek(target);
    SkipEmptyForward();
  }

  void Next() override {
    assert(Valid());
    second_->Next();
    SkipEmptyForward();
  }

  void Prev() override {
    assert(Valid());
    second_->Prev();
    SkipEmptyBackward();
  }

  std::string_view key() const override {
    assert(Valid());
    return second_->key();
  }
  std::string_view value() const override {
    assert(Valid());
    return second_->value();
  }
  absl::Status status() const override { return status_; }

 private:
  // Record an error and stop. Returns false for use in conditions.
  bool Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
    second_.reset();
    second_value_.clear();
    return false;
  }

  // True if second_ stopped without an error (it may be exhausted).
  bool SecondOk() {
    if (second_ == nullptr || second_->Valid()) return true;
    absl::Status s = second_->status();
    return s.ok() || Fail(std::move(s));
  }

  // Build second_ for the index's current value (reusing the current one if
  // the value is unchanged, so seeks within one block do not reload it).
  // False on an error.
  bool InitSecond() {
    if (!index_->Valid()) {
      absl::Status s = index_->status();
      if (!s.ok()) return Fail(std::move(s));
      second_.reset();
      second_value_.clear();
      return true;
    }
    const std::string_view value = index_->value();
    if (second_ != nullptr && value == second_value_) return true;
    second_value_.assign(value.data(), value.size());
    second_ = make_second_(second_value_);
    // An iterator that failed to build reports it at once.
    absl::Status s = second_->status();
    return s.ok() || Fail(std::move(s));
  }

  void SkipEmptyForward() {
    while (true) {
      if (!SecondOk()) return;
      if (second_ == nullptr || second_->Valid()) return;
      index_->Next();
      if (!InitSecond()) return;
      if (second_ != nullptr) second_->SeekToFirst();
    }
  }

  void SkipEmptyBackward() {
    while (true) {
      if (!SecondOk()) return;
      if (second_ == nullptr || second_->Valid()) return;
      index_->Prev();
      if (!InitSecond()) return;
      if (second_ != nullptr) second_->SeekToLast();
    }
  }

  std::unique_ptr<Iterator> index_;
  MakeSecond make_second_;
  std::unique_ptr<Iterator> second_;  // nullptr: index not Valid()
  std::string second_value_;          // the index value second_ came from
  absl::Status status_;               // first error met; sticky
};

}  // namespace

std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index,
    std::function<std::unique_ptr<Iterator>(std::string_view index_value)>
        make_second) {
  return std::make_unique<TwoLevelIterator>(std::move(index),
                                            std::move(make_second));
}

}  // namespace sift
