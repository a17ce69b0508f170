#ifndef SIFT_DB_MEMTABLE_FILTER_H_
#define SIFT_DB_MEMTABLE_FILTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "filter/bloom_probe.h"
#include "filter/filter.h"

namespace sift {

// A blocked Bloom filter over the user keys of one memtable, filled as keys
// are added, so that a lookup of a key the memtable does not hold skips the
// skiplist search (a dozen or more cache misses) for one cache line. The
// layout and probes are the table filters' blocked layout (bloom_probe.h).
//
// Memory ordering: Add sets its bits with relaxed atomic ORs before the entry
// is inserted into the skiplist, and the write path publishes the entry's
// sequence number with a release store after both. A reader reads at a
// sequence it loaded with acquire (or at an older snapshot), so every bit of
// every entry it may see is visible to its relaxed loads: no false
// negatives for visible entries.
//
// Keys are hashed with the table filters' seed (kDefaultFilterSeed), so a
// lookup hashes its key once for the memtables and every table it probes.
//
// Thread safety: one Add at a time (the memtable's single writer), any number
// of concurrent MayContain calls.
class MemTableFilter {
 public:
  // A filter of about `bytes` bytes (rounded up to whole 64-byte lines).
  // REQUIRES: bytes > 0
  explicit MemTableFilter(size_t bytes);
  MemTableFilter(const MemTableFilter&) = delete;
  MemTableFilter& operator=(const MemTableFilter&) = delete;

  void Add(std::string_view user_key);
  bool MayContain(std::string_view user_key) const;
  // REQUIRES: `user_key` hashes a user key (FilterKeyHash of it).
  // The table filters' query, on the live line: the same bits Add sets.
  bool MayContain(FilterKeyHash* user_key) const {
    return BlockedMayContain(user_key->ForSeed(kDefaultFilterSeed), kNumProbes,
                             num_lines_, words_.get());
  }
  // Start loading the line MayContain(user_key) reads (a hint). Same
  // REQUIRES.
  void Prefetch(FilterKeyHash* user_key) const {
    __builtin_prefetch(
        &words_[LineStart(user_key->ForSeed(kDefaultFilterSeed))]);
  }

  size_t MemoryUsage() const { return num_lines_ * 64; }

  // Filter bytes for a memtable of `write_buffer_size` bytes: one bit per
  // four bytes of buffer, so 16 bits per key or more for entries (key, value
  // and skiplist node) of 64 bytes or more, about 0.1% false positives, at
  // 1/32 of the buffer's memory.
  static size_t BytesFor(size_t write_buffer_size) {
    return write_buffer_size / 32;
  }

 private:
  // Probes per key: few enough for the query's fast path (k <= 7), under
  // about 0.1% false positives at 16 bits per key and fewer above.
  static constexpr uint32_t kNumProbes = 6;

  // Index in words_ of the first word of h's line.
  uint64_t LineStart(uint64_t h) const {
    return BlockedLine(h, num_lines_) * kLineWords;
  }

  const uint64_t num_lines_;
  std::unique_ptr<std::atomic<uint64_t>[]> words_;
};

}  // namespace sift

#endif  // SIFT_DB_MEMTABLE_FILTER_H_
