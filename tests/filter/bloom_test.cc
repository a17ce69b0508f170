// Builder and reader behaviour: no false negatives at any size, sizing, the
// empty filter, repeated keys, fill ratio and the probe helpers.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "filter/aligned_words.h"
#include "filter/bloom_math.h"
#include "filter/bloom_probe.h"
#include "filter/filter.h"
#include "gtest/gtest.h"
#include "tests/filter/filter_keys.h"
#include "util/hash.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KeyFamily;
using test::KeySequence;

std::unique_ptr<FilterReader> ParseOrDie(const std::string& serialized) {
  absl::StatusOr<std::unique_ptr<FilterReader>> reader =
      FilterReader::Parse(serialized);
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? std::move(*reader) : nullptr;
}

// Builds a filter over keys 0..n-1 of `family` and checks every one of them
// is reported present. Returns the reader.
std::unique_ptr<FilterReader> BuildAndCheckAll(FilterKind kind, double bpk,
                                               KeyFamily family, uint64_t n) {
  std::unique_ptr<FilterBuilder> builder = FilterBuilder::Make(kind, bpk);
  KeySequence add(family, 0);
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(add.Next());
  EXPECT_EQ(builder->NumKeys(), n);
  std::unique_ptr<FilterReader> reader = ParseOrDie(builder->Finish());
  if (reader == nullptr) return nullptr;
  KeySequence check(family, 0);
  uint64_t missing = 0;
  for (uint64_t i = 0; i < n; ++i)
    missing += !reader->KeyMayMatch(check.Next());
  EXPECT_EQ(missing, 0u) << "false negatives: n=" << n << " bpk=" << bpk
                         << " family=" << test::KeyFamilyName(family);
  return reader;
}

class BloomKindTest : public ::testing::TestWithParam<FilterKind> {};

TEST_P(BloomKindTest, NoFalseNegativesSmallCounts) {
  // Every count from 1 to 200 (one line, a few lines, a word, a few words),
  // at bits/key from starved to generous.
  for (double bpk : {1.0, 4.5, 10.0, 23.0}) {
    for (uint64_t n = 1; n <= 200; ++n) {
      BuildAndCheckAll(GetParam(), bpk, KeyFamily::kRandom, n);
    }
  }
}

TEST_P(BloomKindTest, NoFalseNegativesUpToAMillion) {
  const KeyFamily families[] = {KeyFamily::kRandom, KeyFamily::kDecimal,
                                KeyFamily::kPrefixed};
  int f = 0;
  for (uint64_t n : {1000ull, 10000ull, 100000ull, 1000000ull}) {
    // Rotate the key family and bits/key so the million-key case runs once.
    const double bpk = n == 1000000 ? 10.0 : 7.3;
    std::unique_ptr<FilterReader> reader =
        BuildAndCheckAll(GetParam(), bpk, families[f++ % 3], n);
    ASSERT_NE(reader, nullptr);
    EXPECT_EQ(reader->info().num_keys, n);
  }
}

TEST_P(BloomKindTest, SizedByBitsPerKey) {
  const FilterKind kind = GetParam();
  const bool blocked = kind == FilterKind::kBlockedBloom;
  for (double bpk : {2.0, 9.5, 10.0, 16.25}) {
    std::unique_ptr<FilterReader> reader =
        BuildAndCheckAll(kind, bpk, KeyFamily::kRandom, 10000);
    ASSERT_NE(reader, nullptr);
    const FilterInfo info = reader->info();
    EXPECT_TRUE(info.known);
    EXPECT_EQ(info.kind, static_cast<uint8_t>(kind));
    EXPECT_EQ(info.seed, kDefaultFilterSeed);
    // m is n * bpk rounded up to whole words or lines, never less.
    const uint64_t granule = blocked ? 512 : 64;
    EXPECT_EQ(info.num_bits % granule, 0u);
    EXPECT_GE(info.num_bits, static_cast<uint64_t>(std::ceil(10000 * bpk)));
    EXPECT_LT(info.num_bits, static_cast<uint64_t>(10000 * bpk) + granule);
    EXPECT_EQ(info.num_probes, NumProbesFor(kind, bpk));
    // The array is copied into whole cache lines.
    EXPECT_GE(reader->MemoryUsage(), info.num_bits / 8);
    EXPECT_LE(reader->MemoryUsage(), info.num_bits / 8 + 64 + 256);
  }
}

