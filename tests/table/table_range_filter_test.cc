// A table's range filter: the key map from byte strings to the integers the
// filter indexes (RangeFilterKeyMap), Table::RangeMayMatch against the
// table's keys for random ranges (never a wrong "no"), the filter block's
// layout with and without a point filter, and damage to it.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sift/env.h"
#include "table/range_filter_key.h"
#include "table/table.h"
#include "table/table_properties.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/test_env.h"
#include "util/coding.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KVVector;

std::string BigEndian(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) s[i] = static_cast<char>(v & 0xff);
  return s;
}

TEST(RangeFilterKeyMapTest, MapsTheBytesAfterTheCommonPrefix) {
  const RangeFilterKeyMap map("user:a", "user:q", 8);
  EXPECT_EQ(map.prefix_length(), 5u);
  EXPECT_EQ(map.Map("user:a"), uint64_t{'a'} << 56);
  // Keys of at most 3 bytes after the prefix map right-aligned: consecutive
  // big-endian integers stay consecutive.
  const RangeFilterKeyMap narrow(std::string("k\0\0\x05", 4),
                                 std::string("k\0\x02\0", 4), 2);
  EXPECT_EQ(narrow.prefix_length(), 2u);
  EXPECT_EQ(narrow.Map(std::string("k\0\x01\x07", 4)), 0x0107u);
  EXPECT_EQ(map.Map("user:" + BigEndian(42) + "tail"), 42u);
  uint64_t lo, hi;
  ASSERT_TRUE(map.MapRange(std::nullopt, std::nullopt, &lo, &hi));
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, ~uint64_t{0});
  // [user:b, user:c): keys up to "user:b\xff..." -> below c's image.
  ASSERT_TRUE(map.MapRange("user:b", "user:c", &lo, &hi));
  EXPECT_EQ(lo, uint64_t{'b'} << 56);
  EXPECT_EQ(hi, (uint64_t{'c'} << 56) - 1);
  // An upper bound ending in a zero byte keeps its own image.
  ASSERT_TRUE(map.MapRange("user:b", std::string("user:c\0", 7), &lo, &hi));
  EXPECT_EQ(hi, uint64_t{'c'} << 56);
  // Bounds outside the prefix's keys.
  EXPECT_FALSE(map.MapRange("user;", std::nullopt, &lo, &hi));
  EXPECT_FALSE(map.MapRange(std::nullopt, "user", &lo, &hi));
  EXPECT_FALSE(map.MapRange(std::nullopt, "user:", &lo, &hi));
  ASSERT_TRUE(map.MapRange("a", "z", &lo, &hi));
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, ~uint64_t{0});
}

class TableRangeFilterTest : public testing::Test {
 protected:
  TableRangeFilterTest() : env_(test::NewTestEnv()) {}

  std::string ReadAll(const std::string& fname) {
    auto size = env_->GetFileSize(fname);
    auto file = env_->NewRandomAccessFile(fname);
    EXPECT_TRUE(size.ok() && file.ok());
    std::string buf(*size, '\0');
    std::string_view got;
    EXPECT_TRUE((*file)->Read(0, *size, &got, buf.data()).ok());
    return std::string(got);
  }
  void WriteAll(const std::string& fname, const std::string& bytes) {
    auto file = env_->NewWritableFile(fname);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(bytes).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }

  std::unique_ptr<Table> Build(const KVVector& entries, double point_bits,
                               double range_bits) {
    TableOptions options;
    options.block_size = 256;
    options.filter_bits_per_key = point_bits;
    options.range_filter_bits_per_key = range_bits;
    options_ = options;
    EXPECT_TRUE(test::WriteTable(env_.get(), "/t.sst", options, entries).ok());
    auto table = test::OpenTable(env_.get(), "/t.sst", options);
    EXPECT_TRUE(table.ok()) << table.status();
    return table.ok() ? *std::move(table) : nullptr;
  }

  std::unique_ptr<Env> env_;
  TableOptions options_;
};

