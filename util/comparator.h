#ifndef SIFT_UTIL_COMPARATOR_H_
#define SIFT_UTIL_COMPARATOR_H_

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
};

// Lexicographic unsigned-byte order. Owned by the library; never destroyed.
const Comparator* BytewiseComparator();

}  // namespace sift

#endif  // SIFT_UTIL_COMPARATOR_H_
