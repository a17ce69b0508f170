// The Monkey allocation of filter bits over sorted runs (db/filter_allocation)
// and the report of filters as built (db/filter_report).

#include "db/filter_allocation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <queue>
#include <random>
#include <vector>

#include "db/filter_report.h"
#include "filter/bloom_math.h"
#include "gtest/gtest.h"

namespace sift {
namespace {

constexpr double kLn2Squared = 0.69314718055994530942 * 0.69314718055994530942;

double Spent(const std::vector<double>& sizes,
             const std::vector<double>& bits) {
  double sum = 0;
  for (size_t i = 0; i < sizes.size(); ++i) sum += sizes[i] * bits[i];
  return sum;
}

double Total(const std::vector<double>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), 0.0);
}

TEST(FilterAllocationTest, UniformShapeGivesUniformBits) {
  const std::vector<double> sizes(5, 4e6);
  const std::vector<double> bits = AllocateFilterBits(sizes, 10.0, 0.45);
  ASSERT_EQ(bits.size(), sizes.size());
  for (double b : bits) EXPECT_NEAR(b, 10.0, 1e-9);
  // A single run (an empty tree's first table): the setting itself.
  EXPECT_EQ(AllocateFilterBits({123456.0}, 10.0, 0.45)[0], 10.0);
}

TEST(FilterAllocationTest, PreservesTheBudgetAndMakesFprProportionalToSize) {
  // Three level-0 tables, level 1 and level 2 of a 1M-key tree, in MiB.
  const std::vector<double> sizes = {3.3, 3.3, 3.3, 12, 95};
  for (double decay : {kLn2Squared, 0.43}) {
    const std::vector<double> bits = AllocateFilterBits(sizes, 10.0, decay);
    EXPECT_NEAR(Spent(sizes, bits), 10.0 * Total(sizes), 1e-9 * Total(sizes));
    // p_i = e^(-c b_i) proportional to n_i: p_i / n_i is the same for all.
    const double ratio0 = std::exp(-decay * bits[0]) / sizes[0];
    for (size_t i = 1; i < sizes.size(); ++i) {
      EXPECT_NEAR(std::exp(-decay * bits[i]) / sizes[i] / ratio0, 1.0, 1e-9)
          << i;
    }
    // The closed form: b_i = avg + (H - ln n_i) / c.
    double h = 0;
    for (double n : sizes) h += n * std::log(n);
    h /= Total(sizes);
    for (size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_NEAR(bits[i], 10.0 + (h - std::log(sizes[i])) / decay, 1e-9);
    }
    // Small runs get more than the average, the largest less.
    EXPECT_GT(bits[0], bits[3]);
    EXPECT_GT(bits[3], 10.0);
    EXPECT_LT(bits[4], 10.0);
  }
}

TEST(FilterAllocationTest, LowersTheSumOfFalsePositiveRates) {
  const std::vector<double> sizes = {1, 1, 1, 1, 10, 100, 1000};
  const double decay = kLn2Squared;
  const std::vector<double> bits = AllocateFilterBits(sizes, 8.0, decay);
  double optimal = 0;
  for (double b : bits) optimal += std::exp(-decay * b);
  const double uniform = sizes.size() * std::exp(-decay * 8.0);
  EXPECT_LT(optimal, 0.5 * uniform);
}

TEST(FilterAllocationTest, RunsThatWouldGoBelowZeroGetZero) {
  // Ten small runs and one large at half a bit per key: unclamped, the large
  // run would get -1.6 bits per key.
  std::vector<double> sizes(10, 1.0);
  sizes.push_back(20.0);
  const std::vector<double> bits = AllocateFilterBits(sizes, 0.5, kLn2Squared);
  EXPECT_EQ(bits[10], 0.0);
  // The whole budget, 15 bits, goes to the ten small runs.
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(bits[i], 1.5, 1e-9);
  EXPECT_NEAR(Spent(sizes, bits), 0.5 * Total(sizes), 1e-9);
}

TEST(FilterAllocationTest, RunsAboveTheMaximumAreCappedAndTheRestResolved) {
  // A one-key run next to a huge one would want ~130 bits per key.
  const std::vector<double> sizes = {1.0, 1e25, 1e25};
  const std::vector<double> bits = AllocateFilterBits(sizes, 10.0, kLn2Squared);
  EXPECT_EQ(bits[0], kMaxAllocatedBitsPerKey);
  EXPECT_NEAR(bits[1], bits[2], 1e-9);
  EXPECT_NEAR(Spent(sizes, bits) / (10.0 * Total(sizes)), 1.0, 1e-12);
}

