// The benchmark data generators: a fill order that writes every key once.

#include "bench/kvbench/keys.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sift::bench {
namespace {

// Keys are zero-padded decimals of 2i (present) and 2i + 1 (missing), as
// snprintf writes them, at every width from the narrowest Validate allows.
TEST(KeySpaceTest, KeysAreZeroPaddedDecimals) {
  for (const int key_size : {7, 8, 16, 20}) {
    const KeySpace keys(1000000, key_size);
    ASSERT_TRUE(KeySpace::Validate(1000000, key_size).ok()) << key_size;
    for (const uint64_t i : {0ULL, 1ULL, 4ULL, 5ULL, 9ULL, 49ULL, 50ULL, 99ULL,
                             500ULL, 4999ULL, 123456ULL, 999999ULL}) {
      for (const bool missing : {false, true}) {
        char expected[32];
        std::snprintf(
            expected, sizeof(expected), "%0*llu", key_size,
            static_cast<unsigned long long>(2 * i + (missing ? 1 : 0)));
        EXPECT_EQ(missing ? keys.MissingKey(i) : keys.PresentKey(i),
                  std::string(expected))
            << "key_size " << key_size << " i " << i;
      }
    }
  }
  EXPECT_FALSE(KeySpace::Validate(1000000, 6).ok());
}

// Every element of [0, num) appears exactly once, for sizes around the
// powers of two where the Feistel domain changes and for sizes that leave most
// of the domain outside [0, num) (the cycle walk's worst case).
TEST(RandomOrderTest, IsAPermutation) {
  for (const uint64_t num :
       {1ULL, 2ULL, 3ULL, 4ULL, 5ULL, 7ULL, 8ULL, 9ULL, 15ULL, 16ULL, 17ULL,
        255ULL, 256ULL, 257ULL, 1000ULL, 4097ULL, 65536ULL, 100003ULL}) {
    const RandomOrder order(num, 301);
    std::vector<bool> seen(num, false);
    for (uint64_t i = 0; i < num; ++i) {
      const uint64_t x = order.At(i);
      ASSERT_LT(x, num) << "num " << num << " i " << i;
      ASSERT_FALSE(seen[x]) << "num " << num << " repeats " << x;
      seen[x] = true;
    }
  }
}

// The order is a function of the seed: equal seeds agree, other seeds differ,
// and the order is not the identity (a fill in key order would be fillseq).
TEST(RandomOrderTest, DependsOnSeedAndShuffles) {
  constexpr uint64_t kNum = 10000;
  const RandomOrder a(kNum, 7);
  const RandomOrder b(kNum, 7);
  const RandomOrder c(kNum, 8);
  uint64_t differ = 0;
  uint64_t fixed_points = 0;
  uint64_t ascents = 0;
  for (uint64_t i = 0; i < kNum; ++i) {
    ASSERT_EQ(a.At(i), b.At(i));
    if (a.At(i) != c.At(i)) ++differ;
    if (a.At(i) == i) ++fixed_points;
    if (i > 0 && a.At(i) > a.At(i - 1)) ++ascents;
  }
  EXPECT_GT(differ, kNum * 9 / 10);
  // A random permutation has one fixed point on average and about half of
  // its neighbours ascending.
  EXPECT_LT(fixed_points, 20u);
  EXPECT_GT(ascents, kNum * 4 / 10);
  EXPECT_LT(ascents, kNum * 6 / 10);
}

}  // namespace
}  // namespace sift::bench
