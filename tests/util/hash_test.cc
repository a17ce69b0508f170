#include "util/hash.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace sift {
namespace {

// Bytes from a xorshift64 generator starting at 1 (low byte of each state).
std::string XorshiftBytes(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

// Published XXH3-64 values (seed 0). Filters and checksums on disk depend on
// these never changing.
TEST(HashTest, MatchesPublishedXxh3Values) {
  EXPECT_EQ(Hash64(""), 0x2D06800538D394C2ULL);
  EXPECT_EQ(Hash64("a"), 0xE6C632B61E964E1FULL);
  EXPECT_EQ(Hash64("abc"), 0x78AF5F94892F3950ULL);
  // Lengths that take the 1-3, 4-8, 9-16, 17-128 byte code paths.
  const std::string buf = XorshiftBytes(64);
  EXPECT_EQ(Hash64(std::string_view(buf).substr(0, 1)), 0xd0d496e05c553485ULL);
  EXPECT_EQ(Hash64(std::string_view(buf).substr(0, 5)), 0xc01fd099ad4fc8e4ULL);
  EXPECT_EQ(Hash64(std::string_view(buf).substr(0, 16)), 0x7e46916754d7c9b8ULL);
  EXPECT_EQ(Hash64(std::string_view(buf).substr(0, 17)), 0xed4be912ba5f836dULL);
  EXPECT_EQ(Hash64(buf), 0xfa5271fcce0db1c3ULL);
}

TEST(HashTest, ChecksumIsLowBitsOfHash) {
  const std::string data = XorshiftBytes(4096);
  EXPECT_EQ(Checksum32(data), static_cast<uint32_t>(Hash64(data)));
  EXPECT_EQ(Checksum32(""), 0x38D394C2u);
}

TEST(HashTest, SeedAndInputChangeTheHash) {
  EXPECT_EQ(Hash64("key", 7), Hash64("key", 7));
  EXPECT_NE(Hash64("key", 0), Hash64("key", 1));
  EXPECT_NE(Hash64("key"), Hash64("kez"));
  // Large inputs (the long-input path) are hashed deterministically too.
  const std::string big = XorshiftBytes(100000);
  std::string flipped = big;
  flipped[50000] ^= 1;
  EXPECT_EQ(Hash64(big), Hash64(XorshiftBytes(100000)));
  EXPECT_NE(Hash64(big), Hash64(flipped));
  EXPECT_NE(Checksum32(big), Checksum32(flipped));
}

}  // namespace
}  // namespace sift