TEST(FilterAllocationTest, NoBudgetNoBits) {
  EXPECT_EQ(AllocateFilterBits({1.0, 2.0}, 0.0, kLn2Squared),
            std::vector<double>(2, 0.0));
  EXPECT_TRUE(AllocateFilterBits({}, 10.0, kLn2Squared).empty());
  // All at the maximum: nothing else is possible.
  EXPECT_EQ(AllocateFilterBits({1.0, 5.0}, 100.0, kLn2Squared),
            std::vector<double>(2, 100.0));
}

TEST(FilterAllocationTest, RunsAreWeightedByHowOftenTheyAreProbed) {
  // Level 1 spans the key space, level 2 too, level 3 holds a tenth of the
  // keys of level 2 over a tenth of the key space: per probe it is as large
  // as level 2, so it gets the same bits (sizing by size alone would give
  // it far more).
  const std::vector<double> sizes = {10, 100, 10};
  const std::vector<double> shares = {1, 1, 0.1};
  for (double decay : {kLn2Squared, 0.43}) {
    const std::vector<double> bits =
        AllocateFilterBits(sizes, shares, 10.0, decay);
    EXPECT_NEAR(bits[2], bits[1], 1e-9);
    EXPECT_GT(bits[0], bits[1]);
    EXPECT_NEAR(Spent(sizes, bits), 10.0 * Total(sizes), 1e-9 * Total(sizes));
    // p_i q_i / n_i is the same for all.
    for (size_t i = 1; i < sizes.size(); ++i) {
      EXPECT_NEAR(std::exp(-decay * bits[i]) * shares[i] / sizes[i] /
                      (std::exp(-decay * bits[0]) * shares[0] / sizes[0]),
                  1.0, 1e-9);
    }
  }
  // All shares 1: the unweighted allocation.
  EXPECT_EQ(AllocateFilterBits(sizes, {1, 1, 1}, 10.0, 0.43),
            AllocateFilterBits(sizes, 10.0, 0.43));
  // A run no Get probes gets nothing; the others share the whole budget.
  const std::vector<double> bits =
      AllocateFilterBits({10, 100, 10}, {1, 1, 0}, 10.0, 0.43);
  EXPECT_EQ(bits[2], 0.0);
  EXPECT_NEAR(10 * bits[0] + 100 * bits[1], 10.0 * 120, 1e-6);
}

TEST(FilterAllocationTest, NewTableBitsFollowTheProbeShares) {
  Options options;
  options.filter_bits_per_key = 10;
  RunShape shape;
  shape.levels[1] = 10e6;
  shape.levels[2] = 100e6;
  shape.levels[3] = 8e6;
  const double unweighted = FilterBitsForNewTable(options, shape, 3, 2e6);
  shape.level_probes[3] = 0.1;
  const double weighted = FilterBitsForNewTable(options, shape, 3, 2e6);
  EXPECT_LT(weighted, unweighted);
  EXPECT_NEAR(weighted, FilterBitsForNewTable(options, shape, 2, 0), 0.05);
  // A new level-0 table probed by few Gets (a narrow key range) gets less
  // than one probed by every Get.
  shape.level0 = {3e6};
  const double wide = FilterBitsForNewTable(options, shape, 0, 3e6);
  shape.added_level0_probes = 0.05;
  EXPECT_LT(FilterBitsForNewTable(options, shape, 0, 3e6), wide);
}

// The expected false positives of an absent-key Get on a tree whose run i
// is probed by a share q_i of them and has b_i bits per key.
double ExpectedFalsePositives(FilterKind kind, const std::vector<double>& q,
                              const std::vector<double>& bits) {
  double sum = 0;
  for (size_t i = 0; i < q.size(); ++i)
    sum += q[i] * FilterFprAt(kind, bits[i]);
  return sum;
}

// The numerical optimum on the layout's own curve, found independently of
// the closed form: memory handed out in steps of 0.01 bits per key of one
// run, each to the run whose expected false positives fall the most per
// byte (greedy is optimal for a separable convex objective, up to the step).
constexpr double kStep = 0.01;
constexpr int kMaxSteps = static_cast<int>(kMaxAllocatedBitsPerKey / kStep);

