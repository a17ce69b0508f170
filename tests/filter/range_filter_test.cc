// The range filter (filter/range_filter.h): no false negatives for any
// range, the false-positive bound L / 2^(B-2) for empty ranges of L
// consecutive integers (random ones and ones right next to keys, where a
// filter that hashes keys to positions without the block structure would
// fail), its size, and the checks on its serialized form.

#include "filter/range_filter.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "util/random.h"

namespace sift {
namespace {

std::unique_ptr<RangeFilterReader> Build(const std::vector<uint64_t>& keys,
                                         double bits_per_key,
                                         uint64_t block_length) {
  RangeFilterBuilder builder(bits_per_key, block_length);
  for (uint64_t k : keys) builder.AddKey(k);
  auto reader = RangeFilterReader::Parse(builder.Finish());
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? *std::move(reader) : nullptr;
}

bool SetHasKeyIn(const std::set<uint64_t>& keys, uint64_t lo, uint64_t hi) {
  auto it = keys.lower_bound(lo);
  return it != keys.end() && *it <= hi;
}

TEST(RangeFilterTest, EmptyFilterSaysNo) {
  auto r = Build({}, 16, 32);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->info().known);
  EXPECT_FALSE(r->MayContain(0, ~uint64_t{0}));
  EXPECT_FALSE(r->MayContain(5, 5));
}

TEST(RangeFilterTest, NoFalseNegatives) {
  Random rnd(17);
  for (const double bits : {2.0, 6.5, 12.0, 16.0, 24.0}) {
    for (const uint64_t block : {uint64_t{1}, uint64_t{32}, uint64_t{1000}}) {
      std::vector<uint64_t> keys;
      // Clustered and spread keys, repeats, and both ends of the universe.
      for (int i = 0; i < 3000; ++i) keys.push_back(rnd.Next64());
      for (int i = 0; i < 3000; ++i)
        keys.push_back(1000000 + rnd.Uniform(5000));
      keys.push_back(0);
      keys.push_back(~uint64_t{0});
      keys.push_back(keys[7]);
      auto r = Build(keys, bits, block);
      ASSERT_NE(r, nullptr);
      for (uint64_t k : keys) {
        ASSERT_TRUE(r->MayContain(k, k)) << k;
        // A range holding the key, of every size up to a few blocks.
        const uint64_t before = rnd.Uniform(3 * block + 1);
        const uint64_t after = rnd.Uniform(3 * block + 1);
        const uint64_t lo = k >= before ? k - before : 0;
        const uint64_t hi =
            k <= ~uint64_t{0} - after ? k + after : ~uint64_t{0};
        ASSERT_TRUE(r->MayContain(lo, hi))
            << "key " << k << " in [" << lo << ", " << hi << "], bits " << bits
            << ", block " << block;
      }
    }
  }
}

// The measured rate over empty ranges of `length` integers, with the ranges
// drawn by `next_range`.
template <typename NextRange>
double MeasuredFpr(const RangeFilterReader& r, const std::set<uint64_t>& keys,
                   uint64_t length, int queries, NextRange next_range) {
  int empty = 0, positives = 0;
  while (empty < queries) {
    const uint64_t lo = next_range();
    const uint64_t hi = lo + length - 1;
    if (SetHasKeyIn(keys, lo, hi)) continue;
    ++empty;
    positives += r.MayContain(lo, hi);
  }
  return static_cast<double>(positives) / empty;
}

TEST(RangeFilterTest, FalsePositivesWithinTheBound) {
  Random rnd(29);
  constexpr uint64_t kSpace = uint64_t{1} << 40;
  std::vector<uint64_t> sorted;
  for (int i = 0; i < 100000; ++i) sorted.push_back(rnd.Uniform(kSpace));
  const std::set<uint64_t> keys(sorted.begin(), sorted.end());
  for (const auto& [bits, length] :
       std::vector<std::pair<double, uint64_t>>{{16, 32}, {12, 8}, {20, 256}}) {
    auto r = Build(sorted, bits, length);
    ASSERT_NE(r, nullptr);
    const double bound = r->info().FprBound(length);
    EXPECT_NEAR(bound, length / std::exp2(bits - 2), bound * 0.01);
    // Uniform ranges, and ranges that start right after a key: correlated
    // with the keys, the case the design's bound is meant to survive.
    const double uniform = MeasuredFpr(*r, keys, length, 200000,
                                       [&] { return rnd.Uniform(kSpace); });
    const double adjacent = MeasuredFpr(*r, keys, length, 100000, [&] {
      return sorted[rnd.Uniform(sorted.size())] + 1;
    });
    // A bound, so measured rates sit below it; the margin covers sampling
    // noise at a few hundred expected positives.
    EXPECT_LE(uniform, bound * 1.15) << bits << " bits, L " << length;
    EXPECT_LE(adjacent, bound * 1.15) << bits << " bits, L " << length;
    // And it is not vacuous: the filter does rule ranges out.
    EXPECT_GT(uniform, 0.0);
    // Size: B bits per key, give or take the Elias-Fano rounding.
    EXPECT_LE(r->info().bits_per_key(), bits + 1.05);
    EXPECT_GE(r->info().bits_per_key(), bits - 1.05);
  }
}

TEST(RangeFilterTest, WideRangesAreMaybe) {
  std::vector<uint64_t> keys = {10, 1000000};
  auto r = Build(keys, 16, 32);
  ASSERT_NE(r, nullptr);
  // Spans more blocks than are searched: "maybe" without a search.
  EXPECT_TRUE(
      r->MayContain(100, 100 + 32 * RangeFilterReader::kMaxBlocksSearched));
}

TEST(RangeFilterTest, DamageIsDetected) {
  RangeFilterBuilder builder(14, 16);
  Random rnd(5);
  for (int i = 0; i < 500; ++i) builder.AddKey(rnd.Uniform(1 << 20));
  const std::string good = builder.Finish();
  ASSERT_TRUE(RangeFilterReader::Parse(good).ok());
  for (size_t len = 0; len < good.size(); ++len) {
    auto r = RangeFilterReader::Parse(good.substr(0, len));
    // A prefix of two bytes or more still names the kind and version, and
    // is then too short or fails its checksum.
    EXPECT_TRUE(absl::IsDataLoss(r.status())) << len;
  }
  for (size_t i = 2; i < good.size(); ++i) {
    std::string damaged = good;
    damaged[i] ^= 0x10;
    EXPECT_TRUE(absl::IsDataLoss(RangeFilterReader::Parse(damaged).status()))
        << i;
  }
  // An unknown kind or version is not damage: every range "maybe".
  std::string unknown = good;
  unknown[1] = 2;
  auto r = RangeFilterReader::Parse(unknown);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)->info().known);
  EXPECT_TRUE((*r)->MayContain(1u << 30, 1u << 30));
}

}  // namespace
}  // namespace sift
