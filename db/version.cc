#include "db/version.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/global_seqno.h"
#include "db/level_iterator.h"
#include "filter/filter.h"
#include "table/iterators.h"
#include "util/small_buffer.h"

namespace sift {

namespace {

uint64_t TotalFileSize(const FileList& files) {
  uint64_t sum = 0;
  for (const auto& f : files) sum += f->file_size;
  return sum;
}

// True if user_key (nullptr: -infinity) is after every key of f.
bool AfterFile(const Comparator* ucmp, const std::string_view* user_key,
               const FileMetaData& f) {
  return user_key != nullptr &&
         ucmp->Compare(*user_key, f.largest.user_key()) > 0;
}

// True if user_key (nullptr: +infinity) is before every key of f.
bool BeforeFile(const Comparator* ucmp, const std::string_view* user_key,
                const FileMetaData& f) {
  return user_key != nullptr &&
         ucmp->Compare(*user_key, f.smallest.user_key()) < 0;
}

// True if f holds no user key inside options' iteration bounds.
bool OutsideBounds(const Comparator* ucmp, const ReadOptions& options,
                   const FileMetaData& f) {
  return (options.iterate_upper_bound.has_value() &&
          ucmp->Compare(f.smallest.user_key(), *options.iterate_upper_bound) >=
              0) ||
         (options.iterate_lower_bound.has_value() &&
          ucmp->Compare(f.largest.user_key(), *options.iterate_lower_bound) <
              0);
}

}  // namespace

size_t FindFile(const InternalKeyComparator& icmp, const FileList& files,
                std::string_view internal_key) {
  return FindFileBetween(icmp, files, internal_key, 0, files.size());
}

bool SomeFileOverlapsRange(const InternalKeyComparator& icmp,
                           bool disjoint_sorted_files, const FileList& files,
                           const std::string_view* smallest_user_key,
                           const std::string_view* largest_user_key) {
  const Comparator* ucmp = icmp.user_comparator();
  if (!disjoint_sorted_files) {
    for (const auto& f : files) {
      if (!AfterFile(ucmp, smallest_user_key, *f) &&
          !BeforeFile(ucmp, largest_user_key, *f)) {
        return true;
      }
    }
    return false;
  }
  size_t index = 0;
  if (smallest_user_key != nullptr) {
    // The first internal key of the user key: finds the first file that can
    // hold any version of it.
    const InternalKey small(*smallest_user_key, kMaxSequenceNumber,
                            kValueTypeForSeek);
    index = FindFile(icmp, files, small.Encode());
  }
  if (index >= files.size()) return false;  // every file ends before the range
  return !BeforeFile(ucmp, largest_user_key, *files[index]);
}

std::unique_ptr<Iterator> NewFileListIterator(
    TableCache* table_cache, const InternalKeyComparator* icmp,
    const ReadOptions& options, const FileList& files, ReadStats* stats,
    DeferredPositions* deferred, std::optional<TablePinHint> pin_hint,
    const LevelBounds* bounds) {
  // Only the files that overlap the bounds: the first whose largest key is
  // at or past the lower bound, up to the first whose smallest key is at or
  // past the upper bound. A scan then never opens a table outside them.
  size_t begin = 0;
  if (options.iterate_lower_bound.has_value()) {
    const InternalKey lower(*options.iterate_lower_bound, kMaxSequenceNumber,
                            kValueTypeForSeek);
    begin = FindFile(*icmp, files, lower.Encode());
  }
  size_t end = files.size();
  if (options.iterate_upper_bound.has_value()) {
    const Comparator* ucmp = icmp->user_comparator();
    end = static_cast<size_t>(
        std::partition_point(
            files.begin() + static_cast<std::ptrdiff_t>(begin), files.end(),
            [&](const std::shared_ptr<const FileMetaData>& f) {
              return ucmp->Compare(f->smallest.user_key(),
                                   *options.iterate_upper_bound) < 0;
            }) -
        files.begin());
  }
  if (begin >= end) return NewEmptyIterator();
  return NewLevelIterator(table_cache, icmp, options, files, begin, end, stats,
                          deferred, pin_hint, bounds);
}

double Level1MaxBytes(uint64_t write_buffer_size) {
  return std::max(
      config::kLevel1MaxBytes,
      config::kLevel1WriteBuffers * static_cast<double>(write_buffer_size));
}

double MaxBytesForLevel(int level, double level1_bytes) {
  double result = level1_bytes;
  for (int l = 2; l <= level; ++l) result *= config::kLevelSizeMultiplier;
  return result;
}

Version::Version(TableCache* table_cache, const InternalKeyComparator* icmp,
                 uint64_t max_file_size, double level1_max_bytes)
    : table_cache_(table_cache),
      icmp_(icmp),
      max_file_size_(max_file_size),
      level1_max_bytes_(level1_max_bytes) {}

double Version::LevelTargetBytes(int level) const {
  return MaxBytesForLevel(level, level1_max_bytes_);
}

namespace {

enum class Outcome { kNotHere, kFound, kDeleted };

// The `handle` of a table search for one lookup: decides whether the first
// entry at or after the lookup key answers it, and keeps the outcome.
class EntryMatcher {
 public:
  EntryMatcher(const Comparator* ucmp, std::string_view user_key,
               std::string* value)
      : ucmp_(ucmp), user_key_(user_key), value_(value) {}