// FilterFprAt(kind, j * kStep) for j = 0..kMaxSteps.
std::vector<double> CurveOf(FilterKind kind) {
  std::vector<double> curve(kMaxSteps + 1);
  for (int j = 0; j <= kMaxSteps; ++j) curve[j] = FilterFprAt(kind, j * kStep);
  return curve;
}

std::vector<double> GreedyOptimum(const std::vector<double>& curve,
                                  const std::vector<double>& sizes,
                                  const std::vector<double>& q, double avg) {
  std::vector<int> steps(sizes.size(), 0);
  auto gain = [&](size_t i) {
    return q[i] * (curve[steps[i]] - curve[steps[i] + 1]) / (sizes[i] * kStep);
  };
  std::priority_queue<std::pair<double, size_t>> best;
  for (size_t i = 0; i < sizes.size(); ++i) best.emplace(gain(i), i);
  double memory = avg * Total(sizes);
  std::vector<double> bits(sizes.size(), 0.0);
  while (!best.empty()) {
    const size_t i = best.top().second;
    best.pop();
    const double cost = sizes[i] * kStep;
    if (cost > memory) {
      bits[i] += memory / sizes[i];  // what is left, as a partial step
      break;
    }
    memory -= cost;
    bits[i] += kStep;
    if (++steps[i] < kMaxSteps) best.emplace(gain(i), i);
  }
  return bits;
}

TEST(FilterAllocationTest, NeverAboveUniformAndNearTheNumericalOptimum) {
  // Random tree shapes: level-0 tables probed by nearly every Get, levels
  // growing by about 10x, the deepest ones covering any part of the key
  // space, and shapes with no structure at all.
  std::mt19937_64 rng(39);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int shapes = 0;
  double worst = 0;  // chosen / optimum
  for (FilterKind kind : {FilterKind::kBlockedBloom, FilterKind::kStandardBloom,
                          FilterKind::kBinaryFuse}) {
    const std::vector<double> curve = CurveOf(kind);
    for (int round = 0; round < 150; ++round) {
      std::vector<double> sizes, q;
      if (round % 2 == 0) {
        const int level0 = static_cast<int>(unit(rng) * 5);
        for (int i = 0; i < level0; ++i) {
          sizes.push_back(2e6 + 2e6 * unit(rng));
          q.push_back(0.8 + 0.2 * unit(rng));
        }
        const int levels = 1 + static_cast<int>(unit(rng) * 4);
        double size = 4e6 + 8e6 * unit(rng);
        for (int l = 0; l < levels; ++l) {
          const bool last = l == levels - 1;
          sizes.push_back(last ? size * (0.02 + unit(rng)) : size);
          q.push_back(last || unit(rng) < 0.3 ? 0.01 + 0.99 * unit(rng) : 1.0);
          size *= 8 + 4 * unit(rng);
        }
      } else {
        const int runs = 1 + static_cast<int>(unit(rng) * 8);
        for (int i = 0; i < runs; ++i) {
          sizes.push_back(std::pow(10.0, 3 + 6 * unit(rng)));
          q.push_back(0.005 + 0.995 * unit(rng));
        }
      }
      const double avg = 2 + 18 * unit(rng);
      const double decay = FilterFprDecay(kind, avg);
      const std::vector<double> bits = AllocateFilterBits(sizes, q, avg, decay);
      ASSERT_NEAR(Spent(sizes, bits), avg * Total(sizes), 1e-6 * Total(sizes));
      const double chosen = ExpectedFalsePositives(kind, q, bits);
      const double uniform = ExpectedFalsePositives(
          kind, q, std::vector<double>(sizes.size(), avg));
      const double optimum =
          ExpectedFalsePositives(kind, q, GreedyOptimum(curve, sizes, q, avg));
      worst = std::max(worst, chosen / optimum);
      EXPECT_LE(chosen, uniform * (1 + 1e-9))
          << "kind " << static_cast<int>(kind) << " round " << round;
      EXPECT_LE(chosen, 1.02 * optimum)
          << "kind " << static_cast<int>(kind) << " round " << round << " runs "
          << sizes.size() << " avg " << avg;
      ++shapes;
    }
  }
  EXPECT_EQ(shapes, 450);
  std::printf("worst chosen / numerical optimum: %.4f\n", worst);
}