TEST_P(BloomKindTest, SizedForTargetFpr) {
  const FilterKind kind = GetParam();
  for (double p : {0.1, 0.01, 0.001}) {
    std::unique_ptr<FilterBuilder> builder =
        FilterBuilder::MakeForFpr(kind, 50000, p);
    KeySequence keys(KeyFamily::kPrefixed, 0);
    for (int i = 0; i < 50000; ++i) builder->AddKey(keys.Next());
    std::unique_ptr<FilterReader> reader = ParseOrDie(builder->Finish());
    ASSERT_NE(reader, nullptr);
    const FilterInfo info = reader->info();
    const double bpk = BitsPerKeyForFpr(kind, p);
    EXPECT_NEAR(info.bits_per_key(), bpk, 512.0 / 50000 + 0.001);
    // The theory at the size chosen meets the target (to table precision).
    EXPECT_LE(
        TheoreticalFpr(kind, info.num_bits, info.num_keys, info.num_probes),
        p * 1.03)
        << "p=" << p;
  }
  // Fewer keys than expected keep the expected size; more keys grow it.
  std::unique_ptr<FilterBuilder> few =
      FilterBuilder::MakeForFpr(kind, 10000, 0.01);
  few->AddKey("a");
  std::unique_ptr<FilterReader> few_reader = ParseOrDie(few->Finish());
  ASSERT_NE(few_reader, nullptr);
  EXPECT_GE(few_reader->info().num_bits, 10000 * 9u);
  EXPECT_TRUE(few_reader->KeyMayMatch("a"));

  std::unique_ptr<FilterBuilder> many =
      FilterBuilder::MakeForFpr(kind, 10, 0.01);
  KeySequence keys(KeyFamily::kDecimal, 0);
  for (int i = 0; i < 10000; ++i) many->AddKey(keys.Next());
  std::unique_ptr<FilterReader> many_reader = ParseOrDie(many->Finish());
  ASSERT_NE(many_reader, nullptr);
  EXPECT_GE(many_reader->info().num_bits, 10000 * 9u);
}

TEST_P(BloomKindTest, EmptyFilterAnswersNo) {
  std::unique_ptr<FilterBuilder> builder = FilterBuilder::Make(GetParam(), 10);
  EXPECT_EQ(builder->NumKeys(), 0u);
  const std::string serialized = builder->Finish();
  std::unique_ptr<FilterReader> reader = ParseOrDie(serialized);
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->info().known);
  EXPECT_EQ(reader->info().num_keys, 0u);
  EXPECT_EQ(reader->info().num_bits, 0u);
  EXPECT_EQ(reader->info().bits_per_key(), 0.0);
  EXPECT_EQ(reader->FillRatio(), 0.0);
  KeySequence keys(KeyFamily::kRandom, 0);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(reader->KeyMayMatch(keys.Next()));
  EXPECT_FALSE(reader->KeyMayMatch(""));
}

TEST_P(BloomKindTest, RepeatedAdjacentKeysCountOnce) {
  std::unique_ptr<FilterBuilder> builder = FilterBuilder::Make(GetParam(), 10);
  for (const char* key : {"a", "a", "a", "b", "b", "a", "c", "c"}) {
    builder->AddKey(key);
  }
  EXPECT_EQ(builder->NumKeys(), 4u);  // a, b, a, c
  std::unique_ptr<FilterReader> reader = ParseOrDie(builder->Finish());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->info().num_keys, 4u);
  for (const char* key : {"a", "b", "c"}) EXPECT_TRUE(reader->KeyMayMatch(key));
}

TEST_P(BloomKindTest, FinishResetsTheBuilder) {
  std::unique_ptr<FilterBuilder> builder = FilterBuilder::Make(GetParam(), 10);
  builder->AddKey("first");
  const std::string one = builder->Finish();
  EXPECT_EQ(builder->NumKeys(), 0u);
  builder->AddKey("second");
  std::unique_ptr<FilterReader> reader = ParseOrDie(builder->Finish());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->info().num_keys, 1u);
  EXPECT_TRUE(reader->KeyMayMatch("second"));
  // The same builder reused gives the same bytes for the same keys.
  builder->AddKey("first");
  EXPECT_EQ(builder->Finish(), one);
}

TEST_P(BloomKindTest, SeedChangesTheBitsNotTheAnswers) {
  std::unique_ptr<FilterBuilder> a = FilterBuilder::Make(GetParam(), 10, 1);
  std::unique_ptr<FilterBuilder> b = FilterBuilder::Make(GetParam(), 10, 2);
  KeySequence keys(KeyFamily::kDecimal, 0);
  for (int i = 0; i < 1000; ++i) {
    const std::string key(keys.Next());
    a->AddKey(key);
    b->AddKey(key);
  }
  const std::string sa = a->Finish(), sb = b->Finish();
  EXPECT_NE(sa, sb);
  std::unique_ptr<FilterReader> ra = ParseOrDie(sa), rb = ParseOrDie(sb);
  ASSERT_NE(ra, nullptr);
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ(ra->info().seed, 1u);
  EXPECT_EQ(rb->info().seed, 2u);
  KeySequence check(KeyFamily::kDecimal, 0);
  for (int i = 0; i < 1000; ++i) {
    const std::string key(check.Next());
    EXPECT_TRUE(ra->KeyMayMatch(key));
    EXPECT_TRUE(rb->KeyMayMatch(key));
  }
}

