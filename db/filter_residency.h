#ifndef SIFT_DB_FILTER_RESIDENCY_H_
#define SIFT_DB_FILTER_RESIDENCY_H_

// Which units of the tables' modular filters stay in memory under
// Options::filter_memory_limit (doc/filters.md, "A memory limit").
//
// An absent-key Get probes table t's filter with probability q_t: the
// probe share of the table's run (db/probe_shares.h), for a level >= 1
// times the table's share of its level's bytes, since a Get probes one
// table of the level. It reads a block when every
// resident unit of the filter says "maybe": with units of false-positive
// rates p_0, p_1, ... the first j resident cost q_t * p_0 * ... * p_(j-1)
// expected block reads per absent Get. Unit j then saves
// q_t * p_0 * ... * p_(j-1) * (1 - p_j) reads for its bytes. Within a table
// that saving per byte falls with j (the units are alike). Choosing how many
// units each table keeps within the budget is a multiple-choice knapsack
// (Choose below: exact for few tables, greedy by saving per byte with
// exchanges for many). The budget is the limit less the filter memory that
// cannot shrink (other filter kinds, range filters, the readers' objects).
//
// The choice covers the open tables of a version. A table opened later
// keeps the units whose saving per byte reaches the best unit the choice
// left out, with its probe share from the choice (1 for a table the
// version did not have).
//
// Thread safety: safe for concurrent use. Reconcile calls are serialized
// internally; UnitsAtOpen may run at any time (a reader opening a table).
// Lock order: reconcile_mu_, then mu_; neither is held while taking the DB
// mutex.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "db/retired_memory.h"
#include "filter/modular_bloom.h"
#include "sift/read_stats.h"

namespace sift {

class TableCache;
class Version;

class FilterResidency {
 public:
  // `table_cache` is not owned and must outlive this. REQUIRES: limit > 0.
  FilterResidency(uint64_t limit, TableCache* table_cache);
  FilterResidency(const FilterResidency&) = delete;
  FilterResidency& operator=(const FilterResidency&) = delete;

  // Units a table being opened keeps of its modular filter (`header`).
  uint32_t UnitsAtOpen(uint64_t file_number, const ModularHeader& header) const;

  // Choose the units of `version`'s open tables within the limit and make
  // them resident: drops first, then loads, counted in
  // stats->filter_unit_loads. Does nothing if `version` is the one the last
  // call chose for. Errors: the first unit that could not be read or checked
  // (its table keeps the units it has; the others are still applied).
  //
  // `open_tables`: first open the version's tables that are not open, up to
  // `max_open` in all, each with no unit in memory (DB::Open does this: a
  // table opened later by a read would otherwise take every unit, there
  // being no choice for it yet). The units chosen for them are then read
  // from their files like any other load.
  //
  // `with_newest_epoch(drop)` must call drop(epoch) with the epoch of the
  // newest installed version (Version::retired()) while no other version
  // can be installed (under the DB mutex): a probe that began before a drop
  // holds that version or an older one, so the dropped units outlive it.
  using DropFn = absl::FunctionRef<void(RetiredMemory* epoch)>;
  absl::Status Reconcile(const std::shared_ptr<const Version>& version,
                         absl::FunctionRef<void(DropFn drop)> with_newest_epoch,
                         ReadStats* stats, bool open_tables = false,
                         size_t max_open = 0);

  // The saving per byte (expected block reads per absent Get, per byte) of
  // unit `u` of a filter like `header` probed with share `q`.
  static double UnitValue(const ModularHeader& header, uint32_t u, double q);

  // The choice itself: for tables with filters `headers[i]` probed with
  // shares `q[i]`, how many units each keeps within `budget` bytes
  // (AlignedWords::BytesFor of each unit), taking units by saving per byte,
  // each table's in order. *threshold (nullable) gets the saving per byte
  // of the best unit left out, 0 if all fitted.
  //
  // Up to kExactTables tables, the choice is exact (ChooseExact): with few
  // large units, taking them by saving per byte can leave budget unspent
  // that a different mix would use. With more, the greedy choice, improved
  // by exchanges of one table's next unit for other tables' last ones: each
  // unit is then a sliver of the budget, and what the greedy choice leaves
  // unspent is less than one unit.
  static constexpr size_t kExactTables = 64;
  static std::vector<uint32_t> ChooseExact(
      absl::Span<const ModularHeader* const> headers,
      absl::Span<const double> q, uint64_t budget);
  static std::vector<uint32_t> Choose(
      absl::Span<const ModularHeader* const> headers,
      absl::Span<const double> q, uint64_t budget, double* threshold);

 private:
  const uint64_t limit_;
  TableCache* const table_cache_;

  // While set, tables open with no unit (Reconcile's open_tables).
  std::atomic<bool> open_empty_{false};

  std::mutex reconcile_mu_;
  std::weak_ptr<const Version> last_version_ ABSL_GUARDED_BY(reconcile_mu_);

  mutable std::mutex mu_;
  // Of the last choice: units per open table, probe share per table of the
  // version, and the saving per byte of the best unit left out (0: every
  // unit fitted).
  absl::flat_hash_map<uint64_t, uint32_t> units_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, double> shares_ ABSL_GUARDED_BY(mu_);
  double threshold_ ABSL_GUARDED_BY(mu_) = 0.0;
};

}  // namespace sift

#endif  // SIFT_DB_FILTER_RESIDENCY_H_
