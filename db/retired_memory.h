#ifndef SIFT_DB_RETIRED_MEMORY_H_
#define SIFT_DB_RETIRED_MEMORY_H_

// Memory that readers may still be using, freed once they cannot be.
//
// A filter unit dropped from a table (db/filter_residency.h) stops being
// consulted by every probe that starts afterwards, but a probe already under
// way may still read its words. Every probe of a table's filter happens
// inside a read that holds a Version (a Get's or MultiGet's SuperVersion,
// an iterator's version), so memory retired while version V is current can
// be freed once V and every version before it are gone: a read that started
// before the drop holds one of them.
//
// Each Version holds its epoch; each epoch holds the next version's epoch.
// So an epoch, and what was retired into it, lives while its version or any
// older one lives, and epochs go in the order their versions were made.
//
// Thread safety: Retire is safe for concurrent use; SetNext is called once,
// under the mutex that installs versions.

#include <memory>
#include <mutex>
#include <vector>

#include "filter/aligned_words.h"

namespace sift {

class RetiredMemory {
 public:
  RetiredMemory() = default;
  RetiredMemory(const RetiredMemory&) = delete;
  RetiredMemory& operator=(const RetiredMemory&) = delete;
  // Frees what was retired here, then lets go of the next epoch. A chain of
  // epochs whose only holder is this one goes in a loop, not by recursion
  // (an iterator held across many compactions holds a long chain).
  ~RetiredMemory();

  // Keep `memory` until this epoch ends.
  void Retire(std::unique_ptr<AlignedWords> memory);
  // The epoch of the version installed after this one's.
  void SetNext(std::shared_ptr<RetiredMemory> next) { next_ = std::move(next); }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<AlignedWords>> retired_;  // guarded by mu_
  std::shared_ptr<RetiredMemory> next_;
};

}  // namespace sift

#endif  // SIFT_DB_RETIRED_MEMORY_H_
