#ifndef SIFT_DB_SEEK_BUDGET_H_
#define SIFT_DB_SEEK_BUDGET_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace sift {

// How many iterator seeks may pay for a table before it is worth compacting
// into the next level (Version::RecordSeek, VersionSet::PickCompaction).
//
// Point reads skip a table on its filter, so an extra run costs them almost
// nothing; an iterator has no filter and reads a block of every run whose
// range holds the sought key. A seek that finds its key inside two or more
// runs charges the first (shallowest) of them. Compacting a table of S bytes
// one level down rewrites it and the roughly ten times larger overlap below:
// about 22 S bytes read and written. One wasted block read per seek costs
// about as much as compacting 16 KiB (the rule LevelDB has kept since 2011:
// a disk seek against about 40 KiB of compaction I/O, halved to act early),
// so a table may be charged S / 16 KiB seeks, and at least kMinSeeks, before
// it is compacted.
//
// A copy of a FileMetaData starts a fresh budget: a table moved to another
// level is charged anew there, as the shared FileMetaData that versions point
// to is the one counted.
//
// Thread safety: Charge is safe to call concurrently (readers of any version
// holding the file); copying is not (done while a FileMetaData is built).
class SeekBudget {
 public:
  static constexpr uint64_t kBytesPerSeek = 16 * 1024;
  static constexpr uint64_t kMinSeeks = 100;

  SeekBudget() = default;
  SeekBudget(const SeekBudget& /*other*/) {}
  SeekBudget& operator=(const SeekBudget& /*other*/) {
    charged_.store(0, std::memory_order_relaxed);
    return *this;
  }

  static uint64_t Allowed(uint64_t file_size) {
    return std::max(kMinSeeks, file_size / kBytesPerSeek);
  }

  // Charges one seek to a table of `file_size` bytes. True once the budget
  // is spent: from the seek that spends its last and on, so that a request
  // for the table's compaction that could not be taken then (another was
  // pending) is made again by a later seek.
  bool Charge(uint64_t file_size) const {
    return charged_.fetch_add(1, std::memory_order_relaxed) + 1 >=
           Allowed(file_size);
  }

  uint64_t charged() const { return charged_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint64_t> charged_{0};
};

}  // namespace sift

#endif  // SIFT_DB_SEEK_BUDGET_H_
