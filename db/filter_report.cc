#include "db/filter_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "filter/bloom_math.h"
#include "filter/modular_bloom.h"

namespace sift {
namespace {

// The blocked layout's theory costs about a millisecond per evaluation and
// depends on the filter through its bits per key and probes (the load of a
// line, for any but tiny filters). Tables of one level mostly share their
// bits per key, so a report evaluates it once per (probes, bits/key to
// 1/64 bit) over a filter of 2^16 keys. Filters of fewer than
// kSmallFilterKeys keys, where the line loads differ, get their own.
constexpr uint64_t kSmallFilterKeys = 4096;

class BlockedFprMemo {
 public:
  double Get(const FilterInfo& info) {
    constexpr uint64_t kKeys = uint64_t{1} << 16;
    if (info.num_keys < kSmallFilterKeys) {
      return BlockedFpr(info.num_bits, info.num_keys, info.num_probes);
    }
    const auto step =
        static_cast<int64_t>(std::llround(info.bits_per_key() * 64));
    const auto key = std::make_pair(info.num_probes, step);
    auto it = memo_.find(key);
    if (it == memo_.end()) {
      const uint64_t lines = std::max<uint64_t>(
          1, static_cast<uint64_t>(std::llround(static_cast<double>(step) / 64 *
                                                kKeys / kFilterLineBits)));
      it = memo_
               .emplace(key, BlockedFpr(lines * kFilterLineBits, kKeys,
                                        info.num_probes))
               .first;
    }
    return it->second;
  }

 private:
  std::map<std::pair<uint32_t, int64_t>, double> memo_;
};

double FprOf(const FilterInfo& info, BlockedFprMemo* blocked) {
  if (!info.known) return 1.0;
  switch (static_cast<FilterKind>(info.kind)) {
    case FilterKind::kStandardBloom:
      return StandardFpr(info.num_bits, info.num_keys, info.num_probes);
    case FilterKind::kBlockedBloom:
      return blocked->Get(info);
    case FilterKind::kBinaryFuse:
      return TheoreticalFpr(info);  // 2^-w, from the header
  }
  if (info.kind == kModularBloomTag) {
    // Alike units (filter/modular_bloom.h); only the resident ones answer.
    if (info.num_units == 0 || info.num_keys == 0) return 0.0;
    FilterInfo unit = info;
    unit.num_bits = info.num_bits / info.num_units;
    unit.num_probes = info.num_probes / info.num_units;
    return std::pow(blocked->Get(unit),
                    static_cast<double>(info.resident_units));
  }
  return 1.0;  // a kind without a theory here: counted as answering "maybe"
}

}  // namespace

double TheoreticalFprOf(const FilterInfo& info) {
  BlockedFprMemo memo;
  return FprOf(info, &memo);
}

FilterReport SummarizeFilters(absl::Span<const TableFilterFacts> tables) {
  FilterReport report;
  BlockedFprMemo memo;
  std::array<double, config::kNumLevels> weight{};  // entries, levels >= 1
  for (const TableFilterFacts& t : tables) {
    LevelFilterReport& level = report.levels[t.level];
    const double fpr = t.has_filter ? FprOf(t.filter, &memo) : 1.0;
    ++level.tables;
    if (t.has_filter) {
      // In memory: a modular filter's resident units only.
      level.filter_bits +=
          t.filter.kind == kModularBloomTag
              ? t.filter.num_bits / t.filter.num_units * t.filter.resident_units
              : t.filter.num_bits;
      level.filter_keys += t.filter.num_keys;
    }
    if (t.level == 0) {
      level.fpr += fpr;
      level.probe_share += t.probe_share;
      level.expected_false_positives += t.probe_share * fpr;
    } else {
      // An empty table still counts, with a token weight.
      const double w = static_cast<double>(std::max<uint64_t>(t.entries, 1));
      level.fpr += w * fpr;
      level.probe_share += w * t.probe_share;
      weight[t.level] += w;
    }
  }
  for (int l = 0; l < config::kNumLevels; ++l) {
    LevelFilterReport& level = report.levels[l];
    if (level.tables == 0) continue;
    if (l == 0) {
      level.fpr /= level.tables;
      level.probe_share /= level.tables;
    } else {
      level.fpr /= weight[l];
      level.probe_share /= weight[l];
      level.expected_false_positives = level.probe_share * level.fpr;
    }
    report.expected_false_positives += level.expected_false_positives;
  }
  return report;
}

std::string FilterReportText(const FilterReport& report) {
  std::string out =
      "Filters  Tables  Bits/key  FPR(theory)  Probed  False pos/absent Get\n"
      "-------  ------  --------  -----------  ------  --------------------\n";
  for (int l = 0; l < config::kNumLevels; ++l) {
    const LevelFilterReport& level = report.levels[l];
    if (level.tables == 0) continue;
    absl::StrAppend(
        &out, absl::StrFormat("%7s  %6d  %8.2f  %10.4f%%  %5.1f%%  %20.5f\n",
                              absl::StrCat("L", l), level.tables,
                              level.bits_per_key(), 100.0 * level.fpr,
                              100.0 * level.probe_share,
                              level.expected_false_positives));
  }
  absl::StrAppend(
      &out,
      absl::StrFormat("Expected false positives per absent Get: %.5f (each "
                      "run's rate times the share of Gets that probe it)\n",
                      report.expected_false_positives));
  return out;
}

}  // namespace sift
