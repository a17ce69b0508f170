#ifndef SIFT_DB_FILTER_REPORT_H_
#define SIFT_DB_FILTER_REPORT_H_

// Per-level filter figures from the tables' own filters: bits per key as
// built, the theoretical false-positive rate, and the expected number of
// false positives (block reads) per absent-key Get. Shared by sift.stats and
// kvtool info.

#include <array>
#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "db/dbformat.h"
#include "filter/filter.h"

namespace sift {

// One table as the report sees it.
struct TableFilterFacts {
  int level = 0;
  uint64_t entries = 0;     // weighs the table within its level
  bool has_filter = false;  // false: every probe reads a block
  FilterInfo filter;        // when has_filter
  // The share of absent-key Gets that probe the table's run
  // (db/probe_shares.h); 1 = every Get, when the key ranges are not known.
  double probe_share = 1;
};

struct LevelFilterReport {
  int tables = 0;
  uint64_t filter_bits = 0;  // m summed over the tables' filters
  uint64_t filter_keys = 0;  // n summed
  // Theoretical false-positive rate of one probe: for level 0 the mean over
  // its tables, for a deeper level the mean weighted by entries (an absent
  // key falls in a table's range in proportion to its keys).
  double fpr = 0;
  // The share of absent-key Gets that probe the level (level 0: the mean
  // over its tables).
  double probe_share = 0;
  // What this level adds to the false positives of one absent-key Get: each
  // level-0 table's rate times its probe share, a deeper level's rate times
  // the level's.
  double expected_false_positives = 0;

  double bits_per_key() const {
    return filter_keys == 0 ? 0.0
                            : static_cast<double>(filter_bits) / filter_keys;
  }
};

struct FilterReport {
  std::array<LevelFilterReport, config::kNumLevels> levels;
  // Sum over the levels: expected block reads of an absent-key Get drawn
  // like the tree's keys.
  double expected_false_positives = 0;
};

// The theoretical false-positive rate of a filter described by `info`
// (1 for an unknown kind or version: it answers "maybe" to every key).
double TheoreticalFprOf(const FilterInfo& info);

FilterReport SummarizeFilters(absl::Span<const TableFilterFacts> tables);

// The report as a small table, one line per level with tables, then the
// expected false positives per absent Get.
std::string FilterReportText(const FilterReport& report);

}  // namespace sift

#endif  // SIFT_DB_FILTER_REPORT_H_
