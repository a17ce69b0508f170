#ifndef SIFT_TESTS_TABLE_VECTOR_ITERATOR_H_
#define SIFT_TESTS_TABLE_VECTOR_ITERATOR_H_

// An Iterator over a sorted vector, the model the combining iterators are
// checked against. It can be told to fail when it reaches a given entry.

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sift/iterator.h"

namespace sift::test {

using KVs = std::vector<std::pair<std::string, std::string>>;

class VectorIterator final : public Iterator {
 public:
  // `kvs` sorted by key (bytewise), keys distinct. Reaching entry `fail_at`
  // (if >= 0) turns the iterator into a failed one.
  explicit VectorIterator(KVs kvs, int fail_at = -1)
      : kvs_(std::move(kvs)), fail_at_(fail_at), pos_(kvs_.size()) {}

  bool Valid() const override { return status_.ok() && pos_ < kvs_.size(); }
  void SeekToFirst() override { Land(0); }
  void SeekToLast() override { Land(kvs_.empty() ? 0 : kvs_.size() - 1); }
  void Seek(std::string_view target) override {
    auto it = std::lower_bound(
        kvs_.begin(), kvs_.end(), target,
        [](const auto& kv, std::string_view t) { return kv.first < t; });
    Land(it - kvs_.begin());
  }
  void Next() override {
    assert(Valid());
    Land(pos_ + 1);
  }
  void Prev() override {
    assert(Valid());
    Land(pos_ == 0 ? kvs_.size() : pos_ - 1);
  }
  std::string_view key() const override { return kvs_[pos_].first; }
  std::string_view value() const override { return kvs_[pos_].second; }
  absl::Status status() const override { return status_; }

 private:
  void Land(size_t pos) {
    if (!status_.ok()) return;
    pos_ = std::min(pos, kvs_.size());
    if (fail_at_ >= 0 && pos_ == static_cast<size_t>(fail_at_)) {
      status_ = absl::DataLossError("injected failure");
    }
  }

  const KVs kvs_;
  const int fail_at_;
  size_t pos_;
  absl::Status status_;
};

}  // namespace sift::test

#endif  // SIFT_TESTS_TABLE_VECTOR_ITERATOR_H_
