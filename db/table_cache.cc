#include "db/table_cache.h"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "db/scan_prefix.h"
#include "filter/modular_bloom.h"
#include "table/iterators.h"
#include "util/coding.h"

namespace sift {

namespace {

// What the cache holds per open table. The deleter gives back the memory the
// table was counted for.
struct OpenTable {
  std::unique_ptr<Table> table;
  TableCache::Usage* usage;
  // Changed by SetFilterUnits as a modular filter's units come and go.
  std::atomic<size_t> filter_bytes;
  size_t index_bytes;
};

void DeleteOpenTable(std::string_view /*key*/, void* value) {
  auto* entry = static_cast<OpenTable*>(value);
  entry->usage->filter_bytes.fetch_sub(entry->filter_bytes.load(),
                                       std::memory_order_relaxed);
  entry->usage->index_bytes.fetch_sub(entry->index_bytes,
                                      std::memory_order_relaxed);
  entry->usage->open_tables.fetch_sub(1, std::memory_order_relaxed);
  delete entry;
}

// The cache key of a table: its file number, fixed 8 bytes.
struct CacheKey {
  explicit CacheKey(uint64_t file_number) { EncodeFixed64(buf, file_number); }
  std::string_view view() const { return {buf, sizeof(buf)}; }
  char buf[8];
};

// A range filter's "maybe" for [lower, upper), to be judged by the table
// iterator's first positioning when it is a Seek to the lower bound (as
// DBIter::Seek(lower) does): finding no key below upper there makes it a
// false positive, counted in stats->range_filter_false_positives. Other
// first positionings (a Seek inside the range, SeekToLast for a reverse
// scan) are not judged: what they find does not tell whether [lower, upper)
// holds a key. The bounds' bytes belong to the ReadOptions of the DB
// iterator, which keeps them alive for its life and so for the table
// iterator's.
struct RangeMaybe {
  const Comparator* user_comparator;
  std::string_view lower;
  std::string_view upper;
};

// A table iterator that keeps its table alive: `Holder` is a TableRef (the
// table stays pinned in the cache) or a std::unique_ptr<Table> (a table
// opened for this iterator alone, see NewIterator, closed with it).
template <typename Holder>
class TableHoldingIterator final : public Iterator {
 public:
  TableHoldingIterator(Holder holder, const Table& table,
                       const ReadOptions& options, ReadStats* stats,
                       std::optional<RangeMaybe> to_judge = std::nullopt)
      : holder_(std::move(holder)),
        iter_(table.NewIterator(options, stats)),
        stats_(stats),
        to_judge_(to_judge) {}

  bool Valid() const override { return iter_->Valid(); }
  void SeekToFirst() override {
    to_judge_.reset();
    iter_->SeekToFirst();
  }
  void SeekToLast() override {
    to_judge_.reset();
    iter_->SeekToLast();
  }
  void Seek(std::string_view target) override {
    iter_->Seek(target);
    if (to_judge_.has_value()) Judge(target);
  }
  void Next() override { iter_->Next(); }
  void Prev() override { iter_->Prev(); }
  std::string_view key() const override { return iter_->key(); }
  std::string_view value() const override { return iter_->value(); }
  absl::Status status() const override { return iter_->status(); }

 private:
  // After the first Seek: see RangeMaybe.
  void Judge(std::string_view target) {
    const RangeMaybe maybe = *to_judge_;
    to_judge_.reset();
    if (ExtractUserKey(target) != maybe.lower) return;
    if (!iter_->status().ok()) return;  // unknown, not a false positive
    if (!iter_->Valid() ||
        maybe.user_comparator->Compare(ExtractUserKey(iter_->key()),
                                       maybe.upper) >= 0) {
      ++stats_->range_filter_false_positives;
    }
  }