TEST(FilterAllocationTest, DecayOfEachLayout) {
  EXPECT_DOUBLE_EQ(FilterFprDecay(FilterKind::kStandardBloom, 10), kLn2Squared);
  // The blocked layout's rate falls a little slower per bit than the
  // standard one's; the decay matches its sizing curve.
  const double c = FilterFprDecay(FilterKind::kBlockedBloom, 10);
  EXPECT_GT(c, 0.38);
  EXPECT_LT(c, kLn2Squared);
  const double p8 = 1e-2;
  const double b8 = BitsPerKeyForFpr(FilterKind::kBlockedBloom, p8);
  const double b12 = BitsPerKeyForFpr(FilterKind::kBlockedBloom, p8 / 10);
  EXPECT_NEAR(std::log(10.0) / (b12 - b8), c, 0.03);
}

TEST(FilterAllocationTest, NewTableBitsFollowItsLevel) {
  Options options;
  options.filter_bits_per_key = 10;
  options.filter_kind = FilterKind::kBlockedBloom;
  RunShape shape;
  shape.level0 = {3e6, 3e6};
  shape.levels[1] = 12e6;
  shape.levels[2] = 95e6;

  const double l0 = FilterBitsForNewTable(options, shape, 0, 3e6);
  const double l1 = FilterBitsForNewTable(options, shape, 1, 2e6);
  const double l2 = FilterBitsForNewTable(options, shape, 2, 2e6);
  EXPECT_GT(l0, l1);
  EXPECT_GT(l1, 10.0);
  EXPECT_LT(l2, 10.0);

  // The same as the allocation of the shape with the table counted.
  const double decay = FilterFprDecay(FilterKind::kBlockedBloom, 10);
  EXPECT_NEAR(l0, AllocateFilterBits({3e6, 3e6, 3e6, 12e6, 95e6}, 10, decay)[2],
              1e-9);
  EXPECT_NEAR(l2, AllocateFilterBits({3e6, 3e6, 12e6, 97e6}, 10, decay)[3],
              1e-9);

  // A table that is the whole tree gets the average.
  EXPECT_NEAR(FilterBitsForNewTable(options, RunShape(), 3, 1e6), 10.0, 1e-9);

  options.filter_allocation = FilterAllocation::kUniform;
  EXPECT_EQ(FilterBitsForNewTable(options, shape, 0, 3e6), 10.0);
  options.filter_allocation = FilterAllocation::kOptimal;
  options.filter_bits_per_key = 0;
  EXPECT_EQ(FilterBitsForNewTable(options, shape, 0, 3e6), 0.0);
}

// A shape of 2 level-0 runs and levels 1-2 whose deep filters, as built,
// hold `built_bits_per_key` over `coverage` of the deep levels' bytes.
RunShape ShapeWithBuiltFilters(double built_bits_per_key, double coverage) {
  RunShape shape;
  shape.level0 = {3e6, 3e6};
  shape.levels[1] = 10e6;
  shape.levels[2] = 100e6;
  shape.built.table_bytes = coverage * 110e6;
  shape.built.filter_keys = coverage * 1e6;
  shape.built.filter_bits = built_bits_per_key * shape.built.filter_keys;
  return shape;
}

TEST(FilterAllocationTest, BudgetCorrectionMakesUpTheDeepLevelsShortfall) {
  // Short of the budget: gain times the shortfall, added.
  EXPECT_NEAR(FilterBudgetCorrection(ShapeWithBuiltFilters(9.5, 1.0), 10),
              kBudgetCorrectionGain * 0.5, 1e-9);
  // Over it: taken away.
  EXPECT_NEAR(FilterBudgetCorrection(ShapeWithBuiltFilters(10.4, 1.0), 10),
              -kBudgetCorrectionGain * 0.4, 1e-9);
  // Far off: at most a quarter of the budget either way.
  EXPECT_NEAR(FilterBudgetCorrection(ShapeWithBuiltFilters(4.0, 1.0), 10),
              kMaxBudgetCorrection * 10, 1e-9);
  EXPECT_NEAR(FilterBudgetCorrection(ShapeWithBuiltFilters(30.0, 1.0), 10),
              -kMaxBudgetCorrection * 10, 1e-9);
  // Too few filters known (after a reopen, say): nothing, at the coverage
  // bound the full correction.
  EXPECT_EQ(FilterBudgetCorrection(ShapeWithBuiltFilters(9.0, 0.89), 10), 0.0);
  EXPECT_NEAR(FilterBudgetCorrection(
                  ShapeWithBuiltFilters(9.5, kBudgetCorrectionCoverage), 10),
              kBudgetCorrectionGain * 0.5, 1e-9);
  EXPECT_EQ(FilterBudgetCorrection(RunShape(), 10), 0.0);
}

