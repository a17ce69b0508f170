#include "table/range_filter_key.h"

#include <algorithm>

namespace sift {

size_t RangeFilterKeyMap::CommonPrefixLength(std::string_view smallest,
                                             std::string_view largest) {
  const size_t n = std::min(smallest.size(), largest.size());
  size_t common = 0;
  while (common < n && smallest[common] == largest[common]) ++common;
  return common;
}

uint32_t RangeFilterKeyMap::KeyBytesFor(size_t common_prefix,
                                        size_t longest_key) {
  return static_cast<uint32_t>(std::min<size_t>(
      8, longest_key > common_prefix ? longest_key - common_prefix : 0));
}

RangeFilterKeyMap::RangeFilterKeyMap(std::string_view smallest,
                                     std::string_view largest,
                                     uint32_t key_bytes)
    : prefix_(smallest.substr(0, CommonPrefixLength(smallest, largest))),
      key_bytes_(std::min<uint32_t>(key_bytes, 8)) {}

uint64_t RangeFilterKeyMap::Map(std::string_view key) const {
  uint64_t v = 0;
  for (size_t i = 0; i < key_bytes_; ++i) {
    const size_t at = prefix_.size() + i;
    v = (v << 8) | (at < key.size() ? static_cast<uint8_t>(key[at]) : 0);
  }
  return v;
}

bool RangeFilterKeyMap::MapRange(std::optional<std::string_view> lower,
                                 std::optional<std::string_view> upper,
                                 uint64_t* lo, uint64_t* hi) const {
  const std::string_view p = prefix_;
  *lo = 0;
  *hi = ~uint64_t{0};
  if (lower.has_value()) {
    if (lower->starts_with(p)) {
      *lo = Map(*lower);
    } else if (*lower > p) {
      return false;  // after every key that starts with p
    }
  }
  if (upper.has_value()) {
    if (upper->starts_with(p)) {
      if (upper->size() == p.size()) return false;  // before every key
      *hi = Map(*upper);
      // A key below `upper` maps at most to upper's image, and to exactly
      // it only if it is upper with trailing zero bytes cut off (it cannot
      // be longer than upper and share the window when upper ends inside
      // the window): so with a last byte other than zero, one below.
      if (upper->size() - p.size() <= key_bytes_ && upper->back() != 0) {
        --*hi;
      }
    } else if (*upper < p) {
      return false;  // before every key that starts with p
    }
  }
  return *lo <= *hi;
}

}  // namespace sift
