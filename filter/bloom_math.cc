#include "filter/bloom_math.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "filter/filter_format.h"
#include "filter/fuse_math.h"
#include "filter/modular_bloom.h"

namespace sift {
namespace {

constexpr double kLn2 = 0.69314718055994530942;

// Blocked layout, per whole bits/key b = 1..64: the number of probes with the
// lowest false-positive rate, and that rate.
//
// How k was measured (b = 1..32): `filter_bench --measure_blocked_k` (Release
// build). For each b it builds one filter of 200,000 keys (8-byte keys, seed
// 7) straight from BlockedAdd for every k within two of the theoretical
// optimum, and counts false positives over max(4e6, min(2e8, 20,000 / fpr))
// absent keys, i.e. about 20,000 per point (+-0.7%). The k with the fewest
// false positives is kept. It agreed with the theory's minimizer except at
// b = 12, 14, 19 and 29, where the two k's are within 1% of each other in
// both measurement and theory; the measured winner is kept.
// For b = 33..64 a measurement would need billions of probes per point, so k
// is the minimizer of BlockedFpr(), which matched every measured rate above
// to within the noise.
// The rate column is BlockedFpr(1,024,000 * b bits, 1,024,000 keys, k); it
// sizes MakeForFpr for the blocked layout.
struct BlockedPoint {
  uint8_t num_probes;
  double fpr;
};
constexpr std::array<BlockedPoint, 65> kBlockedTable = {{
    {1, 1.0},  // b = 0: unused
    {1, 0.632},     {1, 0.393},     {2, 0.237},     {3, 0.148},
    {3, 0.0928},    {4, 0.0575},    {5, 0.0364},    {5, 0.0231},
    {6, 0.0147},    {6, 0.00955},   {7, 0.00617},   {8, 0.00408},
    {8, 0.00268},   {9, 0.0018},    {9, 0.0012},    {9, 0.000822},
    {10, 0.000563}, {10, 0.000389}, {10, 0.000273}, {11, 0.000191},
    {11, 0.000136}, {12, 9.72e-05}, {12, 6.98e-05}, {12, 5.08e-05},
    {13, 3.72e-05}, {13, 2.73e-05}, {13, 2.03e-05}, {13, 1.52e-05},
    {13, 1.15e-05}, {14, 8.6e-06},  {14, 6.54e-06}, {14, 5.02e-06},
    {15, 3.85e-06}, {15, 2.97e-06}, {15, 2.31e-06}, {15, 1.81e-06},
    {16, 1.42e-06}, {16, 1.12e-06}, {16, 8.85e-07}, {16, 7.05e-07},
    {16, 5.64e-07}, {17, 4.54e-07}, {17, 3.64e-07}, {17, 2.94e-07},
    {17, 2.39e-07}, {17, 1.95e-07}, {17, 1.59e-07}, {18, 1.31e-07},
    {18, 1.08e-07}, {18, 8.87e-08}, {18, 7.35e-08}, {18, 6.1e-08},
    {18, 5.09e-08}, {18, 4.26e-08}, {19, 3.57e-08}, {19, 3e-08},
    {19, 2.52e-08}, {19, 2.13e-08}, {19, 1.8e-08},  {19, 1.53e-08},
    {19, 1.3e-08},  {19, 1.11e-08}, {19, 9.51e-09}, {20, 8.14e-09},
}};
constexpr int kBlockedTableMax = 64;

// log C(n, r) for 0 <= r <= n.
double LogChoose(int n, int r) {
  return std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0);
}

}  // namespace

uint32_t StandardNumProbes(double bits_per_key) {
  const double k = std::round(bits_per_key * kLn2);
  if (!(k >= 1)) return 1;  // also catches NaN
  if (k >= kMaxFilterProbes) return kMaxFilterProbes;
  return static_cast<uint32_t>(k);
}

uint32_t BlockedNumProbes(double bits_per_key) {
  const double b = std::round(bits_per_key);
  if (!(b >= 1)) return kBlockedTable[1].num_probes;
  if (b >= kBlockedTableMax) return kBlockedTable[kBlockedTableMax].num_probes;
  return kBlockedTable[static_cast<int>(b)].num_probes;
}

uint32_t NumProbesFor(FilterKind kind, double bits_per_key) {
  if (kind == FilterKind::kBinaryFuse) return kFuseArity;
  return kind == FilterKind::kBlockedBloom ? BlockedNumProbes(bits_per_key)
                                           : StandardNumProbes(bits_per_key);
}

double OptimalNumProbes(double bits_per_key) { return bits_per_key * kLn2; }

double BitsPerKeyForFpr(FilterKind kind, double p) {
  if (kind == FilterKind::kBinaryFuse) return FuseBitsPerKeyForFpr(p);
  const double standard = -std::log(p) / (kLn2 * kLn2);
  if (kind != FilterKind::kBlockedBloom) return standard;
  // Walk the table to the first whole b that meets p, then interpolate
  // log(fpr) linearly between b - 1 and b.
  for (int b = 1; b <= kBlockedTableMax; ++b) {
    if (kBlockedTable[b].fpr <= p) {
      if (b == 1) return std::min(standard, 1.0);
      const double hi = std::log(kBlockedTable[b - 1].fpr);
      const double lo = std::log(kBlockedTable[b].fpr);
      const double t = (hi - std::log(p)) / (hi - lo);
      return (b - 1) + t;
    }
  }
  // Beyond the table: keep the ratio the table ends with.
  const double standard_at_max =
      -std::log(kBlockedTable[kBlockedTableMax].fpr) / (kLn2 * kLn2);
  return standard * (kBlockedTableMax / standard_at_max);
}

