#ifndef SIFT_DB_GLOBAL_SEQNO_H_
#define SIFT_DB_GLOBAL_SEQNO_H_

// Tables with a global sequence number: an ingested table
// (DB::IngestExternalFiles) stores every entry at sequence 0 and the MANIFEST
// gives the whole file one sequence number, FileMetaData::global_seqno
// (doc/manifest_format.md). This is the one place that turns the stored key
// trailers into the real ones; every read of such a table goes through it.

#include <memory>
#include <string_view>

#include "db/dbformat.h"
#include "db/table_cache.h"
#include "db/version_edit.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "util/coding.h"

namespace sift {

// An iterator over `table_iter`'s entries with every key's sequence replaced
// by `global_seqno` (types kept). REQUIRES: `table_iter` yields internal keys
// with at most one entry per user key, in internal-key order (a table
// written by TableFileWriter), so the rewritten keys keep that order;
// global_seqno <= kMaxSequenceNumber. A malformed key is reported through
// status() and ends the iteration.
std::unique_ptr<Iterator> NewGlobalSeqnoIterator(
    std::unique_ptr<Iterator> table_iter, SequenceNumber global_seqno);

// An iterator over the table of `file` through `table_cache` (which must
// outlive it, as must `file`), with file.global_seqno applied when it is
// set; block reads counted into *stats (nullable, outlives it) as
// Table::NewIterator says. A table pinned in `file` is read without a cache
// lookup; with `pin_hint` (nullable) one not pinned yet may be pinned
// (TableCache::NewIterator).
std::unique_ptr<Iterator> NewTableFileIterator(
    TableCache* table_cache, const ReadOptions& options,
    const FileMetaData& file, ReadStats* stats = nullptr,
    const TablePinHint* pin_hint = nullptr);

// Whether a read at `sequence` may see any entry of `file`: false only for a
// file with a global sequence number above it (ingested after the snapshot).
inline bool FileVisibleAt(const FileMetaData& file, SequenceNumber sequence) {
  return file.global_seqno <= sequence;
}

// The sequence a lookup of `key` reads at.
inline SequenceNumber LookupSequence(const LookupKey& key) {
  const std::string_view ikey = key.internal_key();
  return DecodeFixed64(ikey.data() + ikey.size() - 8) >> 8;
}

}  // namespace sift

#endif  // SIFT_DB_GLOBAL_SEQNO_H_
