#include "db/filter_allocation.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>

#include "db/compaction.h"
#include "db/probe_shares.h"
#include "db/version.h"
#include "filter/bloom_math.h"
#include "filter/fuse_math.h"
#include "sift/iterator.h"

namespace sift {
namespace {

constexpr double kLn2 = 0.69314718055994530942;

// The false-positive rate of the blocked layout at `bits_per_key`: the
// inverse of BitsPerKeyForFpr (decreasing in p), found by bisection on -ln p.
double BlockedFprAt(double bits_per_key) {
  double lo = 1e-9;  // -ln p: p just below 1
  double hi = 60.0;  // p = e^-60, far beyond any bits/key in range
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    if (BitsPerKeyForFpr(FilterKind::kBlockedBloom, std::exp(-mid)) <
        bits_per_key) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return std::exp(-(lo + hi) / 2);
}

}  // namespace

double FilterFprAt(FilterKind kind, double bits_per_key) {
  switch (kind) {
    case FilterKind::kBlockedBloom:
      return BlockedFprAt(bits_per_key);
    case FilterKind::kBinaryFuse:
      return std::exp2(-bits_per_key / kFuseLargeSizeFactor);
    case FilterKind::kStandardBloom:
      break;
  }
  return std::exp(-kLn2 * kLn2 * bits_per_key);
}

double FilterFprDecay(FilterKind kind, double bits_per_key) {
  switch (kind) {
    case FilterKind::kStandardBloom:
      // p = (1/2)^(b ln 2) at the optimal number of probes.
      return kLn2 * kLn2;
    case FilterKind::kBlockedBloom: {
      const double lo = std::max(1.0, bits_per_key - 2);
      const double hi = lo + 4;
      return std::log(BlockedFprAt(lo) / BlockedFprAt(hi)) / (hi - lo);
    }
    case FilterKind::kBinaryFuse:
      // p = 2^-w with w = b / kFuseLargeSizeFactor bits per fingerprint.
      return kLn2 / kFuseLargeSizeFactor;
  }
  return kLn2 * kLn2;  // an out-of-range enum value: the standard law
}

std::vector<double> AllocateFilterBits(absl::Span<const double> run_sizes,
                                       double avg_bits_per_key, double decay) {
  return AllocateFilterBits(run_sizes,
                            std::vector<double>(run_sizes.size(), 1.0),
                            avg_bits_per_key, decay);
}

std::vector<double> AllocateFilterBits(absl::Span<const double> run_sizes,
                                       absl::Span<const double> probe_shares,
                                       double avg_bits_per_key, double decay) {
  assert(decay > 0);
  assert(probe_shares.size() == run_sizes.size());
  const size_t n = run_sizes.size();
  if (n == 0 || !(avg_bits_per_key > 0)) return std::vector<double>(n, 0.0);
  const double avg = std::min(avg_bits_per_key, kMaxAllocatedBitsPerKey);
  const double total = std::accumulate(run_sizes.begin(), run_sizes.end(), 0.0);
  const double budget = avg * total;
  // Runs that some Get probes; the others get nothing.
  std::vector<size_t> probed;
  for (size_t i = 0; i < n; ++i) {
    if (probe_shares[i] > 0) probed.push_back(i);
  }
  if (probed.empty()) return std::vector<double>(n, 0.0);
  if (probed.size() < n) {
    // The budget is the whole tree's, spent on the probed runs alone.
    std::vector<double> sizes, shares;
    for (size_t i : probed) {
      sizes.push_back(run_sizes[i]);
      shares.push_back(probe_shares[i]);
    }
    const double probed_total =
        std::accumulate(sizes.begin(), sizes.end(), 0.0);
    const std::vector<double> sub = AllocateFilterBits(
        sizes, shares, std::min(budget / probed_total, kMaxAllocatedBitsPerKey),
        decay);
    std::vector<double> bits(n, 0.0);
    for (size_t j = 0; j < probed.size(); ++j) bits[probed[j]] = sub[j];
    return bits;
  }
  // ln(n_i / q_i): the allocation gives every run the same p_i q_i / n_i.
  std::vector<double> log_n(n);
  for (size_t i = 0; i < n; ++i) {
    assert(run_sizes[i] > 0);
    assert(probe_shares[i] <= 1);
    log_n[i] = std::log(run_sizes[i] / probe_shares[i]);
  }

  // Every run gets clamp((t - ln(n_i / q_i)) / decay) bits per key for the
  // one threshold t that spends the budget; the bits spent grow with t.
  auto bits_at = [&](double t, size_t i) {
    return std::clamp((t - log_n[i]) / decay, 0.0, kMaxAllocatedBitsPerKey);
  };
  auto spent = [&](double t) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += run_sizes[i] * bits_at(t, i);
    return sum;
  };
  const auto [min_log, max_log] =
      std::minmax_element(log_n.begin(), log_n.end());
  // Runs alike (a tree of one run, say) get the average exactly.
  if (*min_log == *max_log) return std::vector<double>(n, avg);
  double lo = *min_log;                                    // spends nothing
  double hi = *max_log + kMaxAllocatedBitsPerKey * decay;  // spends the most
  for (int i = 0; i < 200 && hi - lo > 1e-12 * (1 + std::abs(hi)); ++i) {
    const double mid = (lo + hi) / 2;
    (spent(mid) < budget ? lo : hi) = mid;
  }

