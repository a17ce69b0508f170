#include "db/filter_residency.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "db/probe_shares.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "filter/aligned_words.h"
#include "filter/bloom_math.h"

namespace sift {

FilterResidency::FilterResidency(uint64_t limit, TableCache* table_cache)
    : limit_(limit), table_cache_(table_cache) {}

double FilterResidency::UnitValue(const ModularHeader& header, uint32_t u,
                                  double q) {
  double reach = q;  // chance an absent Get gets past units 0..u-1
  for (uint32_t v = 0; v < u; ++v) {
    reach *= StandardFpr(header.units[v].num_bits, header.num_keys,
                         header.units[v].num_probes);
  }
  const ModularHeader::Unit& unit = header.units[u];
  const double saved =
      reach *
      (1.0 - StandardFpr(unit.num_bits, header.num_keys, unit.num_probes));
  return saved /
         static_cast<double>(AlignedWords::BytesFor(unit.num_bits / 64));
}

uint32_t FilterResidency::UnitsAtOpen(uint64_t file_number,
                                      const ModularHeader& header) const {
  const auto count = static_cast<uint32_t>(header.units.size());
  if (open_empty_.load(std::memory_order_acquire)) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = units_.find(file_number); it != units_.end()) {
    return std::min(it->second, count);
  }
  if (threshold_ <= 0) return count;
  const auto share = shares_.find(file_number);
  const double q = share != shares_.end() ? share->second : 1.0;
  uint32_t units = 0;
  while (units < count && UnitValue(header, units, q) >= threshold_) ++units;
  return units;
}

namespace {

// The expected block reads per absent Get that unit `u` of table t saves
// (not per byte).
double UnitSaving(const ModularHeader& header, uint32_t u, double q) {
  return FilterResidency::UnitValue(header, u, q) *
         static_cast<double>(
             AlignedWords::BytesFor(header.units[u].num_bits / 64));
}

// The greedy choice can strand budget: a unit worth more than those taken
// after it that did not fit in what was left. With many tables that loss is
// a sliver; with few large ones it is not. So: while some table's next unit
// would save more than the last units of the tables it would displace (the
// cheapest savings per byte first, one unit from each), make that exchange.
// Bounded: candidates are the best few next units and the cheapest few last
// units, and each exchange lowers the expected false positives.
void ImproveBySwaps(absl::Span<const ModularHeader* const> headers,
                    absl::Span<const double> q, uint64_t budget,
                    std::vector<uint32_t>* units) {
  constexpr size_t kCandidates = 32;
  const size_t tables = headers.size();
  auto bytes_of = [&](size_t t, uint32_t u) {
    return static_cast<uint64_t>(
        AlignedWords::BytesFor(headers[t]->units[u].num_bits / 64));
  };
  for (size_t round = 0; round < 4 * tables + 4; ++round) {
    struct Entry {
      double saving;
      uint64_t bytes;
      size_t table;
    };
    std::vector<Entry> adds, drops;
    for (size_t t = 0; t < tables; ++t) {
      const uint32_t j = (*units)[t];
      if (j < headers[t]->units.size()) {
        adds.push_back({UnitSaving(*headers[t], j, q[t]), bytes_of(t, j), t});
      }
      if (j > 0) {
        drops.push_back(
            {UnitSaving(*headers[t], j - 1, q[t]), bytes_of(t, j - 1), t});
      }
    }
    auto by_saving = [](const Entry& a, const Entry& b) {
      return a.saving > b.saving;
    };
    auto by_cheapness = [](const Entry& a, const Entry& b) {
      return a.saving * static_cast<double>(b.bytes) <
             b.saving * static_cast<double>(a.bytes);
    };
    std::sort(adds.begin(), adds.end(), by_saving);
    std::sort(drops.begin(), drops.end(), by_cheapness);
    if (adds.size() > kCandidates) adds.resize(kCandidates);
    if (drops.size() > kCandidates) drops.resize(kCandidates);

    double best_gain = 1e-15;
    size_t best_add = 0, best_drops = 0;
    for (size_t a = 0; a < adds.size(); ++a) {
      uint64_t freed = budget;
      double lost = 0;
      size_t taken = 0;
      for (size_t d = 0; d <= drops.size(); ++d) {
        if (freed >= adds[a].bytes) {
          if (adds[a].saving - lost > best_gain) {
            best_gain = adds[a].saving - lost;
            best_add = a;
            best_drops = taken;
          }
          break;
        }
        if (d == drops.size() || lost >= adds[a].saving) break;
        if (drops[d].table == adds[a].table) continue;
        freed += drops[d].bytes;
        lost += drops[d].saving;
        taken = d + 1;
      }
    }
    if (best_gain <= 1e-15) return;
    const Entry& add = adds[best_add];
    for (size_t d = 0; d < best_drops; ++d) {
      if (drops[d].table == add.table) continue;
      --(*units)[drops[d].table];
      budget += drops[d].bytes;
    }
    ++(*units)[add.table];
    budget -= add.bytes;
  }
}

}  // namespace

