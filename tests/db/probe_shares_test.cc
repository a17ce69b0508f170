// The share of absent-key Gets that probe a run (db/probe_shares), and the
// shapes the allocation reads it from (ShapeOf in db/filter_allocation).

#include "db/probe_shares.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace sift {
namespace {

std::string Key(int i) { return absl::StrFormat("%08d", i); }

// `count` tables of `bytes` each, splitting keys [first, last) evenly.
std::vector<KeySpan> Tables(int first, int last, int count, double bytes) {
  std::vector<KeySpan> tables;
  const int step = (last - first) / count;
  for (int i = 0; i < count; ++i) {
    tables.push_back(
        KeySpan{Key(first + i * step), Key(first + (i + 1) * step - 1), bytes});
  }
  return tables;
}

std::vector<KeySpan> Concat(std::vector<KeySpan> a,
                            const std::vector<KeySpan>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ProbeSharesTest, ARunSpanningTheTreeIsProbedByEveryGet) {
  const std::vector<KeySpan> deep = Tables(0, 1000000, 50, 2e6);
  const std::vector<KeySpan> level0 = {{Key(3), Key(999990), 3e6}};
  const std::vector<KeySpan> data = Concat(deep, level0);
  // The deep level holds all of the level-0 table's keys.
  EXPECT_DOUBLE_EQ(ProbeShare(deep, data), 1.0);
  // The level-0 table leaves the first and the last few keys out: the deep
  // tables holding them straddle its edges and count half.
  EXPECT_NEAR(ProbeShare(level0, data), (96e6 + 2e6 + 3e6) / 103e6, 1e-12);
}

TEST(ProbeSharesTest, APartialLevelIsProbedInProportionToTheKeysItCovers) {
  // Level 2: 50 tables over the key space; level 3: 5 tables over its first
  // tenth, their edges inside level-2 tables.
  const std::vector<KeySpan> level2 = Tables(0, 1000000, 50, 2e6);
  const std::vector<KeySpan> level3 = Tables(10007, 110007, 5, 2e6);
  const std::vector<KeySpan> data = Concat(level2, level3);
  const double q3 = ProbeShare(level3, data);
  // Its own 5 tables (10 MB), and the level-2 tables 1..4 (each spanning a
  // boundary between two level-3 tables: whole) and 0 and 5 (half): 4 whole
  // + 2 halves = 5 tables of 2 MB.
  EXPECT_NEAR(q3, (10e6 + 10e6) / 110e6, 1e-12);
  // Level 2 covers everything.
  EXPECT_DOUBLE_EQ(ProbeShare(level2, data), 1.0);
}

TEST(ProbeSharesTest, GapsBetweenTablesAreNotProbed) {
  // Level 1: two tables with a wide gap between them.
  const std::vector<KeySpan> level1 = {{Key(0), Key(99999), 1e6},
                                       {Key(900000), Key(999999), 1e6}};
  const std::vector<KeySpan> level2 = Tables(0, 1000000, 10, 10e6);
  const std::vector<KeySpan> data = Concat(level1, level2);
  // Level-2 tables 0 and 9 lie inside; 1..8 in the gap.
  EXPECT_NEAR(ProbeShare(level1, data), (2e6 + 20e6) / 102e6, 1e-12);
}

TEST(ProbeSharesTest, OverlappingSpansAreMerged) {
  const std::vector<KeySpan> run = {{Key(0), Key(600), 1},
                                    {Key(400), Key(1000), 1}};
  const std::vector<KeySpan> data = {{Key(300), Key(700), 4},
                                     {Key(2000), Key(3000), 4}};
  EXPECT_DOUBLE_EQ(ProbeShare(run, data), 0.5);
}

TEST(ProbeSharesTest, TreeSharesAreOnePerLevelZeroTableAndOnePerLevel) {
  std::vector<std::vector<KeySpan>> levels(4);
  levels[0] = {{Key(0), Key(999999), 3e6}, {Key(0), Key(99999), 3e6}};
  levels[2] = Tables(0, 1000000, 50, 2e6);
  levels[3] = Tables(10007, 110007, 5, 2e6);
  const std::vector<std::vector<double>> shares = TreeProbeShares(levels);
  ASSERT_EQ(shares.size(), 4u);
  ASSERT_EQ(shares[0].size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0][0], 1.0);
  // The narrow level-0 table: itself, level-2 tables 0..4, level-3 tables
  // 0..3 whole and table 4 (holding key 99999) half; the wide one half.
  EXPECT_NEAR(shares[0][1], (3e6 + 10e6 + 8e6 + 1e6 + 1.5e6) / 116e6, 1e-12);
  EXPECT_TRUE(shares[1].empty());
  EXPECT_EQ(shares[2], std::vector<double>(50, 1.0));
  // Level 3 as in APartialLevelIsProbedInProportionToTheKeysItCovers, plus
  // half of each level-0 table (they overlap it with an end outside).
  EXPECT_EQ(shares[3], std::vector<double>(5, (20e6 + 3e6) / 116e6));
}

TEST(ProbeSharesTest, NoDataMeansEveryGet) {
  EXPECT_DOUBLE_EQ(ProbeShare({}, {}), 1.0);
  const std::vector<KeySpan> run = {{Key(0), Key(1), 1}};
  EXPECT_DOUBLE_EQ(ProbeShare(run, {}), 1.0);
}

}  // namespace
}  // namespace sift