TEST(FilterAllocationTest, NewTablesBelowLevelZeroGetTheCorrection) {
  Options options;
  options.filter_bits_per_key = 10;
  const RunShape unknown = ShapeWithBuiltFilters(9.5, 0.0);
  const RunShape short_of_budget = ShapeWithBuiltFilters(9.5, 1.0);
  const double correction = FilterBudgetCorrection(short_of_budget, 10);
  ASSERT_GT(correction, 0.0);
  for (int level : {1, 2, 3}) {
    // The shape's allocation ignores the filters as built; the budgeted one
    // adds the correction.
    const double shaped = FilterBitsForNewTable(options, unknown, level, 2e6);
    EXPECT_EQ(FilterBitsForNewTable(options, short_of_budget, level, 2e6),
              shaped)
        << "level " << level;
    EXPECT_NEAR(
        BudgetedFilterBitsForNewTable(options, short_of_budget, level, 2e6),
        shaped + correction, 1e-9)
        << "level " << level;
  }
  // A level-0 table is sized from the shape alone.
  EXPECT_EQ(BudgetedFilterBitsForNewTable(options, short_of_budget, 0, 3e6),
            FilterBitsForNewTable(options, unknown, 0, 3e6));
  // Uniform allocation knows no correction.
  options.filter_allocation = FilterAllocation::kUniform;
  EXPECT_EQ(BudgetedFilterBitsForNewTable(options, short_of_budget, 2, 2e6),
            10.0);
}

TEST(FilterReportTest, SumsLevelZeroTablesAndWeighsDeeperTables) {
  auto facts = [](int level, uint64_t keys, double bits_per_key) {
    TableFilterFacts t;
    t.level = level;
    t.entries = keys;
    t.has_filter = true;
    t.filter.kind = static_cast<uint8_t>(FilterKind::kStandardBloom);
    t.filter.known = true;
    t.filter.num_keys = keys;
    t.filter.num_bits = static_cast<uint64_t>(bits_per_key * keys);
    t.filter.num_probes = StandardNumProbes(bits_per_key);
    return t;
  };
  std::vector<TableFilterFacts> tables = {
      facts(0, 1000, 16), facts(0, 1000, 16), facts(1, 3000, 12),
      facts(1, 1000, 8)};
  TableFilterFacts no_filter;
  no_filter.level = 2;
  no_filter.entries = 5000;
  tables.push_back(no_filter);

  const FilterReport r = SummarizeFilters(tables);
  const double p16 = StandardFpr(16000, 1000, StandardNumProbes(16));
  const double p12 = StandardFpr(36000, 3000, StandardNumProbes(12));
  const double p8 = StandardFpr(8000, 1000, StandardNumProbes(8));
  EXPECT_EQ(r.levels[0].tables, 2);
  EXPECT_DOUBLE_EQ(r.levels[0].bits_per_key(), 16.0);
  EXPECT_NEAR(r.levels[0].fpr, p16, 1e-12);
  EXPECT_NEAR(r.levels[0].expected_false_positives, 2 * p16, 1e-12);
  EXPECT_DOUBLE_EQ(r.levels[1].bits_per_key(), 11.0);
  EXPECT_NEAR(r.levels[1].fpr, (3 * p12 + p8) / 4, 1e-12);
  // A table without a filter reads a block on every probe.
  EXPECT_EQ(r.levels[2].fpr, 1.0);
  EXPECT_NEAR(r.expected_false_positives, 2 * p16 + (3 * p12 + p8) / 4 + 1.0,
              1e-12);
  EXPECT_NE(FilterReportText(r).find("Expected false positives"),
            std::string::npos);

  // With probe shares, each run's rate counts as often as Gets probe it.
  tables[0].probe_share = 0.5;
  tables[2].probe_share = tables[3].probe_share = 0.25;
  tables[4].probe_share = 0.1;
  const FilterReport weighted = SummarizeFilters(tables);
  EXPECT_NEAR(weighted.levels[0].probe_share, 0.75, 1e-12);
  EXPECT_NEAR(weighted.levels[0].expected_false_positives, 1.5 * p16, 1e-12);
  EXPECT_NEAR(weighted.levels[1].probe_share, 0.25, 1e-12);
  EXPECT_NEAR(weighted.expected_false_positives,
              1.5 * p16 + 0.25 * (3 * p12 + p8) / 4 + 0.1, 1e-12);
}

}  // namespace
}  // namespace sift