  bool operator()(std::string_view found_key, std::string_view found_value) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(found_key, &parsed)) {
      malformed_ = true;
      return true;
    }
    // The first entry >= the lookup key belongs to another user key: no
    // version of the key at or before the snapshot is in this table.
    if (ucmp_->Compare(parsed.user_key, user_key_) != 0) return false;
    if (parsed.type == kTypeValue) {
      value_->assign(found_value.data(), found_value.size());
      outcome_ = Outcome::kFound;
    } else {
      outcome_ = Outcome::kDeleted;
    }
    return true;
  }

  // The search's status `s`, made a corruption if an entry was malformed.
  absl::Status Finish(absl::Status s, const FileMetaData& f,
                      Outcome* outcome) const {
    *outcome = outcome_;
    if (s.ok() && malformed_) {
      return absl::DataLossError(absl::StrFormat(
          "table %06d.sst holds a malformed internal key", f.number));
    }
    return s;
  }

 private:
  const Comparator* const ucmp_;
  const std::string_view user_key_;
  std::string* const value_;
  Outcome outcome_ = Outcome::kNotHere;
  bool malformed_ = false;
};

// Look the key up in one table (of file `f`). kNotHere: the search goes on
// to older tables. kFound sets *value. `filter_key` is the key's user key,
// hashed once for every table the lookup probes.
absl::Status ProbeTable(const Table& table, const FileMetaData& f,
                        const Comparator* ucmp, const ReadOptions& options,
                        const LookupKey& key, FilterKeyHash* filter_key,
                        std::string* value, Outcome* outcome,
                        ReadStats* stats) {
  ++stats->tables_probed;
  *outcome = Outcome::kNotHere;
  // An ingested table holds every key at one sequence number: the whole
  // table is newer than the read or none of it is. Its stored sequences
  // (0) sort after any lookup key of the same user key, so the lookup
  // below finds its entry without rewriting the key.
  if (!FileVisibleAt(f, LookupSequence(key))) return absl::OkStatus();
  if (!table.FilterMayMatch(filter_key, stats)) return absl::OkStatus();
  EntryMatcher matcher(ucmp, key.user_key(), value);
  absl::Status s = table.GetAfterFilter(
      options, key.internal_key(),
      [&](std::string_view k, std::string_view v) { return matcher(k, v); },
      stats);
  return matcher.Finish(std::move(s), f, outcome);
}

// The answer for a key no table holds: NotFound without a message, so that
// it is held inline in the Status (a message is a heap allocation and a
// reference count, a noticeable part of an absent-key Get).
absl::Status KeyNotFound() {
  return absl::Status(absl::StatusCode::kNotFound, "");
}

absl::Status Answer(Outcome outcome) {
  return outcome == Outcome::kFound ? absl::OkStatus()
                                    : absl::NotFoundError("key deleted");
}

}  // namespace

TableCache::PinHint Version::PinHintFor(int level) const {
  TableCache::PinHint hint;
  int last = config::kNumLevels - 1;
  while (last > 0 && files_[last].empty()) --last;
  hint.last_level = level == last;
  for (int l = 0; l < last; ++l) hint.upper_level_tables += files_[l].size();
  return hint;
}

