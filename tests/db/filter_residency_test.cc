// FilterResidency::Choose, the units each table keeps under a memory limit:
// on random tree shapes its expected false positives per absent Get are
// never above uniform's (every table keeping the same share of its bits) at
// the same memory, and within 2% of the best choice found by trying every
// combination.

#include "db/filter_residency.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "filter/aligned_words.h"
#include "filter/bloom_math.h"
#include "filter/modular_bloom.h"
#include "gtest/gtest.h"
#include "util/random.h"

namespace sift {
namespace {

ModularHeader HeaderFor(uint64_t keys, double bits_per_key) {
  ModularHeader h;
  h.num_keys = keys;
  const uint32_t units = FilterUnitsFor(bits_per_key);
  const double unit_bits = bits_per_key / units;
  const uint64_t lines = static_cast<uint64_t>(
      std::ceil(static_cast<double>(keys) * unit_bits / kFilterLineBits));
  for (uint32_t u = 0; u < units; ++u) {
    h.units.push_back({std::max<uint64_t>(lines, 1) * kFilterLineBits,
                       BlockedNumProbes(unit_bits)});
  }
  return h;
}

uint64_t Bytes(const ModularHeader& h, uint32_t units) {
  uint64_t bytes = 0;
  for (uint32_t u = 0; u < units; ++u) {
    bytes += AlignedWords::BytesFor(h.units[u].num_bits / 64);
  }
  return bytes;
}

// Expected block reads per absent Get that the filters let through.
double ExpectedFalsePositives(const std::vector<ModularHeader>& headers,
                              const std::vector<double>& q,
                              const std::vector<uint32_t>& units) {
  double sum = 0;
  for (size_t t = 0; t < headers.size(); ++t) {
    double pass = q[t];
    for (uint32_t u = 0; u < units[t]; ++u) {
      pass *= StandardFpr(headers[t].units[u].num_bits, headers[t].num_keys,
                          headers[t].units[u].num_probes);
    }
    sum += pass;
  }
  return sum;
}

struct Shape {
  std::vector<ModularHeader> headers;
  std::vector<const ModularHeader*> pointers;
  std::vector<double> q;
  uint64_t total = 0;
};

Shape RandomShape(Random* rnd, int max_tables) {
  Shape s;
  const int tables = 2 + static_cast<int>(rnd->Uniform(max_tables - 1));
  for (int t = 0; t < tables; ++t) {
    const uint64_t keys = 1000 + rnd->Uniform(100000);
    const double bits = 3.0 + rnd->Uniform(130) / 10.0;  // 3 .. 16 bits/key
    s.headers.push_back(HeaderFor(keys, bits));
    // Level-0-like tables that every Get probes, and tables of a level
    // probed by a slice of the Gets.
    s.q.push_back(rnd->OneIn(3) ? 1.0 : (1 + rnd->Uniform(1000)) / 1000.0);
  }
  for (const ModularHeader& h : s.headers) {
    s.pointers.push_back(&h);
    s.total += Bytes(h, static_cast<uint32_t>(h.units.size()));
  }
  return s;
}

// Uniform at a budget: the largest share f of every table's units (rounded
// down) that fits.
std::vector<uint32_t> Uniform(const Shape& s, uint64_t budget) {
  std::vector<uint32_t> best(s.headers.size(), 0);
  for (int step = 0; step <= 1000; ++step) {
    const double f = step / 1000.0;
    std::vector<uint32_t> units;
    uint64_t bytes = 0;
    for (const ModularHeader& h : s.headers) {
      units.push_back(static_cast<uint32_t>(std::floor(f * h.units.size())));
      bytes += Bytes(h, units.back());
    }
    if (bytes <= budget) best = units;
  }
  return best;
}

TEST(FilterResidencyTest, NeverWorseThanUniformAtTheSameMemory) {
  Random rnd(2024);
  for (int trial = 0; trial < 300; ++trial) {
    const Shape s = RandomShape(&rnd, 40);
    const uint64_t budget =
        s.total * (5 + rnd.Uniform(96)) / 100;  // 5% .. 100%
    double threshold = -1;
    const std::vector<uint32_t> chosen =
        FilterResidency::Choose(s.pointers, s.q, budget, &threshold);
    uint64_t used = 0;
    for (size_t t = 0; t < chosen.size(); ++t) {
      used += Bytes(s.headers[t], chosen[t]);
    }
    ASSERT_LE(used, budget) << trial;
    const std::vector<uint32_t> uniform = Uniform(s, budget);
    EXPECT_LE(ExpectedFalsePositives(s.headers, s.q, chosen),
              ExpectedFalsePositives(s.headers, s.q, uniform) * (1 + 1e-12))
        << trial;
    EXPECT_EQ(threshold == 0, used == s.total) << trial;
  }
}

TEST(FilterResidencyTest, ManyTablesWithinTwoPercentOfTheExactChoice) {
  Random rnd(99);
  for (int trial = 0; trial < 30; ++trial) {
    Shape s = RandomShape(&rnd, 150);
    while (s.headers.size() <= FilterResidency::kExactTables) {
      s = RandomShape(&rnd, 150);
    }
    const uint64_t budget = s.total * (5 + rnd.Uniform(96)) / 100;
    const double greedy = ExpectedFalsePositives(
        s.headers, s.q,
        FilterResidency::Choose(s.pointers, s.q, budget, nullptr));
    const double exact = ExpectedFalsePositives(
        s.headers, s.q, FilterResidency::ChooseExact(s.pointers, s.q, budget));
    EXPECT_LE(greedy, exact * 1.02)
        << trial << " tables " << s.headers.size() << " budget " << budget
        << " of " << s.total;
  }
}

TEST(FilterResidencyTest, WithinTwoPercentOfTheBestCombination) {
  Random rnd(7);
  for (int trial = 0; trial < 200; ++trial) {
    // Few tables: Choose is exact there; this checks ChooseExact against
    // every combination.
    const Shape s = RandomShape(&rnd, 4);
    const uint64_t budget = s.total * (5 + rnd.Uniform(96)) / 100;
    const std::vector<uint32_t> chosen =
        FilterResidency::Choose(s.pointers, s.q, budget, nullptr);
    // Every combination of resident prefixes.
    double best = INFINITY;
    std::vector<uint32_t> units(s.headers.size(), 0);
    while (true) {
      uint64_t bytes = 0;
      for (size_t t = 0; t < units.size(); ++t) {
        bytes += Bytes(s.headers[t], units[t]);
      }
      if (bytes <= budget) {
        best = std::min(best, ExpectedFalsePositives(s.headers, s.q, units));
      }
      size_t t = 0;
      while (t < units.size() && ++units[t] > s.headers[t].units.size()) {
        units[t++] = 0;
      }
      if (t == units.size()) break;
    }
    EXPECT_LE(ExpectedFalsePositives(s.headers, s.q, chosen), best * 1.02)
        << trial << " budget " << budget << " of " << s.total;
  }
}

}  // namespace
}  // namespace sift
