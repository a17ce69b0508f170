#include "util/coding.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace sift {
namespace {

// 0, 1, and 2^k - 1, 2^k for every k that fits: every varint width and both
// sides of every width boundary.
std::vector<uint64_t> BoundaryValues64() {
  std::vector<uint64_t> v = {0, 1, std::numeric_limits<uint64_t>::max()};
  for (int k = 1; k < 64; ++k) {
    v.push_back((uint64_t{1} << k) - 1);
    v.push_back(uint64_t{1} << k);
  }
  return v;
}

TEST(CodingTest, Fixed32RoundTripAndLayout) {
  std::string s;
  const std::vector<uint32_t> values = {
      0, 1, 0xff, 0x100, 0x12345678, 0x7fffffff, 0x80000000, 0xffffffff};
  for (uint32_t v : values) PutFixed32(&s, v);
  ASSERT_EQ(s.size(), 4 * values.size());
  // Little-endian on every platform.
  EXPECT_EQ(std::string_view(s).substr(16, 4),
            std::string("\x78\x56\x34\x12", 4));
  std::string_view in(s);
  for (uint32_t v : values) {
    uint32_t got = 0;
    ASSERT_TRUE(GetFixed32(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, Fixed64RoundTripAndLayout) {
  std::string s;
  const std::vector<uint64_t> values = BoundaryValues64();
  for (uint64_t v : values) PutFixed64(&s, v);
  ASSERT_EQ(s.size(), 8 * values.size());
  std::string one;
  PutFixed64(&one, 0x0102030405060708ULL);
  EXPECT_EQ(one, std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  std::string_view in(s);
  for (uint64_t v : values) {
    uint64_t got = 0;
    ASSERT_TRUE(GetFixed64(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, FixedRejectsShortInput) {
  std::string s;
  PutFixed64(&s, 42);
  for (size_t len = 0; len < 8; ++len) {
    std::string_view in(s.data(), len);
    uint64_t v64;
    EXPECT_FALSE(GetFixed64(&in, &v64)) << len;
    if (len < 4) {
      uint32_t v32;
      std::string_view in32(s.data(), len);
      EXPECT_FALSE(GetFixed32(&in32, &v32)) << len;
    }
  }
}

TEST(CodingTest, Varint32RoundTripEveryWidth) {
  std::string s;
  std::vector<uint32_t> values;
  for (uint64_t v : BoundaryValues64()) {
    if (v <= std::numeric_limits<uint32_t>::max()) {
      values.push_back(static_cast<uint32_t>(v));
    }
  }
  for (uint32_t v : values) {
    const size_t before = s.size();
    PutVarint32(&s, v);
    EXPECT_EQ(s.size() - before, static_cast<size_t>(VarintLength(v))) << v;
  }
  std::string_view in(s);
  for (uint32_t v : values) {
    uint32_t got = 0;
    ASSERT_TRUE(GetVarint32(&in, &got)) << v;
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, Varint64RoundTripEveryWidth) {
  std::string s;
  const std::vector<uint64_t> values = BoundaryValues64();
  for (uint64_t v : values) PutVarint64(&s, v);
  std::string_view in(s);
  for (uint64_t v : values) {
    uint64_t got = 0;
    ASSERT_TRUE(GetVarint64(&in, &got)) << v;
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, VarintLengthBoundaries) {
  EXPECT_EQ(VarintLength(0), 1);
  EXPECT_EQ(VarintLength(127), 1);
  EXPECT_EQ(VarintLength(128), 2);
  EXPECT_EQ(VarintLength((1u << 14) - 1), 2);
  EXPECT_EQ(VarintLength(1u << 14), 3);
  EXPECT_EQ(VarintLength(std::numeric_limits<uint32_t>::max()), 5);
  EXPECT_EQ(VarintLength(std::numeric_limits<uint64_t>::max()), 10);
  for (uint64_t v : BoundaryValues64()) {
    char buf[10];
    EXPECT_EQ(EncodeVarint64(buf, v) - buf, VarintLength(v)) << v;
  }
}

TEST(CodingTest, VarintPtrDecodesExactBuffer) {
  char buf[10];
  const char* end = EncodeVarint32(buf, 300);
  ASSERT_EQ(end - buf, 2);
  EXPECT_EQ(std::string(buf, 2), std::string("\xac\x02", 2));
  uint32_t v32 = 0;
  EXPECT_EQ(GetVarint32Ptr(buf, end, &v32), end);
  EXPECT_EQ(v32, 300u);
  end = EncodeVarint64(buf, uint64_t{1} << 63);
  uint64_t v64 = 0;
  EXPECT_EQ(GetVarint64Ptr(buf, end, &v64), end);
  EXPECT_EQ(v64, uint64_t{1} << 63);
}

TEST(CodingTest, TruncatedVarintsAreRejected) {
  for (uint64_t v : BoundaryValues64()) {
    std::string s;
    PutVarint64(&s, v);
    for (size_t len = 0; len < s.size(); ++len) {
      std::string_view in(s.data(), len);
      uint64_t got;
      EXPECT_FALSE(GetVarint64(&in, &got)) << v << " cut to " << len;
      EXPECT_EQ(GetVarint64Ptr(s.data(), s.data() + len, &got), nullptr);
    }
    if (v <= std::numeric_limits<uint32_t>::max()) {
      for (size_t len = 0; len < s.size(); ++len) {
        std::string_view in(s.data(), len);
        uint32_t got;
        EXPECT_FALSE(GetVarint32(&in, &got)) << v << " cut to " << len;
      }
    }
  }
}

TEST(CodingTest, OverlongVarint32IsRejected) {
  uint32_t v;
  // Five bytes whose last byte carries more than the top four bits.
  std::string_view too_big("\xff\xff\xff\xff\x1f", 5);
  EXPECT_FALSE(GetVarint32(&too_big, &v));
  // Six bytes: longer than any 32-bit varint.
  std::string_view six("\x80\x80\x80\x80\x80\x00", 6);
  EXPECT_FALSE(GetVarint32(&six, &v));
  // The largest legal value still decodes.
  std::string_view max("\xff\xff\xff\xff\x0f", 5);
  ASSERT_TRUE(GetVarint32(&max, &v));
  EXPECT_EQ(v, std::numeric_limits<uint32_t>::max());
  // A 64-bit value does not pass as a 32-bit one.
  std::string s;
  PutVarint64(&s, uint64_t{1} << 32);
  std::string_view in(s);
  EXPECT_FALSE(GetVarint32(&in, &v));
}

TEST(CodingTest, OverlongVarint64IsRejected) {
  uint64_t v;
  // Ten bytes whose last byte carries more than the one remaining bit.
  std::string_view overflow("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  EXPECT_FALSE(GetVarint64(&overflow, &v));
  // Eleven bytes.
  std::string_view eleven("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11);
  EXPECT_FALSE(GetVarint64(&eleven, &v));
  std::string_view max("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
  ASSERT_TRUE(GetVarint64(&max, &v));
  EXPECT_EQ(v, std::numeric_limits<uint64_t>::max());
}

TEST(CodingTest, LengthPrefixedRoundTripAndTruncation) {
  std::string s;
  const std::string big(300, 'x');
  PutLengthPrefixed(&s, "");
  PutLengthPrefixed(&s, "hello");
  PutLengthPrefixed(&s, big);
  std::string_view in(s);
  std::string_view out;
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, "");
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, "hello");
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, big);
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(GetLengthPrefixed(&in, &out));

  // Every strict prefix of one record fails.
  std::string one;
  PutLengthPrefixed(&one, "hello");
  for (size_t len = 0; len < one.size(); ++len) {
    std::string_view cut(one.data(), len);
    EXPECT_FALSE(GetLengthPrefixed(&cut, &out)) << len;
  }
}

// Every length and offset against the definition (bytes from offset, big
// end first, zeros past the end), with bytes >= 0x80 so that sign mistakes
// show; and two windows order as the bytes they cover.
TEST(CodingTest, BigEndianWindowEveryLengthAndOffset) {
  std::string bytes;
  for (int i = 0; i < 20; ++i) bytes.push_back(static_cast<char>(0x81 + 7 * i));
  for (size_t size = 0; size <= bytes.size(); ++size) {
    const std::string_view s(bytes.data(), size);
    for (size_t offset = 0; offset <= size; ++offset) {
      uint64_t expected = 0;
      for (size_t i = 0; i < 8; ++i) {
        const uint64_t byte =
            offset + i < size ? static_cast<unsigned char>(s[offset + i]) : 0;
        expected |= byte << (56 - 8 * i);
      }
      EXPECT_EQ(BigEndianWindow(s, offset), expected)
          << "size " << size << " offset " << offset;
    }
  }
  const std::string_view a = "\x01\x02\xff";
  const std::string_view b = "\x01\x03";
  EXPECT_LT(BigEndianWindow(a, 0), BigEndianWindow(b, 0));
  EXPECT_LT(BigEndianWindow("ab", 0), BigEndianWindow("ab\x01", 0));
  EXPECT_EQ(BigEndianWindow("ab", 0),
            BigEndianWindow(std::string_view("ab\0", 3), 0));
}

}  // namespace
}  // namespace sift