absl::StatusOr<const Table*> Version::TableFor(const FileMetaData& f, int level,
                                               TableCache::TableRef* ref,
                                               ReadStats* stats) const {
  // Only a table not pinned yet needs the hint: nearly every probe skips
  // the walk over the levels.
  if (const Table* pinned = f.pin.table(); pinned != nullptr) return pinned;
  return table_cache_->GetTable(f, ref, PinHintFor(level), stats);
}

absl::Status Version::Get(const ReadOptions& options, const LookupKey& key,
                          std::string* value, ReadStats* stats) const {
  FilterKeyHash filter_key(key.user_key());
  return Get(options, key, &filter_key, value, stats);
}

absl::Status Version::Get(const ReadOptions& options, const LookupKey& key,
                          FilterKeyHash* filter_key, std::string* value,
                          ReadStats* stats) const {
  ReadStats ignored;
  if (stats == nullptr) stats = &ignored;
  const Comparator* ucmp = icmp_->user_comparator();
  const std::string_view user_key = key.user_key();
  auto probe = [&](const FileMetaData& f, int level,
                   Outcome* outcome) -> absl::Status {
    TableCache::TableRef ref;
    absl::StatusOr<const Table*> table = TableFor(f, level, &ref, stats);
    if (!table.ok()) return table.status();
    return ProbeTable(**table, f, ucmp, options, key, filter_key, value,
                      outcome, stats);
  };

  // Level 0: files may overlap; the newest (highest number, last in the
  // list) answers first.
  const FileList& level0 = files_[0];
  if (!level0.empty()) {
    const LevelBounds& bounds = bounds_[0];
    const LevelBounds::Position position = bounds.Locate(user_key);
    for (size_t i = level0.size(); i-- > 0;) {
      const FileMetaData& f = *level0[i];
      if (!bounds.AtOrAfterSmallest(*icmp_, level0, i, user_key, position) ||
          !bounds.AtOrBeforeLargest(*icmp_, level0, i, user_key, position)) {
        continue;
      }
      Outcome outcome;
      if (absl::Status s = probe(f, 0, &outcome); !s.ok()) return s;
      if (outcome != Outcome::kNotHere) return Answer(outcome);
    }
  }

  // Deeper levels: at most one file can hold the key.
  for (int level = 1; level < config::kNumLevels; ++level) {
    const FileList& files = files_[level];
    if (files.empty()) continue;
    const LevelBounds& bounds = bounds_[level];
    const LevelBounds::Position position = bounds.Locate(user_key);
    const size_t index =
        bounds.FindFile(*icmp_, files, key.internal_key(), position);
    if (index >= files.size() ||
        !bounds.AtOrAfterSmallest(*icmp_, files, index, user_key, position)) {
      continue;
    }
    const FileMetaData& f = *files[index];
    Outcome outcome;
    if (absl::Status s = probe(f, level, &outcome); !s.ok()) return s;
    if (outcome != Outcome::kNotHere) return Answer(outcome);
  }
  return KeyNotFound();
}

