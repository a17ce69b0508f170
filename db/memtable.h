#ifndef SIFT_DB_MEMTABLE_H_
#define SIFT_DB_MEMTABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "db/dbformat.h"
#include "db/memtable_filter.h"
#include "filter/filter.h"
#include "sift/iterator.h"

namespace sift {

// The in-memory table of recent writes: a skiplist of internal keys over an
// arena. Shared through std::shared_ptr: the DB holds the active and the
// immutable memtable, and every reader or iterator holds a reference for as
// long as it reads.
//
// Thread safety: one writer at a time (the DB's write path, which serializes
// Add calls) and any number of concurrent readers, without locks on reads.
class MemTable {
 public:
  // `comparator` is not owned and must outlive the memtable. With
  // `filter_bytes` > 0 the memtable keeps a filter of about that size over its
  // user keys (MemTableFilter), and a Get of a key it does not hold usually
  // skips the skiplist search.
  explicit MemTable(const InternalKeyComparator& comparator,
                    size_t filter_bytes = 0);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;
  ~MemTable();

  // Bytes of memory in use (arena + index); grows as entries are added.
  size_t ApproximateMemoryUsage() const;
  uint64_t NumEntries() const;

  // Iterator over internal keys and values, in internal-key order. Sees every
  // entry added before it was created. REQUIRES: the memtable outlives it.
  std::unique_ptr<Iterator> NewIterator() const;

  // Add user key -> value at `seq` (value is empty for deletions).
  // REQUIRES: no concurrent Add; (key, seq) not added before.
  void Add(SequenceNumber seq, ValueType type, std::string_view key,
           std::string_view value);

  // The newest entry for key.user_key() with sequence <= the lookup's:
  //   a value  -> *value set, *s OK, returns true;
  //   deletion -> *s NotFound, returns true;
  //   nothing  -> returns false.
  bool Get(const LookupKey& key, std::string* value, absl::Status* s) const;
  // As above, with the filter hash of key.user_key() shared with the other
  // filters the lookup probes. REQUIRES: `filter_key` hashes key.user_key().
  // The filter test is inline: most lookups of a key the memtable does not
  // hold end there, and a call costs them about as much as the test.
  bool Get(const LookupKey& key, FilterKeyHash* filter_key, std::string* value,
           absl::Status* s) const {
    if (filter_ != nullptr && !filter_->MayContain(filter_key)) return false;
    return Search(key, value, s);
  }
  // Start loading the memtable filter line Get will read for `filter_key`
  // (a hint; nothing without a filter). Same REQUIRES.
  void PrefetchFilter(FilterKeyHash* filter_key) const {
    if (filter_ != nullptr) filter_->Prefetch(filter_key);
  }

 private:
  struct Rep;

  // Get without the filter: the skiplist search.
  bool Search(const LookupKey& key, std::string* value, absl::Status* s) const;

  std::unique_ptr<Rep> rep_;
  // rep_'s filter (nullptr: none), set at construction and fixed for the
  // memtable's life; kept here so that Get tests it without a call.
  const MemTableFilter* const filter_;
};

}  // namespace sift

#endif  // SIFT_DB_MEMTABLE_H_
