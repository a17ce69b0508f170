#ifndef SIFT_DB_PROBE_SHARES_H_
#define SIFT_DB_PROBE_SHARES_H_

// How often an absent-key Get probes a sorted run: the q_i of the filter
// allocation (db/filter_allocation.h, doc/filters.md).
//
// A Get reaches a run's filter only when its key lies inside the key range
// of one of the run's tables; elsewhere the key-range check alone rules the
// run out. So q_i is the share of the keys Gets ask for that fall inside
// run i's tables. sift has no sample of the keys Gets ask for, so it takes
// the keys the tree holds as that sample (absent keys drawn like present
// ones): q_i is the share of the tree's bytes whose keys lie inside run i's
// tables. Bytes are counted a table at a time: a table whose first and last
// keys both lie inside run i's tables counts whole (a table of another level
// that spans the boundary between two neighbouring tables of run i is
// covered but for a sliver), one that does not overlap them not at all, and
// one that overlaps them with an end outside counts half (a table straddling
// the edge of the covered range: over many tables the edges fall anywhere,
// which makes half the expected share; a wide table holding a narrow run is
// overcounted, but such tables, level 0's, hold few of the bytes). Every run
// holds its own keys, so q_i is at least the run's own share of the bytes and
// never 0 for a run with data.
//
// Keys are user keys compared bytewise (sift's only order).

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "db/version_edit.h"

namespace sift {

// The user-key range [smallest, largest] of one table, and its size.
struct KeySpan {
  std::string smallest;
  std::string largest;  // >= smallest
  double bytes = 0;
};

// The user-key range and file size of table `f`.
KeySpan SpanOf(const FileMetaData& f);

// The share of the bytes of `data` (the tree's tables) whose keys lie inside
// the union of the spans of `run` (a run's tables: one for a level-0 table,
// a level's disjoint tables otherwise; any order, overlaps allowed), counted
// as above. 1 when `data` holds no bytes (nothing tells one key from
// another: every Get may probe the run).
double ProbeShare(absl::Span<const KeySpan> run,
                  absl::Span<const KeySpan> data);

// The probe share of every table's run in a tree whose level l holds the
// tables levels[l] (level 0: each table a run of its own; deeper levels: one
// run each), measured by all of the tree's tables: same shape as `levels`.
std::vector<std::vector<double>> TreeProbeShares(
    const std::vector<std::vector<KeySpan>>& levels);

}  // namespace sift

#endif  // SIFT_DB_PROBE_SHARES_H_