  // Declared first: destroyed after iter_, which reads from the table.
  Holder holder_;
  std::unique_ptr<Iterator> iter_;
  ReadStats* const stats_;  // non-null while to_judge_ is set
  std::optional<RangeMaybe> to_judge_;
};

// The holder of a table that its FileMetaData keeps open (pinned in
// FileMetaData::pin, for as long as the file lives): the iterator holds
// nothing.
struct Unheld {};

// An iterator over `table`, kept open by `holder` while it lives: empty when
// options' bounds confine the scan to one prefix that the table's prefix
// filter rules out (no block read), or when both bounds are set and the
// table's range filter rules the range out; else the table's iterator,
// wrapped where something must be held or a range filter's "maybe" judged.
template <typename Holder>
std::unique_ptr<Iterator> IteratorOver(Holder holder, const Table& table,
                                       const ReadOptions& options,
                                       ReadStats* stats,
                                       const PrefixExtractor* prefix_extractor,
                                       const Comparator* user_comparator) {
  if (const std::optional<std::string_view> prefix =
          ScanPrefix(options, prefix_extractor);
      prefix.has_value() && !table.PrefixMayMatch(*prefix, stats)) {
    return NewEmptyIterator();
  }
  if (options.iterate_lower_bound.has_value() &&
      options.iterate_upper_bound.has_value()) {
    if (!table.RangeMayMatch(options.iterate_lower_bound,
                             options.iterate_upper_bound, stats)) {
      return NewEmptyIterator();
    }
    if (table.has_range_filter() && stats != nullptr) {
      return std::make_unique<TableHoldingIterator<Holder>>(
          std::move(holder), table, options, stats,
          RangeMaybe{user_comparator, *options.iterate_lower_bound,
                     *options.iterate_upper_bound});
    }
  }
  if constexpr (std::is_same_v<Holder, Unheld>) {
    return table.NewIterator(options, stats);
  } else {
    return std::make_unique<TableHoldingIterator<Holder>>(
        std::move(holder), table, options, stats);
  }
}

RandomAccessMode ReadModeOf(const Options& options) {
  if (options.use_direct_reads) return RandomAccessMode::kDirect;
  return options.allow_mmap_reads ? RandomAccessMode::kMemoryMapped
                                  : RandomAccessMode::kBuffered;
}

}  // namespace

// One pinned table: the cache reference that keeps it open, and the count of
// pinned tables it is part of.
struct TablePinSlot::Pin {
  Pin(TableCache::TableRef r, std::atomic<size_t>* count)
      : ref(std::move(r)), pinned_tables(count) {}
  ~Pin() { pinned_tables->fetch_sub(1, std::memory_order_relaxed); }
  TableCache::TableRef ref;
  std::atomic<size_t>* const pinned_tables;
};

TablePinSlot& TablePinSlot::operator=(const TablePinSlot& /*other*/) {
  table_.store(nullptr, std::memory_order_relaxed);
  delete pin_.exchange(nullptr, std::memory_order_acq_rel);
  return *this;
}

TablePinSlot::~TablePinSlot() { delete pin_.load(std::memory_order_acquire); }

TableCache::TableRef::TableRef(TableRef&& other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)) {}

