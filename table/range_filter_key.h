#ifndef SIFT_TABLE_RANGE_FILTER_KEY_H_
#define SIFT_TABLE_RANGE_FILTER_KEY_H_

// How a table's range filter (filter/range_filter.h), which indexes 64-bit
// integers, covers byte-string keys: every key of a table starts with the
// table's common prefix P (the longest common prefix of its smallest and
// largest filter keys); a key maps to the d bytes after P as a big-endian
// integer, shorter keys padded with zero bytes, where d = min(8, longest key
// - |P|) (KeyBytesFor). The map is monotone over keys that start with P, so
// a key range maps to an integer range that holds the images of all its
// keys; and keys that are fixed-width big-endian integers (after P) map to
// themselves, so a range of L consecutive integers stays L integers wide
// (doc/table_format.md, "Range filter").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sift {

class RangeFilterKeyMap {
 public:
  // The map of a table whose smallest and largest filter keys are given, and
  // whose images are key_bytes long. REQUIRES: key_bytes <= 8.
  RangeFilterKeyMap(std::string_view smallest, std::string_view largest,
                    uint32_t key_bytes);

  // The common prefix of `smallest` and `largest`.
  static size_t CommonPrefixLength(std::string_view smallest,
                                   std::string_view largest);
  // d for a table whose longest filter key is `longest_key` bytes.
  static uint32_t KeyBytesFor(size_t common_prefix, size_t longest_key);

  // The image of a key that starts with the common prefix.
  uint64_t Map(std::string_view key) const;

  // The integers [*lo, *hi] holding the image of every key k of the table
  // with lower <= k < upper (std::nullopt: that side open); false if no key
  // of the table can lie in the range at all.
  bool MapRange(std::optional<std::string_view> lower,
                std::optional<std::string_view> upper, uint64_t* lo,
                uint64_t* hi) const;

  size_t prefix_length() const { return prefix_.size(); }

 private:
  std::string prefix_;
  uint32_t key_bytes_;
};

}  // namespace sift

#endif  // SIFT_TABLE_RANGE_FILTER_KEY_H_