void Version::MultiGet(const ReadOptions& options,
                       absl::Span<BatchLookup> lookups,
                       ReadStats* stats) const {
  if (lookups.empty()) return;
  ReadStats ignored;
  if (stats == nullptr) stats = &ignored;
  const Comparator* ucmp = icmp_->user_comparator();
  // Whether a file is visible depends on the sequence, which the batch
  // shares: it is decided once per table, not once per probe.
  const SequenceNumber sequence = LookupSequence(*lookups.front().key);
  assert(std::all_of(lookups.begin(), lookups.end(), [&](const BatchLookup& l) {
    return LookupSequence(*l.key) == sequence;
  }));
  // One round: the lookups still open that a set of disjoint tables (one
  // level-0 table, or a whole deeper level) may answer. Each step runs over
  // the whole round before the next, so that its cache misses overlap
  // across lookups: find every lookup's table and prefetch its filter line;
  // probe the filters, and for those that pass find the data block and
  // prefetch it; then search the blocks. Probes stay small (most lookups of
  // absent keys end at the filter); a probe that passes its filter gets a
  // Hit with its block.
  struct Probe {
    BatchLookup* lookup;
    int level;
    bool visible;  // the file may hold entries the batch's sequence sees
    const FileMetaData* file;
    const Table* table;
    FilterReader::Located filter;  // the key's place in table's filter
  };
  struct Hit {
    const Probe* probe;
    Table::DataBlockLocation block;
  };
  // A round holds at most one probe per lookup, and at most every probe
  // passes its filter: on the stack for DB::MultiGet's usual batches.
  SmallBuffer<Probe, kInlineBatch> round(lookups.size());
  SmallBuffer<Hit, kInlineBatch> hits(lookups.size());
  std::vector<TableCache::TableRef> refs;  // tables not pinned in their file
  auto fail = [&](const Probe& p, absl::Status s) {
    *p.lookup->status = std::move(s);
    p.lookup->done = true;
  };
  auto run_round = [&] {
    // Consecutive probes often share a table (a level-0 round always does):
    // it is looked up once for the run. A deeper level's round meets a new
    // table at nearly every probe, and nearly every table is pinned: its pin
    // is read here, and only a table not pinned goes through TableFor.
    const FileMetaData* last_file = nullptr;
    const Table* last_table = nullptr;
    bool last_visible = false;
    for (Probe& p : round) {
      if (p.file != last_file) {
        const Table* table = p.file->pin.table();
        if (table == nullptr) {
          TableCache::TableRef ref;
          absl::StatusOr<const Table*> opened =
              TableFor(*p.file, p.level, &ref, stats);
          if (!opened.ok()) {
            fail(p, opened.status());
            continue;  // the next probe of this file tries again
          }
          table = *opened;
          if (ref.valid()) refs.push_back(std::move(ref));
        }
        last_file = p.file;
        last_table = table;
        last_visible = FileVisibleAt(*p.file, sequence);
      }
      p.table = last_table;
      p.visible = last_visible;
      if (p.visible) p.filter = p.table->LocateInFilter(p.lookup->filter_key);
    }
    for (const Probe& p : round) {
      if (p.lookup->done) continue;  // its table could not be opened
      ++stats->tables_probed;
      if (!p.visible ||
          !p.table->FilterMayMatch(p.filter, p.lookup->filter_key, stats)) {
        continue;  // as in ProbeTable
      }
      absl::StatusOr<std::optional<Table::DataBlockLocation>> block =
          p.table->FindDataBlock(p.lookup->key->internal_key(), stats);
      if (!block.ok()) {
        fail(p, block.status());
        continue;
      }
      if (!block->has_value()) continue;
      Hit& hit = hits.emplace_back(Hit{&p, **block});
      p.table->PrefetchDataBlock(&hit.block);
    }
    // By now the first hits' restart arrays have arrived: load the keys
    // their searches compare.
    for (const Hit& hit : hits) {
      hit.probe->table->PrefetchDataBlockKeys(hit.block);
    }
    // And then the entries each search will scan.
    for (Hit& hit : hits) {
      hit.probe->table->PrefetchDataBlockEntries(
          &hit.block, hit.probe->lookup->key->internal_key());
    }
    for (const Hit& hit : hits) {
      const Probe& p = *hit.probe;
      BatchLookup& l = *p.lookup;
      if (l.done) continue;
      EntryMatcher matcher(ucmp, l.key->user_key(), l.value);
      Outcome outcome;
      absl::Status s =
          matcher.Finish(p.table->GetInDataBlock(
                             options, hit.block, l.key->internal_key(),
                             [&](std::string_view k, std::string_view v) {
                               return matcher(k, v);
                             },
                             stats),
                         *p.file, &outcome);
      if (!s.ok()) {
        fail(p, std::move(s));
      } else if (outcome != Outcome::kNotHere) {
        *l.status = Answer(outcome);
        l.done = true;
      }
    }
    round.clear();
    hits.clear();
    refs.clear();
  };

  // Level 0, newest first: each table is a round of the lookups in its range
  // (a run of the sorted batch).
  const FileList& level0 = files_[0];
  for (auto it = level0.rbegin(); it != level0.rend(); ++it) {
    const FileMetaData& f = **it;
    const std::string_view smallest = f.smallest.user_key();
    const std::string_view largest = f.largest.user_key();
    auto before_table = [&](const BatchLookup& l) {
      return icmp_->CompareUserKeys(l.key->user_key(), smallest) < 0;
    };
    auto in_or_before_table = [&](const BatchLookup& l) {
      return icmp_->CompareUserKeys(l.key->user_key(), largest) <= 0;
    };
    size_t begin = 0;
    size_t end = lookups.size();
    // A level-0 table usually spans the whole batch (flushes cover the key
    // space): then two compares place it, instead of one per lookup.
    if (before_table(lookups.front())) {
      begin =
          std::partition_point(lookups.begin(), lookups.end(), before_table) -
          lookups.begin();
    }
    if (!in_or_before_table(lookups.back())) {
      end = std::partition_point(lookups.begin() + begin, lookups.end(),
                                 in_or_before_table) -
            lookups.begin();
    }
    for (size_t i = begin; i < end; ++i) {
      if (!lookups[i].done) {
        round.emplace_back(Probe{&lookups[i], 0, false, &f, nullptr, {}});
      }
    }
    run_round();
  }

  // Deeper levels: at most one table per lookup; a level is a round, found
  // by one walk of the level's files in key order.
  for (int level = 1; level < config::kNumLevels; ++level) {
    const FileList& files = files_[level];
    if (files.empty()) continue;
    const LevelBounds& bounds = bounds_[level];
    // Usually every key of the batch shares the level's common prefix: then
    // each key's window is read without comparing the prefix again.
    const bool inside_all = bounds.InsideAll(lookups.front().key->user_key(),
                                             lookups.back().key->user_key());
    size_t index = 0;
    for (size_t i = 0; i < lookups.size(); ++i) {
      const BatchLookup& l = lookups[i];
      if (l.done) continue;
      const std::string_view user_key = l.key->user_key();
      const LevelBounds::Position position =
          inside_all ? bounds.LocateInside(user_key) : bounds.Locate(user_key);
      index = bounds.FindFile(*icmp_, files, l.key->internal_key(), position,
                              index);
      if (index >= files.size()) break;  // this and every later key
      if (!bounds.AtOrAfterSmallest(*icmp_, files, index, user_key, position)) {
        continue;
      }
      round.emplace_back(
          Probe{&lookups[i], level, false, files[index].get(), nullptr, {}});
    }
    run_round();
  }
  for (BatchLookup& l : lookups) {
    if (!l.done) {
      *l.status = KeyNotFound();
      l.done = true;
    }
  }
}