TableCache::TableRef& TableCache::TableRef::operator=(
    TableRef&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cache_->Release(handle_);
    cache_ = std::exchange(other.cache_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

TableCache::TableRef::~TableRef() {
  if (handle_ != nullptr) cache_->Release(handle_);
}

const Table& TableCache::TableRef::table() const {
  return *static_cast<OpenTable*>(cache_->Value(handle_))->table;
}

TableCache::TableCache(std::string dbname, const Options& options,
                       const InternalKeyComparator* icmp, Cache* block_cache,
                       int max_open_tables)
    : dbname_(std::move(dbname)),
      max_pinned_tables_(static_cast<size_t>(max_open_tables)),
      read_mode_(ReadModeOf(options)),
      env_(options.env),
      user_comparator_(icmp->user_comparator()),
      table_options_(MakeTableOptions(options, icmp, block_cache)),
      cache_(NewLRUCache(static_cast<size_t>(max_open_tables))) {}

TableCache::~TableCache() = default;

TableOptions TableCache::MakeTableOptions(const Options& options,
                                          const InternalKeyComparator* icmp,
                                          Cache* block_cache) {
  TableOptions t;
  t.comparator = icmp;
  // The filter covers user keys: a lookup at any snapshot hashes the same.
  t.filter_key = &ExtractUserKey;
  // Iteration bounds are user keys.
  t.user_key = &ExtractUserKey;
  t.seek_key = [](std::string_view user_key, std::string* dst) {
    AppendInternalKey(dst, user_key, kMaxSequenceNumber, kValueTypeForSeek);
  };
  t.block_size = options.block_size;
  t.block_restart_interval = options.block_restart_interval;
  t.compression = options.compression;
  t.filter_bits_per_key = options.filter_bits_per_key;
  t.filter_kind = options.filter_kind;
  t.prefix_extractor = options.prefix_extractor;
  t.whole_key_filtering = options.whole_key_filtering;
  t.range_filter_bits_per_key = options.range_filter_bits_per_key;
  t.modular_filter = options.filter_memory_limit > 0;
  t.block_cache = block_cache;
  return t;
}

absl::StatusOr<std::unique_ptr<Table>> TableCache::OpenTableFile(
    uint64_t file_number, uint64_t file_size, RandomAccessMode mode) const {
  const std::string fname = TableFileName(dbname_, file_number);
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
      env_->NewRandomAccessFile(fname, mode);
  if (!file.ok()) {
    // A table a version names is missing: damage, never "key not found".
    if (absl::IsNotFound(file.status())) {
      return absl::DataLossError(absl::StrCat(fname, ": table missing (",
                                              file.status().message(), ")"));
    }
    return file.status();
  }
  if (filter_units_at_open_ == nullptr) {
    return Table::Open(table_options_, *std::move(file), file_size, fname);
  }
  return Table::Open(table_options_, *std::move(file), file_size, fname,
                     [&](const ModularHeader& header) {
                       return filter_units_at_open_(file_number, header);
                     });
}

absl::StatusOr<TableCache::TableRef> TableCache::FindTable(uint64_t file_number,
                                                           uint64_t file_size) {
  return FindOrOpen(file_number, file_size, nullptr);
}

absl::StatusOr<TableCache::TableRef> TableCache::FindOrOpen(
    uint64_t file_number, uint64_t file_size, bool* opened) {
  const CacheKey key(file_number);
  if (Cache::Handle* h = cache_->Lookup(key.view()); h != nullptr) {
    return TableRef(cache_.get(), h);
  }
  if (opened != nullptr) *opened = true;
  // Two threads missing at once both open the table; the second Insert
  // replaces the first entry, which is closed when its users let go.
  absl::StatusOr<std::unique_ptr<Table>> table =
      OpenTableFile(file_number, file_size, read_mode_);
  if (!table.ok()) return table.status();

  auto entry = std::make_unique<OpenTable>();
  entry->table = *std::move(table);
  entry->usage = &usage_;
  entry->filter_bytes = entry->table->FilterMemoryUsage();
  entry->index_bytes = entry->table->IndexMemoryUsage();
  usage_.filter_bytes.fetch_add(entry->filter_bytes.load(),
                                std::memory_order_relaxed);
  usage_.index_bytes.fetch_add(entry->index_bytes, std::memory_order_relaxed);
  usage_.open_tables.fetch_add(1, std::memory_order_relaxed);
  Cache::Handle* h =
      cache_->Insert(key.view(), entry.release(), 1, &DeleteOpenTable);
  return TableRef(cache_.get(), h);
}

absl::StatusOr<const Table*> TableCache::GetTable(const FileMetaData& file,
                                                  TableRef* ref, PinHint hint,
                                                  ReadStats* stats) {
  if (const TablePinSlot::Pin* pin =
          file.pin.pin_.load(std::memory_order_acquire);
      pin != nullptr) {
    return &pin->ref.table();
  }
  bool opened = false;
  absl::StatusOr<TableRef> found =
      FindOrOpen(file.number, file.file_size, &opened);
  if (!found.ok()) return found.status();
  if (opened && stats != nullptr) ++stats->table_loads;
  // Places a last-level table may not take: one per upper-level table (the
  // policy in the header). A pin is never taken back (a reader may use the
  // table through it without holding a reference), so places for upper
  // tables are kept free up front rather than reclaimed later.
  const size_t reserved =
      hint.last_level ? std::min(hint.upper_level_tables, max_pinned_tables_)
                      : 0;
  // Reserve a place among the pinned tables; give it back if full.
  if (usage_.pinned_tables.fetch_add(1, std::memory_order_relaxed) >=
      max_pinned_tables_ - reserved) {
    usage_.pinned_tables.fetch_sub(1, std::memory_order_relaxed);
    *ref = *std::move(found);
    return &ref->table();
  }
  auto pin = std::make_unique<TablePinSlot::Pin>(*std::move(found),
                                                 &usage_.pinned_tables);
  TablePinSlot::Pin* expected = nullptr;
  if (file.pin.pin_.compare_exchange_strong(expected, pin.get(),
                                            std::memory_order_acq_rel)) {
    const Table* table = &pin.release()->ref.table();
    file.pin.table_.store(table, std::memory_order_release);
    return table;
  }
  // Another reader pinned it first; ours is released with `pin`.
  return &expected->ref.table();
}

absl::Status TableCache::Get(
    const ReadOptions& options, const FileMetaData& file,
    std::string_view internal_key,
    absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
    ReadStats* stats) {
  TableRef ref;
  absl::StatusOr<const Table*> table = GetTable(file, &ref);
  if (!table.ok()) return table.status();
  return (*table)->Get(options, internal_key, handle, stats);
}

absl::Status TableCache::Get(
    const ReadOptions& options, uint64_t file_number, uint64_t file_size,
    std::string_view internal_key,
    absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
    ReadStats* stats) {
  absl::StatusOr<TableRef> ref = FindTable(file_number, file_size);
  if (!ref.ok()) return ref.status();
  return ref->table().Get(options, internal_key, handle, stats);
}

std::unique_ptr<Iterator> TableCache::NewIterator(const ReadOptions& options,
                                                  uint64_t file_number,
                                                  uint64_t file_size,
                                                  ReadStats* stats) {
  if (read_mode_ == RandomAccessMode::kDirect && !options.fill_cache) {
    // A one-pass read (a compaction input): direct reads would cost a device
    // read per block, and nothing it reads is kept. Its own buffered table
    // lets the kernel read ahead; the page cache drops the pages when the
    // compacted file is deleted.
    absl::StatusOr<std::unique_ptr<Table>> table =
        OpenTableFile(file_number, file_size, RandomAccessMode::kBuffered);
    if (!table.ok()) return NewEmptyIterator(table.status());
    const Table& t = **table;
    return std::make_unique<TableHoldingIterator<std::unique_ptr<Table>>>(
        *std::move(table), t, options, stats);
  }
  absl::StatusOr<TableRef> ref = FindTable(file_number, file_size);
  if (!ref.ok()) return NewEmptyIterator(ref.status());
  const Table& t = ref->table();
  return IteratorOver(*std::move(ref), t, options, stats,
                      table_options_.prefix_extractor.get(), user_comparator_);
}

std::unique_ptr<Iterator> TableCache::NewIterator(const ReadOptions& options,
                                                  const FileMetaData& file,
                                                  ReadStats* stats,
                                                  const PinHint* pin_hint) {
  const PrefixExtractor* const prefix_extractor =
      table_options_.prefix_extractor.get();
  if (read_mode_ == RandomAccessMode::kDirect && !options.fill_cache) {
    return NewIterator(options, file.number, file.file_size, stats);
  }
  TableRef ref;
  const Table* table = file.pin.table();
  if (table == nullptr) {
    if (pin_hint == nullptr) {
      return NewIterator(options, file.number, file.file_size, stats);
    }
    // Iterators never counted table loads; GetTable is not asked to either.
    absl::StatusOr<const Table*> found =
        GetTable(file, &ref, *pin_hint, /*stats=*/nullptr);
    if (!found.ok()) return NewEmptyIterator(found.status());
    table = *found;
  }
  if (!ref.valid()) {  // pinned in `file`
    return IteratorOver(Unheld{}, *table, options, stats, prefix_extractor,
                        user_comparator_);
  }
  return IteratorOver(std::move(ref), *table, options, stats, prefix_extractor,
                      user_comparator_);
}

TableCache::TableRef TableCache::LookupOpenTable(uint64_t file_number) const {
  Cache::Handle* h = cache_->Lookup(CacheKey(file_number).view());
  if (h == nullptr) return TableRef();
  return TableRef(cache_.get(), h);
}

void TableCache::Evict(uint64_t file_number) {
  cache_->Erase(CacheKey(file_number).view());
}

size_t TableCache::FilterMemoryUsage() const {
  return usage_.filter_bytes.load(std::memory_order_relaxed);
}

size_t TableCache::IndexMemoryUsage() const {
  return usage_.index_bytes.load(std::memory_order_relaxed);
}

size_t TableCache::NumOpenTables() const {
  return usage_.open_tables.load(std::memory_order_relaxed);
}

TableCache::FilterBytes TableCache::FilterMemoryUsageOf(
    uint64_t file_number) const {
  Cache::Handle* h = cache_->Lookup(CacheKey(file_number).view());
  if (h == nullptr) return {};
  const auto* open = static_cast<OpenTable*>(cache_->Value(h));
  const FilterBytes bytes{open->filter_bytes.load(),
                          open->table->RangeFilterMemoryUsage()};
  cache_->Release(h);
  return bytes;
}

void TableCache::SetFilterUnitsAtOpen(
    std::function<uint32_t(uint64_t, const ModularHeader&)> units) {
  filter_units_at_open_ = std::move(units);
}

absl::Status TableCache::SetFilterUnits(uint64_t file_number, uint32_t target,
                                        RetiredMemory* retired,
                                        ReadStats* stats) {
  Cache::Handle* h = cache_->Lookup(CacheKey(file_number).view());
  if (h == nullptr) return absl::OkStatus();
  auto* open = static_cast<OpenTable*>(cache_->Value(h));
  const Table& table = *open->table;
  absl::Status s;
  if (const ModularBloomReader* filter = table.modular_filter();
      filter != nullptr) {
    target = std::min(target, filter->num_units());
    const size_t before = table.FilterMemoryUsage();
    // Without an epoch, loads only: the table open now may not be the one
    // the caller chose for (evicted, then opened again by a read with more
    // units), and dropped memory needs an epoch to wait in.
    while (retired != nullptr && filter->resident_units() > target) {
      retired->Retire(table.DropFilterUnit());
    }
    while (s.ok() && filter->resident_units() < target) {
      s = table.LoadFilterUnit(stats);
    }
    const size_t after = table.FilterMemoryUsage();
    open->filter_bytes.fetch_add(after - before, std::memory_order_relaxed);
    usage_.filter_bytes.fetch_add(after - before, std::memory_order_relaxed);
  }
  cache_->Release(h);
  return s;
}

}  // namespace sift
