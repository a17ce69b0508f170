// Measured false-positive rates of the binary fuse filter against theory,
// 2^-w: for each key family (random, decimal text, "user:00000001"-style), n
// in {1,000, 18,000, 200,000}, fingerprint width w in {1, 2, 4, 8, 12, 16}
// and both format versions (4-wise, and the 3-wise version 1), the rate over
// absent keys must be within 0.8x-1.25x of 2^-w. Also checks the space at a
// million keys: the writers' slots per key (1.077) times w bits per key.
//
// Why this cannot flake: keys and seeds are fixed, so every run counts the
// same false positives. And the band is wide against the noise: each point
// probes enough absent keys for about 600 expected false positives (at least
// 100,000 probes), so the count's standard deviation is about 4% of the
// expectation and the band edges are more than 5 deviations away; other seeds
// would pass too. Unlike a Bloom filter, a fuse filter's rate does not depend
// on how the keys happened to fill it (an absent key's fingerprint is
// independent of its slots), so one filter per point suffices. Under
// sanitizers (SIFT_SANITIZED set) each point expects ~150 false positives and
// the band widens by five binomial standard deviations of that sample.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>

#include "filter/bloom_math.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "filter/fuse_math.h"
#include "gtest/gtest.h"
#include "tests/filter/filter_keys.h"

namespace sift {
namespace {

using test::KeyFamily;
using test::KeySequence;

bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }

using FprParam = std::tuple<KeyFamily, uint64_t, uint32_t>;

class FuseFprTest : public ::testing::TestWithParam<FprParam> {};

TEST_P(FuseFprTest, MeasuredRateMatchesTheory) {
  const auto [family, n, version] = GetParam();
  const double expected_fps = Sanitized() ? 150 : 600;
  const uint64_t min_probes = Sanitized() ? 25000 : 100000;
  for (uint32_t w : {1u, 2u, 4u, 8u, 12u, 16u}) {
    std::unique_ptr<FilterBuilder> builder =
        version == kFuseFormatVersion
            ? FilterBuilder::MakeForFpr(FilterKind::kBinaryFuse, n, FuseFpr(w),
                                        kDefaultFilterSeed + w)
            : NewFuseFilterBuilder(w, kDefaultFilterSeed + w, version);
    KeySequence present(family, 0);
    for (uint64_t i = 0; i < n; ++i) builder->AddKey(present.Next());
    absl::StatusOr<std::unique_ptr<FilterReader>> reader =
        FilterReader::Parse(builder->Finish());
    ASSERT_TRUE(reader.ok()) << reader.status();
    const FilterInfo info = (*reader)->info();
    ASSERT_EQ(info.num_keys, n);
    ASSERT_EQ(info.version, version);
    ASSERT_EQ(info.fingerprint_bits, w);
    const double theory = TheoreticalFpr(info);
    ASSERT_DOUBLE_EQ(theory, std::ldexp(1.0, -static_cast<int>(w)));
    const uint64_t probes = std::max<uint64_t>(
        min_probes, static_cast<uint64_t>(std::ceil(expected_fps / theory)));
    KeySequence absent(family, n);  // keys n, n+1, ... are never added
    uint64_t fps = 0;
    for (uint64_t i = 0; i < probes; ++i) {
      fps += (*reader)->KeyMayMatch(absent.Next());
    }
    const double measured = static_cast<double>(fps) / probes;
    const double ratio = measured / theory;
    double lo = 0.8, hi = 1.25;
    if (Sanitized()) {
      const double sd = std::sqrt(theory * (1 - theory) / probes) / theory;
      lo -= 5 * sd;
      hi += 5 * sd;
    }
    std::printf(
        "v%u %-8s n=%-7llu w=%-2u bits/key %6.3f  theory %.4g%%  "
        "measured %.4g%%  ratio %.3f  (%llu probes)\n",
        version, test::KeyFamilyName(family),
        static_cast<unsigned long long>(n), w, info.bits_per_key(),
        100 * theory, 100 * measured, ratio,
        static_cast<unsigned long long>(probes));
    EXPECT_GE(ratio, lo) << "w=" << w;
    EXPECT_LE(ratio, hi) << "w=" << w;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grid, FuseFprTest,
    ::testing::Combine(
        ::testing::Values(KeyFamily::kRandom, KeyFamily::kDecimal,
                          KeyFamily::kPrefixed),
        ::testing::Values(uint64_t{1000}, uint64_t{18000}, uint64_t{200000}),
        ::testing::Values(uint32_t{kFuseFormatVersion},
                          uint32_t{kFuseFormatVersionV1})),
    [](const ::testing::TestParamInfo<FprParam>& info) {
      return std::string(test::KeyFamilyName(std::get<0>(info.param))) + "_" +
             std::to_string(std::get<1>(info.param)) + "_v" +
             std::to_string(std::get<2>(info.param));
    });

// The space at a million keys, per width: the writers' 1.077 slots a key
// (FuseLayoutFor), so 1.077 w bits per key, 8% above the information limit
// of w bits (version 1: 1.13 w).
TEST(FuseSpaceTest, BitsPerKeyAtAMillionKeys) {
  const uint64_t n = Sanitized() ? 200000 : 1000000;
  for (double budget : {9.0, 10.0, 18.0}) {
    std::unique_ptr<FilterBuilder> builder =
        FilterBuilder::Make(FilterKind::kBinaryFuse, budget);
    KeySequence present(KeyFamily::kRandom, 0);
    for (uint64_t i = 0; i < n; ++i) builder->AddKey(present.Next());
    absl::StatusOr<std::unique_ptr<FilterReader>> reader =
        FilterReader::Parse(builder->Finish());
    ASSERT_TRUE(reader.ok()) << reader.status();
    const FilterInfo info = (*reader)->info();
    const uint32_t w = info.fingerprint_bits;
    std::printf("budget %.1f bits/key: w=%u, %.3f bits/key, FPR %.4g%%\n",
                budget, w, info.bits_per_key(), 100 * TheoreticalFpr(info));
    // The width the budget buys, rounded down or up (FingerprintBitsFor).
    EXPECT_GE(w, FingerprintBitsFor(budget, n, 0.0));
    EXPECT_LE(w, FingerprintBitsFor(budget, n, 0.999999));
    const double slots_per_key =
        static_cast<double>(FuseLayoutFor(n, 1).num_slots()) / n;
    EXPECT_NEAR(info.bits_per_key(), w * slots_per_key, 0.002 * w);
    if (!Sanitized()) {
      EXPECT_LT(slots_per_key, 1.08);
    }
  }
}

}  // namespace
}  // namespace sift
