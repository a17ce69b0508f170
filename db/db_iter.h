#ifndef SIFT_DB_DB_ITER_H_
#define SIFT_DB_DB_ITER_H_

#include <memory>
#include <vector>

#include "db/dbformat.h"
#include "db/memtable.h"
#include "db/super_version.h"
#include "db/version.h"
#include "sift/iterator.h"
#include "sift/options.h"

namespace sift {

// Where a DB iterator reports a table whose seek budget its seeks spent
// (Version::RecordSeek), so that the table is compacted into the next level.
// Called without any lock held; implementations take what they need.
class SeekCompactionSink {
 public:
  virtual void RequestSeekCompaction(Version::SeekCharge charge) = 0;

 protected:
  ~SeekCompactionSink() = default;
};

// What a DB iterator reads from and must keep alive: the memtables and the
// version its internal iterators point into. Held by shared_ptr, so a flush
// or compaction that retires them while the iterator lives frees nothing the
// iterator still uses.
struct IteratorPins {
  std::shared_ptr<MemTable> mem;
  std::shared_ptr<MemTable> imm;  // may be null
  std::shared_ptr<const Version> version;
  // Where the iterator's counters (its seeks, and the block reads of the
  // tables below an iterator NewDBIterator builds) are added when it is
  // destroyed; null: they are not published.
  SuperVersionPublisher* publisher = nullptr;
  // Told of the tables whose seek budget the iterator's seeks spent; null:
  // seeks are not charged.
  SeekCompactionSink* seek_sink = nullptr;
  // The database's Options::prefix_extractor, for
  // ReadOptions::prefix_same_as_start; null (or no mem or version) turns
  // that option off.
  std::shared_ptr<const PrefixExtractor> prefix_extractor;
  // Where the levels of an internal iterator given to NewDBIterator report
  // deferred positions (db/level_iterator.h); null: they take none. Not
  // owned; outlives the iterator. An iterator NewDBIterator builds itself
  // takes deferred positions and keeps their record inside.
  DeferredPositions* deferred = nullptr;
};

// The merge of pins' memtables and version's tables (Version::AddIterators)
// within options' iteration bounds, yielding internal keys in `icmp` order;
// table block reads are counted into *stats (nullable), and the levels
// report deferred positions to *deferred (null: they take none).
// REQUIRES: pins.mem and pins.version are set; the pins, *icmp, *stats and
// *deferred outlive the iterator.
std::unique_ptr<Iterator> NewInternalIterator(const InternalKeyComparator* icmp,
                                              const IteratorPins& pins,
                                              const ReadOptions& options,
                                              ReadStats* stats,
                                              DeferredPositions* deferred);

// The user-facing iterator: turns a sorted stream of internal keys (a merge
// of memtables and tables) into the user keys visible at `sequence`. For each
// user key it yields only the newest entry with sequence <= `sequence`, and
// nothing at all if that entry is a deletion.
//
// `internal` must yield internal keys in `icmp` order; `pins` keep its
// sources alive and are released after it. `icmp` is not owned and must
// outlive the iterator. Of `options`, the iteration bounds are kept (as
// views: see ReadOptions) and no key outside them is yielded. With
// options.prefix_same_as_start and pins.prefix_extractor, a Seek to a key in
// the extractor's domain replaces `internal` by NewInternalIterator(icmp,
// pins, ...) with the bounds narrowed to the key's prefix, so that tables
// whose prefix filter rules the prefix out are left out of the merge; a
// later SeekToFirst, SeekToLast or Seek outside the domain goes back to
// options' own bounds.
//
// Thread safety: not safe for concurrent use.
std::unique_ptr<Iterator> NewDBIterator(const InternalKeyComparator* icmp,
                                        std::unique_ptr<Iterator> internal,
                                        SequenceNumber sequence,
                                        const ReadOptions& options,
                                        IteratorPins pins);

// The DB's own iterator: as above over NewInternalIterator(icmp, pins,
// options, ...), built in place, with the block reads of its tables counted
// and deferred positions taken (pins.deferred is not used). One allocation
// fewer per part than building the merge first: an iterator is made per
// scan, and for short scans its making is a good part of their cost.
std::unique_ptr<Iterator> NewDBIterator(const InternalKeyComparator* icmp,
                                        SequenceNumber sequence,
                                        const ReadOptions& options,
                                        IteratorPins pins);

}  // namespace sift

#endif  // SIFT_DB_DB_ITER_H_
