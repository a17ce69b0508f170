#ifndef SIFT_DB_LEVEL_ITERATOR_H_
#define SIFT_DB_LEVEL_ITERATOR_H_

// The iterator over one level >= 1: its tables, sorted and disjoint, as one
// sequence, each table opened through the table cache only when needed.
//
// Deferred positions. A Seek whose target is at or before a table's first
// key (its FileMetaData::smallest, which is exactly the first internal key
// the table holds) lands on that key without opening the table or reading a
// block: key() is the MANIFEST's copy. So does SeekToFirst, and Next moving
// into the next table. The table is opened, and positioned at its first
// entry, only when the position is used: value(), Next() or Prev(). A
// merge over several levels positions every level at each Seek but steps
// only the smallest, so a level whose next key lies beyond what a scan
// reads costs no block (a Seek on a tree with a partial last level read a
// block there for nothing, and twice the blocks per Seek of a tree without
// one).
//
// A deferred position is taken only where the table must yield exactly its
// smallest key: when deferring is asked for and the key is inside options'
// lower bound (tables that start past the upper bound are not in the range at
// all). Then a prefix or range filter cannot rule the table out (its first
// key is inside the bounds), so opening it finds that key; if it does not
// (a table whose first key differs from the MANIFEST's), the iterator stops
// with a DataLossError.
//
// value() of a deferred position opens the table: the interface makes it
// const, so the state it changes is mutable. If opening fails, value() is
// empty, and the error is recorded in the DeferredPositions the iterator
// reports to (as well as in status(), from its next step on). DBIter
// (db/db_iter.h) reads the value as soon as it lands on an entry it will
// yield while any position is deferred, and checks that record, so the DB's
// iterators never show a value that could not be read; and while none is,
// it pays nothing per entry for the check.
//
// Errors stop the iteration (sticky), as NewTwoLevelIterator's do: from then
// on !Valid() and status() reports the first error.
//
// Thread safety: not safe for concurrent use (as any Iterator).

#include <cstddef>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "db/dbformat.h"
#include "db/level_bounds.h"
#include "db/table_cache.h"
#include "db/version_edit.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/read_stats.h"

namespace sift {

// What the level iterators under one DB iterator tell it (they and it run
// on one thread): how many of them hold a deferred position now, and the
// first error met opening one from value().
struct DeferredPositions {
  int count = 0;
  absl::Status error;
};

// Iterates files[begin, end). REQUIRES: files[begin, end) sorted and
// disjoint; `files` (not copied), `table_cache`, `icmp`, *stats (nullable)
// and the bounds' bytes in `options` outlive the iterator. `deferred`:
// take deferred positions and report them there (null: never defer, as
// compaction, which reads every value, wants); it must outlive the iterator.
// `pin_hint`: where the level stands in its version, so that the tables it
// opens may be pinned (TableCache::GetTable); none: tables are found in the
// cache unless pinned already (compaction's inputs are about to go).
// `bounds`: built (LevelBounds::Build) from exactly `files`, which Seek then
// searches by their windows rather than by key compares; it must outlive the
// iterator. Null: Seek compares keys.
std::unique_ptr<Iterator> NewLevelIterator(
    TableCache* table_cache, const InternalKeyComparator* icmp,
    const ReadOptions& options, const FileList& files, size_t begin, size_t end,
    ReadStats* stats, DeferredPositions* deferred,
    std::optional<TablePinHint> pin_hint = std::nullopt,
    const LevelBounds* bounds = nullptr);

}  // namespace sift

#endif  // SIFT_DB_LEVEL_ITERATOR_H_