  // With the clamped runs known, solve the unclamped ones exactly:
  //   sum_active n_i (t - ln(n_i / q_i)) / decay
  //       = budget - sum_at_max n_i * max.
  const double t0 = (lo + hi) / 2;
  double active_size = 0, active_log_mass = 0, fixed_spent = 0;
  std::vector<bool> active(n);
  for (size_t i = 0; i < n; ++i) {
    const double b = (t0 - log_n[i]) / decay;
    if (b >= kMaxAllocatedBitsPerKey) {
      fixed_spent += run_sizes[i] * kMaxAllocatedBitsPerKey;
    } else if (b > 0) {
      active[i] = true;
      active_size += run_sizes[i];
      active_log_mass += run_sizes[i] * log_n[i];
    }
  }
  const double t =
      active_size > 0
          ? (decay * (budget - fixed_spent) + active_log_mass) / active_size
          : t0;
  std::vector<double> bits(n);
  for (size_t i = 0; i < n; ++i) {
    bits[i] = active[i] ? std::clamp((t - log_n[i]) / decay, 0.0,
                                     kMaxAllocatedBitsPerKey)
                        : bits_at(t0, i);
  }
  return bits;
}

RunShape ShapeOf(const Version& version, const std::set<uint64_t>& excluded,
                 const NewTableSpan* added) {
  RunShape shape;
  // The tree's tables after the change: what probe shares are measured by.
  std::vector<std::vector<KeySpan>> spans(config::kNumLevels);
  for (int level = 0; level < config::kNumLevels; ++level) {
    for (const auto& f : version.files(level)) {
      if (excluded.count(f->number) != 0) continue;
      spans[level].push_back(SpanOf(*f));
      const double size = static_cast<double>(f->file_size);
      if (level == 0) {
        shape.level0.push_back(size);
        continue;
      }
      shape.levels[level] += size;
      if (f->filter_keys > 0) {
        shape.built.filter_bits += 8.0 * static_cast<double>(f->filter_bytes);
        shape.built.filter_keys += static_cast<double>(f->filter_keys);
        shape.built.table_bytes += size;
      }
    }
  }
  if (added != nullptr) {
    assert(added->level >= 0 && added->level < config::kNumLevels);
    spans[added->level].push_back(
        KeySpan{added->smallest, added->largest, std::max(added->bytes, 1.0)});
  }
  const std::vector<std::vector<double>> shares = TreeProbeShares(spans);
  shape.level0_probes.assign(shares[0].begin(),
                             shares[0].begin() + shape.level0.size());
  if (added != nullptr && added->level == 0) {
    shape.added_level0_probes = shares[0].back();
  }
  for (int level = 1; level < config::kNumLevels; ++level) {
    if (!shares[level].empty()) shape.level_probes[level] = shares[level][0];
  }
  return shape;
}

double FilterBudgetCorrection(const RunShape& shape, double avg_bits_per_key) {
  const double deep_bytes =
      std::accumulate(shape.levels.begin(), shape.levels.end(), 0.0);
  if (shape.built.filter_keys <= 0 ||
      shape.built.table_bytes < kBudgetCorrectionCoverage * deep_bytes) {
    return 0;
  }
  const double built = shape.built.filter_bits / shape.built.filter_keys;
  const double limit = kMaxBudgetCorrection * avg_bits_per_key;
  return std::clamp(kBudgetCorrectionGain * (avg_bits_per_key - built), -limit,
                    limit);
}

