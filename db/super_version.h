#ifndef SIFT_DB_SUPER_VERSION_H_
#define SIFT_DB_SUPER_VERSION_H_

#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "db/memtable.h"
#include "db/version.h"
#include "sift/read_stats.h"
#include "util/mutex.h"

namespace sift {

// What a point read consults, pinned together: the active memtable, the
// immutable one (nullable) and the version. Immutable once published.
struct SuperVersion {
  std::shared_ptr<MemTable> mem;
  std::shared_ptr<MemTable> imm;
  std::shared_ptr<const Version> version;
};

// Hands the current SuperVersion to point reads without the DB mutex and
// without touching a cache line another reader writes, and keeps their
// ReadStats per thread.
//
// Each thread that reads gets a slot of its own (a small struct with its own
// mutex, which only that thread and the rare Install/Total calls take). The
// slot caches a reference to the SuperVersion it last used and the
// generation it was current in. A read whose slot's generation equals the
// published one uses the cached reference: the common path is one
// uncontended lock of the thread's own slot and one load of the (read-mostly)
// generation. Otherwise it copies the current SuperVersion under the DB mutex.
//
// Install publishes a new SuperVersion, bumps the generation and drops the
// stale references that idle slots hold (with try_lock, never waiting for a
// read), so an idle thread does not keep old memtables and obsolete tables
// alive; a slot busy at that moment drops its stale reference on its next
// read.
//
// Lock order: DB mutex, then the slot registry's mutex, then a slot's mutex.
// A reader never holds its slot's mutex while it waits for the DB mutex.
//
// Thread safety: safe for concurrent use. The destructor must not run while
// a read is in progress (as for the DB itself).
class SuperVersionPublisher {
 public:
  SuperVersionPublisher();
  SuperVersionPublisher(const SuperVersionPublisher&) = delete;
  SuperVersionPublisher& operator=(const SuperVersionPublisher&) = delete;
  // Drops every slot's reference: the memtables and versions go before the
  // table cache they point into.
  ~SuperVersionPublisher();

  // Publish `sv`. REQUIRES: *db_mutex held (it serializes Installs and
  // guards current()).
  void Install(std::shared_ptr<const SuperVersion> sv);

  // The published SuperVersion. REQUIRES: the DB mutex held.
  const std::shared_ptr<const SuperVersion>& current() const {
    return current_;
  }

  struct Slot;

  // The calling thread's hold on the current SuperVersion for one read,
  // from construction to destruction; stats added with AddStats count
  // towards Total(). Lives on the reader's stack; the thread must not start
  // another Lease on the same publisher while it holds one.
  class Lease {
   public:
    // `db_mutex` (the mutex Install is called under) is taken only when the
    // thread's cached SuperVersion is stale.
    // REQUIRES: db_mutex not held by the caller.
    Lease(SuperVersionPublisher* publisher, Mutex* db_mutex);
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    const SuperVersion& operator*() const { return *sv_; }
    const SuperVersion* operator->() const { return sv_; }
    void AddStats(const ReadStats& stats);

   private:
    Slot* const slot_;
    const SuperVersion* sv_;
  };

  // Add `stats` to the calling thread's share of Total(), outside a read
  // (an iterator's counts, when it is destroyed).
  // REQUIRES: the calling thread holds no Lease on this publisher.
  void AddStats(const ReadStats& stats);

  // The sum of every thread's stats, including threads that have exited.
  ReadStats Total() const;

  struct Registry;

 private:
  // The calling thread's slot, registered on first use.
  Slot* ThisThreadSlot();

  // Shared with the threads' slot tables, which outlive the publisher.
  const std::shared_ptr<Registry> registry_;
  std::shared_ptr<const SuperVersion> current_;
};

}  // namespace sift

#endif  // SIFT_DB_SUPER_VERSION_H_
