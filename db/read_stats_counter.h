#ifndef SIFT_DB_READ_STATS_COUNTER_H_
#define SIFT_DB_READ_STATS_COUNTER_H_

#include <atomic>
#include <cstdint>

#include "sift/read_stats.h"

namespace sift {

// DB-wide read counters. Each Get counts into a local ReadStats and adds it
// here once, so concurrent readers touch these shared cache lines once per
// Get rather than once per table probed.
//
// Thread safety: safe for concurrent use. A Snapshot taken while Gets run may
// mix counters from before and after a Get (each counter is exact on its
// own).
class ReadStatsCounter {
 public:
  void Add(const ReadStats& s) {
    Bump(gets_, s.gets);
    Bump(memtable_hits_, s.memtable_hits);
    Bump(tables_probed_, s.tables_probed);
    Bump(filter_negatives_, s.filter_negatives);
    Bump(filter_positives_, s.filter_positives);
    Bump(filter_false_positives_, s.filter_false_positives);
    Bump(block_cache_hits_, s.block_cache_hits);
    Bump(block_reads_, s.block_reads);
    Bump(bytes_read_, s.bytes_read);
  }

  ReadStats Snapshot() const {
    ReadStats s;
    s.gets = gets_.load(std::memory_order_relaxed);
    s.memtable_hits = memtable_hits_.load(std::memory_order_relaxed);
    s.tables_probed = tables_probed_.load(std::memory_order_relaxed);
    s.filter_negatives = filter_negatives_.load(std::memory_order_relaxed);
    s.filter_positives = filter_positives_.load(std::memory_order_relaxed);
    s.filter_false_positives =
        filter_false_positives_.load(std::memory_order_relaxed);
    s.block_cache_hits = block_cache_hits_.load(std::memory_order_relaxed);
    s.block_reads = block_reads_.load(std::memory_order_relaxed);
    s.bytes_read = bytes_read_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  static void Bump(std::atomic<uint64_t>& counter, uint64_t n) {
    if (n != 0) counter.fetch_add(n, std::memory_order_relaxed);
  }

  std::atomic<uint64_t> gets_{0};
  std::atomic<uint64_t> memtable_hits_{0};
  std::atomic<uint64_t> tables_probed_{0};
  std::atomic<uint64_t> filter_negatives_{0};
  std::atomic<uint64_t> filter_positives_{0};
  std::atomic<uint64_t> filter_false_positives_{0};
  std::atomic<uint64_t> block_cache_hits_{0};
  std::atomic<uint64_t> block_reads_{0};
  std::atomic<uint64_t> bytes_read_{0};
};

}  // namespace sift

#endif  // SIFT_DB_READ_STATS_COUNTER_H_