TEST_P(BloomKindTest, FillRatioMatchesTheory) {
  // Expected fill after n keys with k probes in m bits: 1 - e^(-kn/m) for
  // independent probes; the blocked layout's probes are distinct within a
  // key, which changes the fill by well under 1%.
  const FilterKind kind = GetParam();
  for (double bpk : {4.0, 10.0, 20.0}) {
    std::unique_ptr<FilterReader> reader =
        BuildAndCheckAll(kind, bpk, KeyFamily::kRandom, 100000);
    ASSERT_NE(reader, nullptr);
    const FilterInfo info = reader->info();
    const double expected = -std::expm1(-static_cast<double>(info.num_probes) *
                                        info.num_keys / info.num_bits);
    EXPECT_NEAR(reader->FillRatio(), expected, 0.01) << "bpk=" << bpk;
    EXPECT_NEAR(FprFromFill(reader->FillRatio(), info.num_probes),
                std::pow(expected, info.num_probes),
                0.1 * std::pow(expected, info.num_probes));
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, BloomKindTest,
                         ::testing::Values(FilterKind::kStandardBloom,
                                           FilterKind::kBlockedBloom),
                         [](const auto& info) {
                           return info.param == FilterKind::kStandardBloom
                                      ? "Standard"
                                      : "Blocked";
                         });

TEST(BloomProbeTest, FastRangeCoversRangesPastTwoToThe32) {
  // A filter of more than 2^32 bits must reach its upper bits: probes over
  // m = 2^34 + 12345 bits land above 2^32 about 3/4 of the time, stay below
  // m, and spread evenly over its quarters.
  const uint64_t m = (uint64_t{1} << 34) + 12345;
  uint64_t quarters[4] = {};
  uint64_t above = 0;
  KeySequence keys(KeyFamily::kRandom, 0);
  for (int i = 0; i < 100000; ++i) {
    ForEachStandardProbe(Hash64(keys.Next(), 0), 7, m, [&](uint64_t bit) {
      EXPECT_LT(bit, m);
      above += bit >= (uint64_t{1} << 32);
      ++quarters[bit / (m / 4 + 1)];
      return true;
    });
  }
  EXPECT_NEAR(above / 700000.0, 0.75, 0.01);
  for (uint64_t q : quarters) EXPECT_NEAR(q / 700000.0, 0.25, 0.01);
  // Lines past 2^32 for the blocked layout.
  const uint64_t lines = (uint64_t{1} << 33) + 7;
  EXPECT_EQ(BlockedLine(~uint64_t{0}, lines), lines - 1);
  EXPECT_EQ(BlockedLine(0, lines), 0u);
  EXPECT_GT(BlockedLine(uint64_t{3} << 62, lines), uint64_t{1} << 32);
  EXPECT_EQ(FastRange64(12345, 0), 0u);
}

TEST(BloomProbeTest, BlockedMaskSetsExactlyKDistinctBits) {
  KeySequence keys(KeyFamily::kRandom, 0);
  for (uint32_t k = 1; k <= kMaxFilterProbes; ++k) {
    for (int i = 0; i < 2000; ++i) {
      uint64_t mask[kLineWords] = {};
      const uint64_t h = Hash64(keys.Next(), 0);
      BlockedMask(h, k, mask);
      int bits = 0;
      for (uint64_t w : mask) bits += std::popcount(w);
      ASSERT_EQ(bits, static_cast<int>(k));
      // BlockedAdd (which has a fast path) sets exactly the mask's bits.
      uint64_t added[kLineWords] = {};
      BlockedAdd(h, k, 1, added);
      for (uint32_t w = 0; w < kLineWords; ++w) ASSERT_EQ(added[w], mask[w]);
      // The query looks at exactly these bits: a line equal to the mask
      // matches, and a full line missing any one of them does not.
      EXPECT_TRUE(BlockedMayContain(h, k, 1, mask));
      const int word = i % kLineWords;
      if (mask[word] != 0) {
        uint64_t line[kLineWords];
        std::fill(line, line + kLineWords, ~uint64_t{0});
        const int nth = i % std::popcount(mask[word]);
        uint64_t bit = mask[word];
        for (int j = 0; j < nth; ++j) bit &= bit - 1;  // drop lower bits
        line[word] &= ~(bit & -bit);
        EXPECT_FALSE(BlockedMayContain(h, k, 1, line));
      }
    }
  }
}

// The AVX2 test of the first draws answers as the scalar one does, for every
// k, on lines from sparse to nearly full (so both answers occur often), and
// on lines missing exactly one of the key's bits.
TEST(BloomProbeTest, Avx2FirstDrawsAgreeWithScalar) {
  if (!internal::kUseAvx2Draws) GTEST_SKIP() << "the CPU has no AVX2";
#if SIFT_AVX2_DRAWS
  Random rnd(301);
  int positives = 0;
  int negatives = 0;
  for (uint32_t k = 1; k <= kMaxFilterProbes; ++k) {
    for (int i = 0; i < 4000; ++i) {
      // Each bit set with probability 1 - 2^-density: 1/2 .. 255/256.
      const int density = 1 + i % 8;
      uint64_t line[kLineWords];
      for (uint64_t& w : line) {
        w = ~uint64_t{0};
        for (int d = 0; d < density; ++d) w &= rnd.Next64();
        w = ~w;
      }
      const uint64_t fields = rnd.Next64();
      const bool scalar = internal::FirstDrawsSetScalar(line, fields, k);
      ASSERT_EQ(internal::FirstDrawsSetAvx2(line, fields, k), scalar)
          << "k " << k << " fields " << fields;
      (scalar ? positives : negatives)++;
      // A full line without one of the first draws' bits answers no.
      const uint32_t draw = static_cast<uint32_t>(i) % std::min<uint32_t>(k, 7);
      const uint32_t offset = (fields >> (9 * draw)) & 511;
      std::fill(line, line + kLineWords, ~uint64_t{0});
      ASSERT_TRUE(internal::FirstDrawsSetAvx2(line, fields, k));
      line[offset / 64] &= ~(uint64_t{1} << (offset % 64));
      ASSERT_FALSE(internal::FirstDrawsSetAvx2(line, fields, k))
          << "k " << k << " draw " << draw;
    }
  }
  EXPECT_GT(positives, 5000);
  EXPECT_GT(negatives, 5000);
#endif
}

TEST(BloomProbeTest, BlockedOffsetsAreUniform) {
  // Each of the 512 offsets should be chosen about equally often: 600,000
  // draws give 1171.9 per offset with a standard deviation of about 34.
  std::vector<int> count(512, 0);
  KeySequence keys(KeyFamily::kDecimal, 0);
  for (int i = 0; i < 100000; ++i) {
    uint64_t mask[kLineWords] = {};
    BlockedMask(Hash64(keys.Next(), 0), 6, mask);
    for (int b = 0; b < 512; ++b) count[b] += (mask[b / 64] >> (b % 64)) & 1;
  }
  for (int b = 0; b < 512; ++b) {
    EXPECT_NEAR(count[b], 600000 / 512.0, 8 * 34.3) << "offset " << b;
  }
}

TEST(FilterReaderTest, LocatedProbeAnswersAsMayMatch) {
  // A batch locates a key (and prefetches its memory) in one pass and tests
  // it in another: the two steps must give MayMatch's answer for every kind,
  // present keys and absent ones, positives and negatives alike.
  for (FilterKind kind : {FilterKind::kStandardBloom, FilterKind::kBlockedBloom,
                          FilterKind::kBinaryFuse}) {
    SCOPED_TRACE(static_cast<int>(kind));
    // Few bits per key, so that absent keys give false positives too.
    std::unique_ptr<FilterReader> reader =
        BuildAndCheckAll(kind, 4.0, KeyFamily::kDecimal, 5000);
    ASSERT_NE(reader, nullptr);
    uint64_t positives = 0;
    uint64_t negatives = 0;
    KeySequence keys(KeyFamily::kDecimal, 0);  // 5000 present, then absent
    for (int i = 0; i < 40000; ++i) {
      const std::string_view key = keys.Next();
      FilterKeyHash located_key(key);
      const FilterReader::Located located = reader->Locate(&located_key);
      const bool answer = reader->MayMatch(located, &located_key);
      ASSERT_EQ(answer, reader->KeyMayMatch(key)) << key;
      if (i < 5000) {
        ASSERT_TRUE(answer) << key;
      }
      (answer ? positives : negatives) += 1;
    }
    EXPECT_GT(positives, 5000u);  // some absent keys pass
    EXPECT_GT(negatives, 20000u);
  }
}

TEST(AlignedWordsTest, CacheLineAlignedAndZeroed) {
  for (uint64_t words : {0ull, 1ull, 7ull, 8ull, 9ull, 1000ull}) {
    AlignedWords a(words);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
    EXPECT_EQ(a.size_bytes() % 64, 0u);
    EXPECT_GE(a.size_bytes(), std::max<uint64_t>(words * 8, 64));
    for (size_t i = 0; i < a.size_bytes() / 8; ++i) EXPECT_EQ(a.data()[i], 0u);
  }
}

}  // namespace
}  // namespace sift
