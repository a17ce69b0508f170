#ifndef SIFT_UTIL_COMPARATOR_H_
#define SIFT_UTIL_COMPARATOR_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sift {

// A total order on keys, used by blocks, tables and the DB's internal keys.
//
// Thread safety: implementations must be safe for concurrent use (they are
// stateless in practice).
class Comparator {
 public:
  virtual ~Comparator() = default;

  // <0, 0, >0 as a is before, equal to, after b.
  virtual int Compare(std::string_view a, std::string_view b) const = 0;

  // Stored in table properties so a table is never read with another order.
  virtual const char* Name() const = 0;

  // If *start < limit, change *start to a short key in [*start, limit).
  // Used to keep index blocks small. Leaving *start alone is correct.
  virtual void FindShortestSeparator(std::string* start,
                                     std::string_view limit) const = 0;
  // Change *key to a short key >= *key. Leaving it alone is correct.
  virtual void FindShortSuccessor(std::string* key) const = 0;

  // Where this order puts first a part of the key in bytewise order (for
  // all a, b whose parts differ, Compare(a, b) has the sign of
  // CompareBytes(part(a), part(b))), sets *part to that part of `key` (a view
  // into it) and returns true. A search can then compare words of the parts
  // it holds in memory (BytewiseOrderWord) before it touches the keys.
  // Returns false where the order has no such part (the default) or `key`
  // is malformed.
  virtual bool BytewisePart(std::string_view /*key*/,
                            std::string_view* /*part*/) const {
    return false;
  }

  // Where BytewisePart is, for every key it accepts, the key without its
  // last n bytes (n fixed by the order: 0 for the bytewise order, 8 for
  // internal keys over it) and it accepts every key of at least n bytes,
  // returns n; otherwise -1 (the default). KeyOrder uses it to compare
  // parts inline.
  virtual int BytewisePartSuffix() const { return -1; }
};

// A word of bytes in bytewise order: the first eight as a big-endian number,
// zero-padded. Where two words differ, so do the bytes, the same way: the
// first differing byte is either a byte of both, which orders them, or a pad
// (0) against a nonzero byte of the longer, of which the shorter is then a
// prefix.
inline uint64_t BytewiseOrderWord(std::string_view key) {
  unsigned char b[8] = {};
  std::memcpy(b, key.data(), key.size() < 8 ? key.size() : 8);
  uint64_t w;
  std::memcpy(&w, b, 8);
  if constexpr (std::endian::native == std::endian::little) {
    w = __builtin_bswap64(w);
  }
  return w;
}

// Lexicographic unsigned-byte order. Owned by the library; never destroyed.
const Comparator* BytewiseComparator();

// The bytewise order, inline: <0, 0, >0 as a is before, equal to, after b.
// Keys are compared eight bytes at a time as big-endian words. Searches of
// short keys (16-byte keys are common) spend more in a call to memcmp than
// in comparing.
inline int CompareBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    uint64_t y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) {
      if constexpr (std::endian::native == std::endian::little) {
        x = __builtin_bswap64(x);
        y = __builtin_bswap64(y);
      }
      return x < y ? -1 : 1;
    }
  }
  for (; i < n; ++i) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// A comparator's order with its common case inline: where the order has a
// bytewise part of fixed suffix (Comparator::BytewisePartSuffix), keys whose
// parts differ (keys of different user keys, in a DB) compare by
// CompareBytes, without a virtual call; only others reach
// Comparator::Compare. Scans and merges compare on every step, and the call
// cost more than comparing 16-byte keys.
//
// Thread safety: immutable; the comparator must outlive it.
class KeyOrder {
 public:
  explicit KeyOrder(const Comparator* comparator)
      : comparator_(comparator), suffix_(comparator->BytewisePartSuffix()) {}

  // The sign of comparator()->Compare(a, b).
  int Compare(std::string_view a, std::string_view b) const {
    if (suffix_ >= 0) {
      const auto n = static_cast<size_t>(suffix_);
      if (a.size() >= n && b.size() >= n) {
        const int c =
            CompareBytes(a.substr(0, a.size() - n), b.substr(0, b.size() - n));
        if (c != 0 || n == 0) return c;
      }
    }
    return comparator_->Compare(a, b);
  }

  const Comparator* comparator() const { return comparator_; }

 private:
  const Comparator* comparator_;
  int suffix_;
};

}  // namespace sift

#endif  // SIFT_UTIL_COMPARATOR_H_