std::vector<uint32_t> FilterResidency::ChooseExact(
    absl::Span<const ModularHeader* const> headers, absl::Span<const double> q,
    uint64_t budget) {
  // The Pareto frontier of (bytes, saving) over the tables so far: a
  // multiple-choice knapsack solved exactly, each table choosing how many
  // units it keeps.
  struct Point {
    uint64_t bytes;
    double saving;
    uint32_t parent;  // index in the previous frontier
    uint32_t units;   // this table's choice
  };
  std::vector<std::vector<Point>> frontiers;
  std::vector<Point> frontier = {{0, 0.0, 0, 0}};
  for (size_t t = 0; t < headers.size(); ++t) {
    const ModularHeader& h = *headers[t];
    std::vector<std::pair<uint64_t, double>> choices = {{0, 0.0}};
    double pass = q[t];
    uint64_t bytes = 0;
    for (uint32_t u = 0; u < h.units.size(); ++u) {
      bytes += AlignedWords::BytesFor(h.units[u].num_bits / 64);
      pass *=
          StandardFpr(h.units[u].num_bits, h.num_keys, h.units[u].num_probes);
      choices.emplace_back(bytes, q[t] - pass);
    }
    std::vector<Point> next;
    for (uint32_t i = 0; i < frontier.size(); ++i) {
      for (uint32_t j = 0; j < choices.size(); ++j) {
        const uint64_t b = frontier[i].bytes + choices[j].first;
        if (b > budget) break;
        next.push_back({b, frontier[i].saving + choices[j].second, i, j});
      }
    }
    std::sort(next.begin(), next.end(), [](const Point& a, const Point& b) {
      return a.bytes != b.bytes ? a.bytes < b.bytes : a.saving > b.saving;
    });
    std::vector<Point> pruned;
    for (const Point& p : next) {
      if (pruned.empty() || p.saving > pruned.back().saving)
        pruned.push_back(p);
    }
    frontiers.push_back(frontier);
    frontier = std::move(pruned);
  }
  std::vector<uint32_t> units(headers.size(), 0);
  uint32_t at = static_cast<uint32_t>(frontier.size() - 1);  // most saving
  for (size_t t = headers.size(); t-- > 0;) {
    units[t] = frontier[at].units;
    at = frontier[at].parent;
    frontier = std::move(frontiers[t]);
  }
  return units;
}

std::vector<uint32_t> FilterResidency::Choose(
    absl::Span<const ModularHeader* const> headers, absl::Span<const double> q,
    uint64_t budget, double* threshold) {
  const uint64_t limit = budget;
  struct Candidate {
    double value;
    size_t table;
    uint32_t unit;
  };
  std::vector<Candidate> candidates;
  for (size_t t = 0; t < headers.size(); ++t) {
    for (uint32_t u = 0; u < headers[t]->units.size(); ++u) {
      candidates.push_back({UnitValue(*headers[t], u, q[t]), t, u});
    }
  }
  // Best saving per byte first; ties (alike tables) keep each table's
  // units in order.
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) {
              if (a.value != b.value) return a.value > b.value;
              if (a.table != b.table) return a.table < b.table;
              return a.unit < b.unit;
            });
  std::vector<uint32_t> units(headers.size(), 0);
  std::vector<bool> closed(headers.size(), false);  // a unit did not fit
  double left_out = 0.0;
  for (const Candidate& c : candidates) {
    const size_t t = c.table;
    if (closed[t] || c.unit != units[t]) {
      closed[t] = true;
      continue;
    }
    const size_t bytes =
        AlignedWords::BytesFor(headers[t]->units[c.unit].num_bits / 64);
    if (bytes > budget) {
      closed[t] = true;
      left_out = std::max(left_out, c.value);
      continue;
    }
    budget -= bytes;
    ++units[t];
  }
  if (headers.size() <= kExactTables && left_out > 0) {
    units = ChooseExact(headers, q, limit);
  } else {
    ImproveBySwaps(headers, q, budget, &units);
  }
  if (threshold != nullptr) *threshold = left_out;
  return units;
}

