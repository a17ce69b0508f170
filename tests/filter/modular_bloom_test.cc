// The modular blocked Bloom filter: no false negatives with any number of
// resident units, the rate of j units against the product of the units'
// theory, units dropped and loaded back, and damage to each part of the
// format.

#include "filter/modular_bloom.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "filter/bloom_math.h"
#include "filter/filter.h"
#include "gtest/gtest.h"
#include "tests/filter/filter_keys.h"
#include "util/coding.h"

namespace sift {
namespace {

using test::KeyFamily;
using test::KeySequence;

std::string Build(double bits_per_key, KeyFamily family, uint64_t n) {
  std::unique_ptr<FilterBuilder> builder =
      NewModularBloomBuilder(bits_per_key, kDefaultFilterSeed);
  KeySequence keys(family, 0);
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(keys.Next());
  return builder->Finish();
}

std::unique_ptr<ModularBloomReader> ParseOrDie(const std::string& serialized,
                                               uint32_t max_units) {
  absl::StatusOr<std::unique_ptr<ModularBloomReader>> reader =
      ModularBloomReader::Parse(serialized, max_units);
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? *std::move(reader) : nullptr;
}

double MeasuredFpr(const FilterReader& reader, KeyFamily family,
                   uint64_t first_absent, uint64_t probes) {
  KeySequence absent(family, first_absent);
  uint64_t hits = 0;
  for (uint64_t i = 0; i < probes; ++i)
    hits += reader.KeyMayMatch(absent.Next());
  return static_cast<double>(hits) / static_cast<double>(probes);
}

TEST(ModularBloomTest, UnitsFollowTheBudget) {
  EXPECT_EQ(FilterUnitsFor(10.0), 4u);
  EXPECT_EQ(FilterUnitsFor(1.0), 1u);
  EXPECT_EQ(FilterUnitsFor(0.0), 1u);
  EXPECT_EQ(FilterUnitsFor(14.0), 6u);
  EXPECT_EQ(FilterUnitsFor(1000.0), kMaxFilterUnits);
}

TEST(ModularBloomTest, NoFalseNegativesWithAnyResidentPrefix) {
  for (KeyFamily family :
       {KeyFamily::kRandom, KeyFamily::kDecimal, KeyFamily::kPrefixed}) {
    const uint64_t n = 20000;
    const std::string serialized = Build(10.0, family, n);
    for (uint32_t units = 0; units <= 4; ++units) {
      std::unique_ptr<ModularBloomReader> reader =
          ParseOrDie(serialized, units);
      ASSERT_NE(reader, nullptr);
      EXPECT_EQ(reader->num_units(), 4u);
      EXPECT_EQ(reader->resident_units(), units);
      KeySequence present(family, 0);
      for (uint64_t i = 0; i < n; ++i) {
        ASSERT_TRUE(reader->KeyMayMatch(present.Next()))
            << KeyFamilyName(family) << " key " << i << " units " << units;
      }
    }
  }
}

TEST(ModularBloomTest, RateOfResidentUnitsMatchesTheProductOfTheirTheory) {
  const uint64_t n = 100000;
  const std::string serialized = Build(10.0, KeyFamily::kRandom, n);
  for (uint32_t units = 0; units <= 4; ++units) {
    std::unique_ptr<ModularBloomReader> reader = ParseOrDie(serialized, units);
    double theory = 1.0;
    for (uint32_t u = 0; u < units; ++u) {
      const ModularHeader::Unit& unit = reader->header().units[u];
      const double exact = BlockedFpr(unit.num_bits, n, unit.num_probes);
      // The allocation's cheap estimate is close to the blocked layout's.
      EXPECT_NEAR(reader->UnitFpr(u), exact, exact * 0.02);
      theory *= exact;
    }
    EXPECT_NEAR(TheoreticalFpr(reader->info()), theory, theory * 1e-9);
    const double measured = MeasuredFpr(*reader, KeyFamily::kRandom, n, 400000);
    // 400,000 probes: the 1% row expects 4,000 hits (sd 63).
    EXPECT_GT(measured, theory * 0.85) << units << " units";
    EXPECT_LT(measured, theory * 1.15) << units << " units";
  }
  // Four units of 2.5 bits (k = 2) beat one 10-bit blocked filter.
  std::unique_ptr<ModularBloomReader> all = ParseOrDie(serialized, 4);
  EXPECT_LT(TheoreticalFpr(all->info()),
            BlockedFpr(static_cast<uint64_t>(n * 10.0) / 512 * 512, n,
                       BlockedNumProbes(10.0)));
}

TEST(ModularBloomTest, DroppedUnitsLoadBackFromTheirBytes) {
  const uint64_t n = 5000;
  const std::string serialized = Build(10.0, KeyFamily::kDecimal, n);
  std::unique_ptr<ModularBloomReader> reader = ParseOrDie(serialized, 4);
  const size_t full = reader->MemoryUsage();
  std::vector<std::unique_ptr<AlignedWords>> retired;
  retired.push_back(reader->DropLastUnit());
  retired.push_back(reader->DropLastUnit());
  EXPECT_EQ(reader->resident_units(), 2u);
  EXPECT_EQ(reader->MemoryUsage(),
            full - reader->UnitMemory(2) - reader->UnitMemory(3));
  const double two = MeasuredFpr(*reader, KeyFamily::kDecimal, n, 100000);
  const ModularHeader& h = reader->header();
  ASSERT_TRUE(reader
                  ->LoadNextUnit(serialized.substr(
                      h.UnitOffset(2), ModularHeader::UnitLength(h.units[2])))
                  .ok());
  ASSERT_TRUE(reader
                  ->LoadNextUnit(serialized.substr(
                      h.UnitOffset(3), ModularHeader::UnitLength(h.units[3])))
                  .ok());
  EXPECT_EQ(reader->MemoryUsage(), full);
  const double four = MeasuredFpr(*reader, KeyFamily::kDecimal, n, 100000);
  EXPECT_LT(four, two / 4);
  KeySequence present(KeyFamily::kDecimal, 0);
  for (uint64_t i = 0; i < n; ++i)
    ASSERT_TRUE(reader->KeyMayMatch(present.Next()));
}

TEST(ModularBloomTest, AUnitsBytesAreCheckedWhenLoaded) {
  const std::string serialized = Build(10.0, KeyFamily::kRandom, 3000);
  std::unique_ptr<ModularBloomReader> reader = ParseOrDie(serialized, 1);
  const ModularHeader& h = reader->header();
  std::string unit1 =
      serialized.substr(h.UnitOffset(1), ModularHeader::UnitLength(h.units[1]));
  // Unit 2's bytes in unit 1's place: the checksum covers the index.
  const std::string unit2 =
      serialized.substr(h.UnitOffset(2), ModularHeader::UnitLength(h.units[2]));
  EXPECT_TRUE(absl::IsDataLoss(reader->LoadNextUnit(unit2)));
  std::string flipped = unit1;
  flipped[10] ^= 1;
  EXPECT_TRUE(absl::IsDataLoss(reader->LoadNextUnit(flipped)));
  EXPECT_TRUE(absl::IsDataLoss(
      reader->LoadNextUnit(std::string_view(unit1).substr(1))));
  EXPECT_EQ(reader->resident_units(), 1u);
  EXPECT_TRUE(reader->LoadNextUnit(unit1).ok());
  EXPECT_EQ(reader->resident_units(), 2u);
}

TEST(ModularBloomTest, DamageIsCorruption) {
  const std::string good = Build(10.0, KeyFamily::kRandom, 2000);
  ModularHeader header;
  ASSERT_TRUE(header.DecodeFrom(good).ok());
  const size_t header_length = header.EncodedLength();
  // Any flipped header byte fails the header checksum; any flipped unit byte
  // the unit's (checked when the unit is loaded: Parse loads them all here).
  for (size_t i = 2; i < good.size(); i += 7) {
    std::string bad = good;
    bad[i] ^= 0x20;
    EXPECT_TRUE(absl::IsDataLoss(
        ModularBloomReader::Parse(bad, kMaxFilterUnits).status()))
        << "byte " << i << " of " << good.size() << " (header " << header_length
        << ")";
  }
  for (size_t cut :
       {size_t{0}, size_t{5}, size_t{24}, header_length, good.size() - 1}) {
    EXPECT_TRUE(absl::IsDataLoss(
        ModularBloomReader::Parse(good.substr(0, cut), 1).status()))
        << cut;
  }
  EXPECT_TRUE(absl::IsDataLoss(
      ModularBloomReader::Parse(good + "x", kMaxFilterUnits).status()));

  // Fields that a valid checksum cannot excuse.
  auto reencoded = [&](auto mutate) {
    ModularHeader h = header;
    mutate(&h);
    std::string bytes;
    h.EncodeTo(&bytes);
    return bytes + good.substr(header_length);
  };
  EXPECT_TRUE(absl::IsDataLoss(
      ModularBloomReader::Parse(
          reencoded([](ModularHeader* h) { h->units[0].num_probes = 0; }), 4)
          .status()));
  EXPECT_TRUE(absl::IsDataLoss(
      ModularBloomReader::Parse(
          reencoded([](ModularHeader* h) { h->units[1].num_bits += 64; }), 4)
          .status()));
  EXPECT_TRUE(absl::IsDataLoss(
      ModularBloomReader::Parse(
          reencoded([](ModularHeader* h) { h->num_keys = 0; }), 4)
          .status()));
}

TEST(ModularBloomTest, FilterReaderParseDispatchesAndEmptyFiltersSayNo) {
  const std::string serialized = Build(5.0, KeyFamily::kPrefixed, 0);
  absl::StatusOr<std::unique_ptr<FilterReader>> reader =
      FilterReader::Parse(serialized);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->info().kind, kModularBloomTag);
  EXPECT_EQ((*reader)->info().num_units, 2u);
  EXPECT_EQ((*reader)->info().resident_units, 2u);
  EXPECT_FALSE((*reader)->KeyMayMatch("anything"));
  // With no unit resident nothing is ruled out.
  absl::StatusOr<std::unique_ptr<FilterReader>> none =
      FilterReader::Parse(serialized, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)->KeyMayMatch("anything"));
}

}  // namespace
}  // namespace sift
