#ifndef SIFT_DB_FILTER_ALLOCATION_H_
#define SIFT_DB_FILTER_ALLOCATION_H_

// Filter sizes per table under FilterAllocation::kOptimal (doc/filters.md).
//
// An absent-key Get probes at most one table per sorted run of the tree:
// every level-0 table is a run of its own, every non-empty level >= 1 is one
// run, and the Get probes run i only when its key lies inside one of the
// run's tables, which a share q_i of absent Gets do (db/probe_shares.h).
// With a filter whose false-positive rate falls as p(b) = e^(-c b) in its
// bits per key b, the expected false positives per absent Get,
// sum_i q_i p_i, are minimal at fixed memory sum_i n_i b_i = N * avg when
// every p_i is proportional to n_i / q_i (Monkey, Dayan et al., SIGMOD 2017,
// with each run weighted by how often it is probed):
//   b_i = avg + (H - ln(n_i / q_i)) / c,   H = sum_j n_j ln(n_j / q_j) / N.
// Bits per key are kept within [0, kMaxAllocatedBitsPerKey]: a run that would
// fall outside is held at the bound and the others share what remains of
// the budget (the Karush-Kuhn-Tucker solution of the bounded problem).

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "db/dbformat.h"
#include "sift/options.h"

namespace sift {

class Compaction;
class Iterator;
class Version;

// The bounds of Options::filter_bits_per_key.
inline constexpr double kMaxAllocatedBitsPerKey = 100.0;

// The false-positive rate of `kind` at `bits_per_key` on its sizing curve
// (the inverse of BitsPerKeyForFpr): e^(-(ln 2)^2 b) for the standard layout,
// the measured curve of the blocked one, 2^(-b / kFuseLargeSizeFactor) for
// binary fuse. What the allocation's expected false positives are judged by.
double FilterFprAt(FilterKind kind, double bits_per_key);

// c in p(b) ~ e^(-c b) for `kind` near `bits_per_key`: (ln 2)^2 for the
// standard layout; for the blocked layout the secant slope of ln p over
// [bits_per_key - 2, bits_per_key + 2] on its sizing curve
// (BitsPerKeyForFpr), about 0.43 around 10 bits/key: a key's probes share
// one cache line, so each added bit buys a little less.
double FilterFprDecay(FilterKind kind, double bits_per_key);

// Bits per key for each run of `run_sizes` (entries, or any unit
// proportional to them) that minimize sum_i e^(-decay b_i) subject to
// sum_i n_i b_i = avg_bits_per_key * sum_i n_i and 0 <= b_i <=
// kMaxAllocatedBitsPerKey. Equal sizes give every run avg_bits_per_key.
// REQUIRES: every size > 0; 0 <= avg_bits_per_key <= kMaxAllocatedBitsPerKey;
// decay > 0.
std::vector<double> AllocateFilterBits(absl::Span<const double> run_sizes,
                                       double avg_bits_per_key, double decay);

// The same, minimizing sum_i q_i e^(-decay b_i) with q_i = probe_shares[i],
// the share of absent Gets that probe run i. A run no Get probes (q_i <= 0)
// gets no bits: its filter would never be asked.
// REQUIRES: probe_shares.size() == run_sizes.size(); q_i <= 1; and the
// requirements above.
std::vector<double> AllocateFilterBits(absl::Span<const double> run_sizes,
                                       absl::Span<const double> probe_shares,
                                       double avg_bits_per_key, double decay);

// The sorted runs of a tree by level, sized in file bytes (tables do not
// record their entry count in the MANIFEST; at one key and value size,
// bytes are proportional to entries).
struct RunShape {
  std::vector<double> level0;                       // one run per level-0 table
  std::array<double, config::kNumLevels> levels{};  // [0] unused
  // The share of absent Gets that probe each run (db/probe_shares.h), for
  // the runs above; empty level0_probes and the defaults mean every Get
  // probes every run (a shape known by its sizes alone).
  std::vector<double> level0_probes;  // empty, or parallel to level0
  std::array<double, config::kNumLevels> level_probes = AllProbed();
  // The share that would probe a new level-0 table (NewTableSpan).
  double added_level0_probes = 1;
  // The filters as built of the tables below level 0 whose filters are
  // known (FileMetaData::filter_keys > 0): their bits and keys, and those
  // tables' file bytes.
  struct Built {
    double filter_bits = 0;
    double filter_keys = 0;
    double table_bytes = 0;
  } built;

