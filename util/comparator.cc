#include "util/comparator.h"

#include <algorithm>

namespace sift {
namespace {

class BytewiseComparatorImpl final : public Comparator {
 public:
  int Compare(std::string_view a, std::string_view b) const override {
    return CompareBytes(a, b);
  }
  const char* Name() const override { return "sift.BytewiseComparator"; }
  bool BytewisePart(std::string_view key,
                    std::string_view* part) const override {
    *part = key;
    return true;
  }
  int BytewisePartSuffix() const override { return 0; }

  void FindShortestSeparator(std::string* start,
                             std::string_view limit) const override {
    const size_t min_len = std::min(start->size(), limit.size());
    size_t diff = 0;
    while (diff < min_len && (*start)[diff] == limit[diff]) ++diff;
    if (diff >= min_len) return;  // one is a prefix of the other
    const auto byte = static_cast<uint8_t>((*start)[diff]);
    if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[diff])) {
      (*start)[diff] = static_cast<char>(byte + 1);
      start->resize(diff + 1);
    }
  }

  void FindShortSuccessor(std::string* key) const override {
    for (size_t i = 0; i < key->size(); ++i) {
      const auto byte = static_cast<uint8_t>((*key)[i]);
      if (byte != 0xff) {
        (*key)[i] = static_cast<char>(byte + 1);
        key->resize(i + 1);
        return;
      }
    }
    // All 0xff: leave it alone.
  }
};

}  // namespace

const Comparator* BytewiseComparator() {
  static const BytewiseComparatorImpl* const kInstance =
      new BytewiseComparatorImpl;
  return kInstance;
}

}  // namespace sift