double StandardFpr(uint64_t num_bits, uint64_t num_keys, uint32_t num_probes) {
  if (num_keys == 0) return 0.0;
  if (num_bits == 0) return 1.0;
  const double k = num_probes;
  const double fill = -std::expm1(-k * static_cast<double>(num_keys) /
                                  static_cast<double>(num_bits));
  return std::pow(fill, k);
}

double BlockedFpr(uint64_t num_bits, uint64_t num_keys, uint32_t num_probes) {
  if (num_keys == 0) return 0.0;
  constexpr int kBits = static_cast<int>(kFilterLineBits);
  const uint64_t num_lines = num_bits / kFilterLineBits;
  if (num_lines == 0) return 1.0;
  const int k = static_cast<int>(std::clamp<uint32_t>(num_probes, 1, kBits));

  // step[s][j]: probability that a key adds j new bits to a line with s set.
  const double log_all = LogChoose(kBits, k);
  std::vector<double> step((kBits + 1) * (k + 1), 0.0);
  std::vector<double> pass(kBits + 1, 0.0);  // C(s, k) / C(512, k)
  for (int s = 0; s <= kBits; ++s) {
    for (int j = 0; j <= k; ++j) {
      if (j > kBits - s || k - j > s) continue;
      step[s * (k + 1) + j] =
          std::exp(LogChoose(kBits - s, j) + LogChoose(s, k - j) - log_all);
    }
    if (s >= k) pass[s] = std::exp(LogChoose(s, k) - log_all);
  }

  // Load of the queried line: Binomial(n, 1/lines).
  const double n = static_cast<double>(num_keys);
  const double p = 1.0 / static_cast<double>(num_lines);
  const double mean = n * p;
  const double sd = std::sqrt(n * p * (1 - p));
  const uint64_t max_load =
      static_cast<uint64_t>(std::min(n, std::ceil(mean + 20 * sd + 50)));
  auto load_pmf = [&](uint64_t l) {
    if (num_lines == 1) return l == num_keys ? 1.0 : 0.0;
    const double x = static_cast<double>(l);
    return std::exp(std::lgamma(n + 1) - std::lgamma(x + 1) -
                    std::lgamma(n - x + 1) + x * std::log(p) +
                    (n - x) * std::log1p(-p));
  };

  std::vector<double> dist(kBits + 1, 0.0), next(kBits + 1);
  dist[0] = 1.0;  // an empty line
  double fpr = 0.0;
  double mass = 0.0;  // load probability accounted for so far
  for (uint64_t l = 0; l <= max_load; ++l) {
    const double w = load_pmf(l);
    double pass_given_load = 0.0;
    for (int s = k; s <= kBits; ++s) pass_given_load += dist[s] * pass[s];
    fpr += w * pass_given_load;
    mass += w;
    if (dist[kBits] > 1 - 1e-12) {
      // Saturated: every heavier load passes every query.
      fpr += std::max(0.0, 1.0 - mass);
      break;
    }
    std::fill(next.begin(), next.end(), 0.0);
    for (int s = 0; s <= kBits; ++s) {
      if (dist[s] == 0) continue;
      const double* row = &step[s * (k + 1)];
      for (int j = 0; j <= k && s + j <= kBits; ++j) {
        next[s + j] += dist[s] * row[j];
      }
    }
    dist.swap(next);
  }
  return std::min(fpr, 1.0);
}

double TheoreticalFpr(FilterKind kind, uint64_t num_bits, uint64_t num_keys,
                      uint32_t num_probes) {
  if (kind == FilterKind::kBinaryFuse) {
    // num_probes is the arity (3 for format version 1, 4 for version 2).
    const uint32_t arity =
        num_probes == kFuseArityV1 ? kFuseArityV1 : kFuseArity;
    const uint64_t slots = FuseLayoutFor(num_keys, 1, arity).num_slots();
    if (slots == 0) return 0.0;
    return FuseFpr(static_cast<uint32_t>(
        std::clamp<uint64_t>(num_bits / slots, 1, kMaxFingerprintBits)));
  }
  return kind == FilterKind::kBlockedBloom
             ? BlockedFpr(num_bits, num_keys, num_probes)
             : StandardFpr(num_bits, num_keys, num_probes);
}

double TheoreticalFpr(const FilterInfo& info) {
  if (!info.known) return 1.0;
  if (info.kind == kBinaryFuseTag) {
    return info.num_keys == 0 ? 0.0 : FuseFpr(info.fingerprint_bits);
  }
  if (info.kind == kModularBloomTag) {
    // Writers make every unit alike (filter/modular_bloom.cc), so a unit is
    // the average one; a query consults the resident units only.
    if (info.num_units == 0 || info.num_keys == 0) return 0.0;
    const double unit =
        BlockedFpr(info.num_bits / info.num_units, info.num_keys,
                   info.num_probes / info.num_units);
    return std::pow(unit, static_cast<double>(info.resident_units));
  }
  return TheoreticalFpr(static_cast<FilterKind>(info.kind), info.num_bits,
                        info.num_keys, info.num_probes);
}

double FprFromFill(double fill_ratio, uint32_t num_probes) {
  return std::pow(fill_ratio, static_cast<double>(num_probes));
}

}  // namespace sift