  static constexpr std::array<double, config::kNumLevels> AllProbed() {
    std::array<double, config::kNumLevels> ones{};
    for (double& q : ones) q = 1;
    return ones;
  }
};

// A table about to be written: its level, user-key range and size.
struct NewTableSpan {
  int level = 0;
  std::string smallest;
  std::string largest;
  double bytes = 0;
};

// The runs of `version` without the tables numbered in `excluded`, their
// probe shares those of the tree with `added` (nullable) in it: its range
// joins its level's coverage (or is a level-0 run of its own, whose share
// is added_level0_probes) and its bytes join the keys that probe shares are
// measured by. Sizes leave `added` out: FilterBitsForNewTable counts it.
RunShape ShapeOf(const Version& version,
                 const std::set<uint64_t>& excluded = {},
                 const NewTableSpan* added = nullptr);

// The allocation is exact for the shape at the moment a table is written,
// but tables outlive that shape: a deep table written while the tree was
// smaller keeps the smaller filter it got then, and the runs above it are
// larger at write time than they are on average. Left alone, the levels
// below 0 end up spending less than the budget (4-5% less at 10M keys). So a
// new table below level 0 also gets kBudgetCorrectionGain times the
// difference between the budget and the bits per key that those levels'
// filters hold as built, at most kMaxBudgetCorrection times the budget
// either way (a proportional correction leaves about 1 / (1 + gain) of the
// shortfall standing; doc/filters.md has the measurements). Level-0 tables stay
// out of it both ways: they are transient, and their large filters would swing
// the correction with every flush and level-0 compaction. The correction waits
// until the filters of at least kBudgetCorrectionCoverage of those levels'
// bytes are known (after a reopen: until this process has rewritten that much).
inline constexpr double kBudgetCorrectionCoverage = 0.9;
inline constexpr double kBudgetCorrectionGain = 3.0;
inline constexpr double kMaxBudgetCorrection = 0.25;

// The bits per key a new table below level 0 adds to its allocation in
// `shape` (see above); 0 while too little of the tree's filters is known.
double FilterBudgetCorrection(const RunShape& shape, double avg_bits_per_key);

// Bits per key for a table of `table_size` bytes about to be written to
// `level` of a tree shaped `shape` (which does not hold it yet): the
// allocation of `shape` with the new table counted, as a run of its own at
// level 0 (probed by shape.added_level0_probes) or as part of its level
// otherwise. Under kUniform (or without
// filters) options.filter_bits_per_key. Ingestion uses it as is: the budget
// correction is for tables written anyway, and must not make a whole file be
// rewritten for a fraction of a bit per key.
double FilterBitsForNewTable(const Options& options, const RunShape& shape,
                             int level, double table_size);

// What flushes and compactions write: FilterBitsForNewTable plus, below
// level 0 under kOptimal, FilterBudgetCorrection.
double BudgetedFilterBitsForNewTable(const Options& options,
                                     const RunShape& shape, int level,
                                     double table_size);

// Bits per key for the table a flush writes from the memtable entries of
// *mem_iter to `level` of `current`. The table's size is estimated as the
// mean of the level-0 tables (flushes of equal memtables make tables of
// about equal size) or, with level 0 empty, as the key and value bytes of
// the entries; its key range is the entries' (read through *mem_iter, whose
// position is left anywhere).
double FilterBitsForFlush(const Options& options, const Version& current,
                          int level, Iterator* mem_iter);

// Bits per key for the outputs of `compaction`: the shape of its input
// version after the compaction, its inputs gone and their bytes and key
// range added to the output level.
double FilterBitsForCompaction(const Options& options,
                               const Compaction& compaction);

}  // namespace sift

#endif  // SIFT_DB_FILTER_ALLOCATION_H_
