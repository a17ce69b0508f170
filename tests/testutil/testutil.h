#ifndef SIFT_TESTS_TESTUTIL_TESTUTIL_H_
#define SIFT_TESTS_TESTUTIL_TESTUTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "util/comparator.h"
#include "util/random.h"

namespace sift::test {

// A key of `len` characters from [a-z0-9].
std::string RandomKey(Random* rnd, int len);
// A value of `len` printable characters.
std::string RandomString(Random* rnd, int len);
// `n` as zero-padded decimal text of `width` digits: ordered like the numbers.
std::string NumberKey(uint64_t n, int width = 16);

// Bytewise order reversed: a comparator other than the bytewise one, for
// tests of code that takes a fast path only under the bytewise order.
// Its separators and successors leave the key as it is (always valid).
class ReverseComparator final : public Comparator {
 public:
  int Compare(std::string_view a, std::string_view b) const override;
  const char* Name() const override { return "test.Reverse"; }
  void FindShortestSeparator(std::string*, std::string_view) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

}  // namespace sift::test

#endif  // SIFT_TESTS_TESTUTIL_TESTUTIL_H_
