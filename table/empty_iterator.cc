#include <cassert>
#include <memory>
#include <utility>

#include "table/iterators.h"

namespace sift {
namespace {

// Never Valid(); reports the status it was made with.
class EmptyIterator final : public Iterator {
 public:
  explicit EmptyIterator(absl::Status status) : status_(std::move(status)) {}

  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(std::string_view) override {}
  void Next() override { assert(false); }
  void Prev() override { assert(false); }
  std::string_view key() const override {
    assert(false);
    return {};
  }
  std::string_view value() const override {
    assert(false);
    return {};
  }
  absl::Status status() const override { return status_; }

 private:
  const absl::Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewEmptyIterator(absl::Status status) {
  return std::make_unique<EmptyIterator>(std::move(status));
}

}  // namespace sift