absl::Status FilterResidency::Reconcile(
    const std::shared_ptr<const Version>& version,
    absl::FunctionRef<void(DropFn drop)> with_newest_epoch, ReadStats* stats,
    bool open_tables, size_t max_open) {
  std::lock_guard<std::mutex> reconcile(reconcile_mu_);
  if (!open_tables && last_version_.lock() == version) return absl::OkStatus();
  last_version_ = version;

  absl::Status first_error;
  if (open_tables) {
    open_empty_.store(true, std::memory_order_release);
    size_t opened = 0;
    for (int level = 0; level < config::kNumLevels && opened < max_open;
         ++level) {
      for (const auto& f : version->files(level)) {
        if (opened++ >= max_open) break;
        if (table_cache_->LookupOpenTable(f->number).valid()) continue;
        absl::StatusOr<TableCache::TableRef> ref =
            table_cache_->FindTable(f->number, f->file_size);
        if (!ref.ok() && first_error.ok()) first_error = ref.status();
      }
    }
    open_empty_.store(false, std::memory_order_release);
  }

  // Every table's probe share, measured over the whole tree.
  std::vector<std::vector<KeySpan>> spans(config::kNumLevels);
  for (int level = 0; level < config::kNumLevels; ++level) {
    for (const auto& f : version->files(level)) {
      spans[level].push_back(SpanOf(*f));
    }
  }
  const std::vector<std::vector<double>> shares = TreeProbeShares(spans);

  struct Open {
    uint64_t number;
    double q;
    TableCache::TableRef ref;
    const ModularBloomReader* filter;
    uint32_t units = 0;  // chosen
  };
  std::vector<Open> open;
  absl::flat_hash_map<uint64_t, double> all_shares;
  uint64_t fixed = 0;  // filter memory that cannot shrink
  for (int level = 0; level < config::kNumLevels; ++level) {
    const auto& files = version->files(level);
    double level_bytes = 0;
    for (const auto& f : files)
      level_bytes += static_cast<double>(f->file_size);
    for (size_t i = 0; i < files.size(); ++i) {
      const uint64_t number = files[i]->number;
      // A Get probes one table of a level >= 1 (the one whose range holds
      // its key): the run's share, split by the tables' shares of the
      // level's bytes (keys are taken to be drawn like the tree's).
      // Every level-0 table is a run of its own.
      const double q = level == 0 || level_bytes <= 0
                           ? shares[level][i]
                           : shares[level][i] *
                                 static_cast<double>(files[i]->file_size) /
                                 level_bytes;
      all_shares[number] = q;
      TableCache::TableRef ref = table_cache_->LookupOpenTable(number);
      if (!ref.valid()) continue;
      const Table& table = ref.table();
      const ModularBloomReader* filter = table.modular_filter();
      size_t resident = 0;
      if (filter != nullptr) {
        for (uint32_t u = 0; u < filter->resident_units(); ++u) {
          resident += filter->UnitMemory(u);
        }
      }
      fixed += table.FilterMemoryUsage() - resident;
      if (filter != nullptr) {
        open.push_back(Open{number, q, std::move(ref), filter, 0});
      }
    }
  }

  std::vector<const ModularHeader*> headers;
  std::vector<double> q;
  for (const Open& t : open) {
    headers.push_back(&t.filter->header());
    q.push_back(t.q);
  }
  double threshold = 0.0;
  const std::vector<uint32_t> chosen =
      Choose(headers, q, limit_ > fixed ? limit_ - fixed : 0, &threshold);
  for (size_t i = 0; i < open.size(); ++i) open[i].units = chosen[i];
  // A table opened before the next choice keeps the units worth at least
  // the best unit this choice had to leave out.
  {
    std::lock_guard<std::mutex> lock(mu_);
    units_.clear();
    for (const Open& t : open) units_[t.number] = t.units;
    shares_ = std::move(all_shares);
    threshold_ = threshold;
  }

  // Drops first, so the loads find the memory given back.
  with_newest_epoch([&](RetiredMemory* epoch) {
    for (const Open& t : open) {
      if (t.units < t.filter->resident_units()) {
        table_cache_->SetFilterUnits(t.number, t.units, epoch, stats)
            .IgnoreError();  // dropping reads nothing
      }
    }
  });
  for (const Open& t : open) {
    if (t.units > t.filter->resident_units()) {
      absl::Status s =
          table_cache_->SetFilterUnits(t.number, t.units, nullptr, stats);
      if (!s.ok() && first_error.ok()) first_error = s;
    }
  }
  return first_error;
}

}  // namespace sift
