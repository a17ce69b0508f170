#ifndef SIFT_TESTS_TESTUTIL_TESTUTIL_H_
#define SIFT_TESTS_TESTUTIL_TESTUTIL_H_

#include <cstdint>
#include <string>

#include "util/random.h"

namespace sift::test {

// A key of `len` characters from [a-z0-9].
std::string RandomKey(Random* rnd, int len);
// A value of `len` printable characters.
std::string RandomString(Random* rnd, int len);
// `n` as zero-padded decimal text of `width` digits: ordered like the numbers.
std::string NumberKey(uint64_t n, int width = 16);

}  // namespace sift::test

#endif  // SIFT_TESTS_TESTUTIL_TESTUTIL_H_