TEST_F(TableRangeFilterTest, NeverRulesOutARangeThatHoldsAKey) {
  Random rnd(7);
  for (const bool suffixes : {false, true}) {
    for (const double point_bits : {0.0, 10.0}) {
      // Keys "p/" + 8-byte big-endian multiples of 64, some with a suffix.
      KVVector entries;
      std::vector<std::string> keys;
      for (uint64_t i = 0; i < 3000; ++i) {
        std::string key = "p/" + BigEndian(64 * i + rnd.Uniform(3));
        // Suffixes make keys of two lengths: integers then map 256 apart, so
        // ranges of 40 integers span many blocks and are mostly "maybe".
        if (suffixes && rnd.OneIn(4)) key += "x";
        keys.push_back(key);
      }
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      for (const std::string& k : keys) entries.emplace_back(k, "v");
      std::unique_ptr<Table> table = Build(entries, point_bits, 16);
      ASSERT_NE(table, nullptr);
      EXPECT_GT(table->properties().range_filter_bytes, 0u);
      EXPECT_EQ(table->properties().filter_kind != 0, point_bits > 0);
      ReadStats stats;
      int empty = 0, ruled_out = 0;
      for (int q = 0; q < 20000; ++q) {
        const uint64_t start = rnd.Uniform(64 * 3000 + 100);
        std::string lo = "p/" + BigEndian(start);
        std::string hi = "p/" + BigEndian(start + 1 + rnd.Uniform(40));
        if (rnd.OneIn(10)) lo = "a";
        if (rnd.OneIn(10)) hi = "q";
        auto it = std::lower_bound(keys.begin(), keys.end(), lo);
        const bool holds = it != keys.end() && *it < hi;
        const bool may = table->RangeMayMatch(lo, hi, &stats);
        ASSERT_TRUE(!holds || may) << "a key in the range was ruled out";
        if (!holds) {
          ++empty;
          ruled_out += !may;
        }
      }
      EXPECT_EQ(stats.range_filter_probes, 20000u);
      EXPECT_EQ(stats.range_filter_negatives, static_cast<uint64_t>(ruled_out));
      // Ranges of at most 41 positions at 16 bits/key: a bound near
      // 41 / 2^14 = 0.25%, so nearly every empty range is ruled out (the 10%
      // of ranges with a bound outside the keys' prefix are wide).
      if (!suffixes) {
        EXPECT_GE(ruled_out, empty * 85 / 100) << ruled_out << " of " << empty;
      }
    }
  }
}

TEST_F(TableRangeFilterTest, TablesWithoutOneAlwaysMayMatch) {
  KVVector entries = {{"a", "1"}, {"c", "2"}};
  std::unique_ptr<Table> table = Build(entries, 10, 0);
  ASSERT_NE(table, nullptr);
  ReadStats stats;
  EXPECT_TRUE(table->RangeMayMatch("x", "y", &stats));
  EXPECT_EQ(stats.range_filter_probes, 0u);
}

TEST_F(TableRangeFilterTest, DamagedFilterBlockIsDetected) {
  KVVector entries;
  for (int i = 0; i < 500; ++i) {
    entries.emplace_back("k" + BigEndian(i * 7), "value");
  }
  for (const double point_bits : {0.0, 10.0}) {
    std::unique_ptr<Table> table = Build(entries, point_bits, 12);
    ASSERT_NE(table, nullptr);
    const TableProperties& p = table->properties();
    const uint64_t filter_offset = p.data_bytes;
    const uint64_t filter_size = p.filter_bytes + p.range_filter_bytes;
    const std::string contents = ReadAll("/t.sst");
    // Every byte of the range filter part: the block checksum catches it.
    for (uint64_t off = filter_offset + p.filter_bytes;
         off < filter_offset + filter_size; off += 13) {
      std::string damaged = contents;
      damaged[off] ^= 0x04;
      WriteAll("/d.sst", damaged);
      auto opened = test::OpenTable(env_.get(), "/d.sst", options_);
      EXPECT_TRUE(absl::IsDataLoss(opened.status())) << off;
    }
  }
}

}  // namespace
}  // namespace sift
