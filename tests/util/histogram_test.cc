#include "util/histogram.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"

namespace sift {
namespace {

TEST(HistogramTest, EmptyIsAllZero) {
  Histogram h;
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Mean(), 0);
  EXPECT_EQ(h.Min(), 0);
  EXPECT_EQ(h.Max(), 0);
  EXPECT_EQ(h.Percentile(50), 0);
  EXPECT_EQ(h.StandardDeviation(), 0);
  EXPECT_NE(h.ToString().find("Count: 0"), std::string::npos);
}

TEST(HistogramTest, ExactStatisticsOnKnownData) {
  Histogram h;
  for (int i = 1; i <= 100; ++i) h.Add(i);
  EXPECT_EQ(h.Count(), 100u);
  EXPECT_DOUBLE_EQ(h.Sum(), 5050);
  EXPECT_DOUBLE_EQ(h.Mean(), 50.5);
  EXPECT_DOUBLE_EQ(h.Min(), 1);
  EXPECT_DOUBLE_EQ(h.Max(), 100);
  // Population standard deviation of 1..100: sqrt((100^2 - 1) / 12).
  EXPECT_NEAR(h.StandardDeviation(), std::sqrt(9999.0 / 12), 1e-9);
}

TEST(HistogramTest, PercentilesOnKnownData) {
  Histogram h;
  for (int i = 1; i <= 1000; ++i) h.Add(i);
  // Buckets are within ~15% of their bound, so estimates are within that.
  for (double p : {10.0, 25.0, 50.0, 75.0, 90.0, 99.0}) {
    const double truth = p * 10;
    EXPECT_NEAR(h.Percentile(p), truth, truth * 0.15) << p;
  }
  EXPECT_DOUBLE_EQ(h.Percentile(100), 1000);
  EXPECT_GE(h.Percentile(0), 1);
  // Monotonic in p.
  double last = 0;
  for (double p = 0; p <= 100; p += 0.5) {
    const double v = h.Percentile(p);
    EXPECT_GE(v, last) << p;
    last = v;
  }
}

TEST(HistogramTest, SmallIntegersAreExactBuckets) {
  // Values below 10 each have their own unit-wide bucket.
  Histogram h;
  for (int i = 0; i < 90; ++i) h.Add(3);
  for (int i = 0; i < 10; ++i) h.Add(7);
  EXPECT_GE(h.Median(), 3);
  EXPECT_LT(h.Median(), 4);
  EXPECT_GE(h.Percentile(95), 7);
  EXPECT_LE(h.Percentile(95), 7);  // clamped to max
}

TEST(HistogramTest, MergeEqualsAddingEverything) {
  Histogram a, b, all;
  for (int i = 0; i < 500; ++i) {
    a.Add(i * 3.5);
    all.Add(i * 3.5);
    b.Add(1e6 + i);
    all.Add(1e6 + i);
  }
  a.Merge(b);
  EXPECT_EQ(a.Count(), all.Count());
  EXPECT_DOUBLE_EQ(a.Sum(), all.Sum());
  EXPECT_DOUBLE_EQ(a.Min(), all.Min());
  EXPECT_DOUBLE_EQ(a.Max(), all.Max());
  for (double p : {1.0, 50.0, 99.0}) {
    EXPECT_DOUBLE_EQ(a.Percentile(p), all.Percentile(p));
  }
  EXPECT_EQ(a.ToString(), all.ToString());
  // Merging an empty histogram changes nothing.
  Histogram empty;
  a.Merge(empty);
  EXPECT_DOUBLE_EQ(a.Min(), all.Min());
  EXPECT_EQ(a.Count(), all.Count());
}

TEST(HistogramTest, ClearAndToString) {
  Histogram h;
  h.Add(5);
  h.Add(5000);
  const std::string s = h.ToString();
  EXPECT_NE(s.find("Count: 2"), std::string::npos) << s;
  EXPECT_NE(s.find("Min: 5.0000"), std::string::npos) << s;
  EXPECT_NE(s.find("Max: 5000.0000"), std::string::npos) << s;
  EXPECT_NE(s.find("50.000%"), std::string::npos) << s;
  h.Clear();
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Max(), 0);
}

TEST(HistogramTest, BucketLimitsIncrease) {
  const auto& limits = Histogram::BucketLimits();
  ASSERT_GT(limits.size(), 100u);
  for (size_t i = 1; i < limits.size(); ++i) {
    ASSERT_GT(limits[i], limits[i - 1]);
    if (i + 1 < limits.size() && limits[i - 1] >= 10) {
      EXPECT_LE(limits[i] / limits[i - 1], 1.25) << limits[i];
    }
  }
  EXPECT_TRUE(std::isinf(limits.back()));
}

}  // namespace
}  // namespace sift