void Version::AddIterators(const ReadOptions& options, IteratorList* iters,
                           ReadStats* stats,
                           DeferredPositions* deferred) const {
  // Tables and levels outside the iteration bounds are left out: an
  // iterator costs what its range touches, not what the tree holds.
  // The tables they open are pinned as point reads pin them (GetTable's
  // policy), so that later iterators find them without a cache lookup.
  const Comparator* ucmp = icmp_->user_comparator();
  if (!files_[0].empty()) {
    const TableCache::PinHint hint = PinHintFor(0);
    for (const auto& f : files_[0]) {
      if (OutsideBounds(ucmp, options, *f)) continue;
      iters->push_back(
          NewTableFileIterator(table_cache_, options, *f, stats, &hint));
    }
  }
  for (int level = 1; level < config::kNumLevels; ++level) {
    if (!files_[level].empty()) {
      iters->push_back(NewFileListIterator(table_cache_, icmp_, options,
                                           files_[level], stats, deferred,
                                           PinHintFor(level), &bounds_[level]));
    }
  }
}

std::optional<Version::SeekCharge> Version::RecordSeek(
    std::string_view internal_key) const {
  const std::string_view user_key = ExtractUserKey(internal_key);
  int first_level = -1;
  size_t first_index = 0;
  auto found = [&](int level, size_t index) {
    if (first_level >= 0) return true;  // a second run: the first is charged
    first_level = level;
    first_index = index;
    return false;
  };
  bool charge = false;
  const FileList& level0 = files_[0];
  if (!level0.empty()) {
    const LevelBounds& bounds = bounds_[0];
    const LevelBounds::Position position = bounds.Locate(user_key);
    for (size_t i = level0.size(); i-- > 0 && !charge;) {
      if (bounds.AtOrAfterSmallest(*icmp_, level0, i, user_key, position) &&
          bounds.AtOrBeforeLargest(*icmp_, level0, i, user_key, position)) {
        charge = found(0, i);
      }
    }
  }
  for (int level = 1; level < config::kNumLevels && !charge; ++level) {
    const FileList& files = files_[level];
    if (files.empty()) continue;
    const LevelBounds& bounds = bounds_[level];
    const LevelBounds::Position position = bounds.Locate(user_key);
    const size_t index = bounds.FindFile(*icmp_, files, internal_key, position);
    if (index < files.size() &&
        bounds.AtOrAfterSmallest(*icmp_, files, index, user_key, position)) {
      charge = found(level, index);
    }
  }
  if (!charge) return std::nullopt;
  const std::shared_ptr<const FileMetaData>& f =
      files_[first_level][first_index];
  if (!f->seeks.Charge(f->file_size)) return std::nullopt;
  return SeekCharge{first_level, f};
}