double FilterBitsForNewTable(const Options& options, const RunShape& shape,
                             int level, double table_size) {
  assert(level >= 0 && level < config::kNumLevels);
  const double avg = options.filter_bits_per_key;
  if (options.filter_allocation != FilterAllocation::kOptimal || avg <= 0) {
    return avg;
  }
  std::vector<double> runs, probes;
  for (size_t i = 0; i < shape.level0.size(); ++i) {
    if (shape.level0[i] <= 0) continue;
    runs.push_back(shape.level0[i]);
    probes.push_back(i < shape.level0_probes.size() ? shape.level0_probes[i]
                                                    : 1.0);
  }
  // An empty table is still a run to place; it weighs a byte.
  const double new_size = std::max(table_size, 1.0);
  size_t new_run = runs.size();
  if (level == 0) {
    runs.push_back(new_size);
    probes.push_back(shape.added_level0_probes);
  }
  for (int l = 1; l < config::kNumLevels; ++l) {
    const double size = shape.levels[l] + (l == level ? new_size : 0.0);
    if (size <= 0) continue;
    if (l == level) new_run = runs.size();
    runs.push_back(size);
    probes.push_back(shape.level_probes[l]);
  }
  const std::vector<double> bits = AllocateFilterBits(
      runs, probes, avg, FilterFprDecay(options.filter_kind, avg));
  // The new table is one of the runs whenever `level` is a level; never
  // index past them if it is not.
  return new_run < bits.size() ? bits[new_run] : avg;
}

double BudgetedFilterBitsForNewTable(const Options& options,
                                     const RunShape& shape, int level,
                                     double table_size) {
  const double bits = FilterBitsForNewTable(options, shape, level, table_size);
  if (options.filter_allocation != FilterAllocation::kOptimal ||
      options.filter_bits_per_key <= 0 || level == 0) {
    return bits;
  }
  return std::clamp(
      bits + FilterBudgetCorrection(shape, options.filter_bits_per_key), 0.0,
      kMaxAllocatedBitsPerKey);
}

double FilterBitsForFlush(const Options& options, const Version& current,
                          int level, Iterator* mem_iter) {
  if (options.filter_allocation != FilterAllocation::kOptimal ||
      options.filter_bits_per_key <= 0) {
    return options.filter_bits_per_key;
  }
  NewTableSpan table;
  table.level = level;
  mem_iter->SeekToLast();
  if (mem_iter->Valid()) table.largest = ExtractUserKey(mem_iter->key());
  mem_iter->SeekToFirst();
  if (mem_iter->Valid()) table.smallest = ExtractUserKey(mem_iter->key());
  if (!current.files(0).empty()) {
    for (const auto& f : current.files(0)) {
      table.bytes += static_cast<double>(f->file_size);
    }
    table.bytes /= static_cast<double>(current.files(0).size());
  } else {
    for (; mem_iter->Valid(); mem_iter->Next()) {
      table.bytes += static_cast<double>(mem_iter->key().size() +
                                         mem_iter->value().size());
    }
  }
  const RunShape shape = ShapeOf(current, {}, &table);
  return BudgetedFilterBitsForNewTable(options, shape, level, table.bytes);
}

double FilterBitsForCompaction(const Options& options,
                               const Compaction& compaction) {
  if (options.filter_allocation != FilterAllocation::kOptimal ||
      options.filter_bits_per_key <= 0) {
    return options.filter_bits_per_key;
  }
  // The outputs hold the inputs' keys: they cover the inputs' range.
  std::set<uint64_t> inputs;
  NewTableSpan outputs;
  // Not always level() + 1: a manual compaction's rewrite in place of the
  // bottom of its range writes to its own level, which may be the last.
  outputs.level = compaction.output_level();
  outputs.bytes = static_cast<double>(compaction.TotalInputBytes());
  for (int which = 0; which < 2; ++which) {
    for (const auto& f : compaction.inputs(which)) {
      const std::string_view smallest = f->smallest.user_key();
      const std::string_view largest = f->largest.user_key();
      if (inputs.empty() || smallest < outputs.smallest) {
        outputs.smallest = smallest;
      }
      if (inputs.empty() || largest > outputs.largest) {
        outputs.largest = largest;
      }
      inputs.insert(f->number);
    }
  }
  const RunShape shape = ShapeOf(*compaction.input_version(), inputs, &outputs);
  return BudgetedFilterBitsForNewTable(options, shape, outputs.level,
                                       outputs.bytes);
}

}  // namespace sift
