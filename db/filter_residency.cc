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
    uint32_t units = 0;   // chosen
    bool closed = false;  // a unit did not fit: take no more of this table
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
        open.push_back(Open{number, q, std::move(ref), filter, 0, false});
      }
    }
  }

  // Every unit of every open modular filter, best saving per byte first.
  struct Candidate {
    double value;
    size_t table;
    uint32_t unit;
  };
  std::vector<Candidate> candidates;
  for (size_t t = 0; t < open.size(); ++t) {
    const ModularHeader& header = open[t].filter->header();
    for (uint32_t u = 0; u < header.units.size(); ++u) {
      candidates.push_back({UnitValue(header, u, open[t].q), t, u});
    }
  }
  // Ties (alike tables) keep each table's units in order.
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) {
              if (a.value != b.value) return a.value > b.value;
              if (a.table != b.table) return a.table < b.table;
              return a.unit < b.unit;
            });
  uint64_t budget = limit_ > fixed ? limit_ - fixed : 0;
  double threshold = 0.0;
  for (const Candidate& c : candidates) {
    Open& t = open[c.table];
    if (t.closed || c.unit != t.units) {
      t.closed = true;
      continue;
    }
    const size_t bytes = t.filter->UnitMemory(c.unit);
    if (bytes > budget) {
      t.closed = true;
      threshold = std::max(threshold, c.value);
      continue;
    }
    budget -= bytes;
    ++t.units;
  }
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