int64_t Version::NumLevelBytes(int level) const {
  return static_cast<int64_t>(TotalFileSize(files_[level]));
}

bool Version::OverlapInLevel(int level,
                             const std::string_view* smallest_user_key,
                             const std::string_view* largest_user_key) const {
  return SomeFileOverlapsRange(*icmp_, level > 0, files_[level],
                               smallest_user_key, largest_user_key);
}

int Version::PickLevelForMemTableOutput(
    std::string_view smallest_user_key,
    std::string_view largest_user_key) const {
  if (OverlapInLevel(0, &smallest_user_key, &largest_user_key)) return 0;
  // Pushing a new table below level 0 saves compacting it there, as long as
  // it does not land on top of data it should be merged with.
  const InternalKey start(smallest_user_key, kMaxSequenceNumber,
                          kValueTypeForSeek);
  const InternalKey limit(largest_user_key, 0, kTypeDeletion);
  int level = 0;
  while (level < config::kMaxMemCompactLevel) {
    if (OverlapInLevel(level + 1, &smallest_user_key, &largest_user_key)) {
      break;
    }
    if (level + 2 < config::kNumLevels) {
      FileList overlaps;
      GetOverlappingInputs(level + 2, &start, &limit, &overlaps);
      if (TotalFileSize(overlaps) >
          MaxGrandParentOverlapBytes(max_file_size_)) {
        break;
      }
    }
    ++level;
  }
  return level;
}

void Version::GetOverlappingInputs(int level, const InternalKey* begin,
                                   const InternalKey* end,
                                   FileList* inputs) const {
  inputs->clear();
  const Comparator* ucmp = icmp_->user_comparator();
  std::string user_begin;
  std::string user_end;
  if (begin != nullptr) user_begin = std::string(begin->user_key());
  if (end != nullptr) user_end = std::string(end->user_key());
  const FileList& files = files_[level];
  for (size_t i = 0; i < files.size();) {
    const FileMetaData& f = *files[i++];
    const std::string_view file_start = f.smallest.user_key();
    const std::string_view file_limit = f.largest.user_key();
    if (begin != nullptr && ucmp->Compare(file_limit, user_begin) < 0) continue;
    if (end != nullptr && ucmp->Compare(file_start, user_end) > 0) continue;
    inputs->push_back(files[i - 1]);
    if (level == 0) {
      // Level-0 files overlap one another: if this file widens the range,
      // start over so that files overlapping the wider range join too.
      if (begin != nullptr && ucmp->Compare(file_start, user_begin) < 0) {
        user_begin = std::string(file_start);
        inputs->clear();
        i = 0;
      } else if (end != nullptr && ucmp->Compare(file_limit, user_end) > 0) {
        user_end = std::string(file_limit);
        inputs->clear();
        i = 0;
      }
    }
  }
}

void Version::Finalize() {
  for (int level = 0; level < config::kNumLevels; ++level) {
    bounds_[level].Build(*icmp_, files_[level]);
  }
  int best_level = -1;
  double best_score = -1;
  // The last level has nowhere to go.
  for (int level = 0; level < config::kNumLevels - 1; ++level) {
    double score;
    if (level == 0) {
      // Counted in files, not bytes: every level-0 file is one more table a
      // read may have to probe.
      score = static_cast<double>(files_[0].size()) /
              static_cast<double>(config::kL0CompactionTrigger);
    } else {
      score =
          static_cast<double>(NumLevelBytes(level)) / LevelTargetBytes(level);
    }
    if (score > best_score) {
      best_level = level;
      best_score = score;
    }
  }
  compaction_level_ = best_level;
  compaction_score_ = best_score;
}

std::string Version::DebugString() const {
  std::string r;
  for (int level = 0; level < config::kNumLevels; ++level) {
    if (files_[level].empty()) continue;
    absl::StrAppend(&r, "--- level ", level, " ---\n");
    for (const auto& f : files_[level]) {
      absl::StrAppend(&r, " ", f->number, ":", f->file_size, "[",
                      f->smallest.DebugString(), " .. ",
                      f->largest.DebugString(), "]\n");
    }
  }
  return r;
}

}  // namespace sift
