#ifndef SIFT_INCLUDE_SIFT_DB_H_
#define SIFT_INCLUDE_SIFT_DB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/read_stats.h"
#include "sift/write_batch.h"

namespace sift {

// A consistent read-only view of a DB at one moment. Obtained from
// DB::GetSnapshot and handed back with DB::ReleaseSnapshot; owned by the DB.
class Snapshot {
 protected:
  virtual ~Snapshot() = default;
};

// A range of user keys for DB::GetApproximateSizes: [start, limit), start
// included, limit excluded, in bytewise order. A range with start >= limit is
// empty. The views need only live for the call they are passed to.
struct KeyRange {
  std::string_view start;
  std::string_view limit;
};

// A persistent ordered map from keys to values (both arbitrary byte strings,
// ordered bytewise).
//
// Thread safety: a DB is safe for concurrent use by many threads without
// external locking. Writers are queued and committed in groups; readers never
// wait for flushes or compactions. Iterators and WriteBatches handed out or
// taken in are not themselves thread-safe.
//
// Only one process may have a database open at a time (a LOCK file enforces
// it). Destroying the DB object closes the database; it waits for background
// work to stop.
class DB {
 public:
  // Open the database in directory `path`. Fails with a status a program can
  // act on, and a message naming the file or field:
  //   absl::InvalidArgumentError   an option outside its REQUIRES range
  //                                (sift/options.h); the database is missing
  //                                and !options.create_if_missing; it exists
  //                                and options.error_if_exists;
  //   absl::FailedPreconditionError  the database is open already: its LOCK is
  //                                held by another DB object of this process
  //                                (under any spelling of `path`) or by
  //                                another process;
  //   absl::PermissionDeniedError  a file or directory of the database cannot
  //                                be read or written by this process;
  //   absl::DataLossError          the database is damaged;
  //   absl::UnavailableError, absl::InternalError  other I/O failures.
  static absl::StatusOr<std::unique_ptr<DB>> Open(const Options& options,
                                                  const std::string& path);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  virtual ~DB() = default;

  // Set key to value. A failed write (I/O error) makes the DB read-only:
  // every later write returns that error.
  virtual absl::Status Put(const WriteOptions& options, std::string_view key,
                           std::string_view value) = 0;

  // Remove key, if present. Not an error if it is absent.
  virtual absl::Status Delete(const WriteOptions& options,
                              std::string_view key) = 0;

  // Apply all of `updates` atomically.
  // REQUIRES: updates != nullptr. The batch is not modified.
  virtual absl::Status Write(const WriteOptions& options,
                             WriteBatch* updates) = 0;

  // Store the value of key in *value. absl::NotFoundError (absl::IsNotFound)
  // if it is absent; absl::DataLossError if the data read is damaged.
  // REQUIRES: value != nullptr
  virtual absl::Status Get(const ReadOptions& options, std::string_view key,
                           std::string* value) = 0;

  // Look up every key of `keys` at once. Returns one status per key, in
  // input order, and resizes *values to keys.size(): (*values)[i] and the
  // i-th status are what Get(options, keys[i], ...) would give (OK with the
  // value, NotFound, DataLoss for damage met by that key's lookup...). All
  // keys are read in one consistent view: options.snapshot if set, else one
  // point in time taken for the whole batch. Duplicate keys and an empty
  // batch are allowed. Faster than a loop of Gets: the batch pins the
  // memtables and version once, sorts the keys, visits each table once for
  // all its keys and overlaps their filters' cache misses. GetReadStats
  // counts each key as one Get.
  // REQUIRES: values != nullptr. The views in `keys` need only live for
  // the call.
  virtual std::vector<absl::Status> MultiGet(
      const ReadOptions& options, absl::Span<const std::string_view> keys,
      std::vector<std::string>* values) = 0;

  // An iterator over the whole database as of options.snapshot (or now), not
  // positioned: call a Seek method first. The iterator sees no later writes.
  // REQUIRES: the DB outlives the iterator.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) = 0;

  // A view of the current state; reads given it see nothing written later.
  // The snapshot is owned by the DB and must be handed back with
  // ReleaseSnapshot before the DB is destroyed.
  virtual const Snapshot* GetSnapshot() = 0;
  // REQUIRES: snapshot came from this DB's GetSnapshot and is not released.
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // Write the memtable to a level-0 table and return once that table is
  // durable and recorded in the MANIFEST. A no-op if the memtable is empty.
  virtual absl::Status Flush() = 0;

  // Compact the tables overlapping the key range [*begin, *end] down the
  // levels. nullptr means open on that side: CompactRange(nullptr, nullptr)
  // compacts everything. Returns when done.
  virtual absl::Status CompactRange(const std::string* begin,
                                    const std::string* end) = 0;

  // Counters of the point-read path since Open. See sift/read_stats.h.
  virtual ReadStats GetReadStats() const = 0;

  // A property of the database as text, or nullopt if the name is unknown:
  //   "sift.stats"                   per-level files, bytes and filter memory
  //                                  (point and range filters, and the range
  //                                  filters' part), plus the read stats
  //                                  and the write stalls
  //   "sift.num-files-at-level<N>"   number of tables at level N
  //   "sift.filter-memory-bytes"     bytes of filters (point and range) held
  //                                  by open tables
  //   "sift.filter-memory-bytes-at-level<N>"  the same for level N's tables
  //   "sift.index-memory-bytes"      bytes of indexes held by open tables
  //   "sift.sstables"                every live table by level
  //   "sift.approximate-memory-usage" memtables + block cache
  //   "sift.bytes-written"           bytes written since Open to WALs and
  //                                  to the tables of flushes and
  //                                  compactions (write amplification =
  //                                  this / user bytes written)
  //   "sift.write-stalls"            what writes waited for since Open,
  //                                  one line per cause ("memtable-flush:
  //                                  <n> stalls, <total> us, longest <us>
  //                                  us"; also level0-slowdown, level0-stop
  //                                  and wal-switch, doc/engine.md "Writes")
  //   "sift.recovery"                what Open's log replay did, one
  //                                  "name: value" line each: logs and
  //                                  records replayed; if damage stopped it
  //                                  (doc/durability.md), the first error,
  //                                  records and bytes left out, and the
  //                                  NNNNNN.log.damaged files kept aside
  virtual std::optional<std::string> GetProperty(std::string_view name) = 0;

  // Add the tables in `paths` (written by TableFileWriter,
  // sift/table_file_writer.h) to the database, atomically: after a crash at
  // any point, either every file of the call is in the database or none is.
  // The whole call gets one sequence number above every write before it, so
  // its values and deletions shadow older entries of the same keys, and
  // snapshots taken before the call do not see them. When the call returns
  // OK, the files and every write acknowledged before it are durable. Each file
  // is copied (or linked, see IngestOptions::move_files) into the database
  // directory and placed at the deepest level where it overlaps no other table;
  // the memtable is flushed first if it holds keys in a file's range. A file
  // whose filter is smaller than the database would give a table of that
  // level is rewritten with a filter of the right size.
  // Errors (the database is left unchanged, the copies removed):
  //   absl::InvalidArgumentError  `paths` is empty, or two files of the call
  //                               overlap in key range, or a file is empty
  //                               or holds keys not written by
  //                               TableFileWriter (naming the file);
  //   absl::DataLossError         a file is not a readable table, or (with
  //                               verify_checksums) a block is damaged;
  //   absl::NotFoundError         a file does not exist;
  //   absl::UnavailableError, absl::InternalError  I/O failures.
  // The caller's files are never removed or modified.
  virtual absl::Status IngestExternalFiles(
      const std::vector<std::string>& paths, const IngestOptions& options) = 0;

  // Make an openable copy of the database in directory `dir` (which must not
  // exist; its parent must) as of one point in time: it holds every write
  // acknowledged before the call, and of the writes racing with the call a
  // prefix in commit order; nothing written after the call returns. Tables
  // are hard-linked where the Env and file system allow (Env::LinkFile) and
  // copied otherwise; the MANIFEST, the live WALs and CURRENT are copied. The
  // checkpoint is durable when the call returns (every copy and `dir` are
  // synced, CURRENT written last) and opens with DB::Open like any database.
  // Writes, flushes and compactions go on during the call; obsolete files
  // are kept until the copies are done. The checkpoint and the database
  // share the linked tables' storage; the engine never modifies a table in
  // place, so each goes on independently.
  // Errors (nothing is left behind: a partial `dir` is removed):
  //   absl::AlreadyExistsError    `dir` exists;
  //   absl::InvalidArgumentError  `dir` is empty;
  //   absl::UnavailableError, absl::InternalError  I/O failures, naming the
  //                               file.
  virtual absl::Status CreateCheckpoint(const std::string& dir) = 0;

  // For each of `ranges`, in input order, the approximate number of bytes
  // of table files that hold keys in [start, limit): what the range takes on
  // disk (compressed, as stored), for sharding and sizing decisions, not an
  // exact count. A table wholly inside the range counts its whole file
  // (data, filter, index); a table the range cuts counts the data blocks
  // between the range's ends, to the granularity of a block, so a range
  // smaller than a block may get 0. Writes still in the memtables are not
  // counted (Flush first to include them); neither are deleted or
  // overwritten entries' bytes subtracted before compaction drops them. A
  // table that cannot be opened (I/O error) counts its whole file if it
  // overlaps the range. An empty range (start >= limit) gets 0.
  // Reads the current version once: all ranges see the same set of tables.
  // Thread safety: safe to call from many threads at once, concurrently
  // with writes, flushes and compactions. Cost: no data block is read; a
  // table the range cuts is asked through its index (in memory once the
  // table is open; a table not open yet is opened, reading its footer,
  // index and filter). A table wholly inside or outside a range is not
  // opened at all.
  virtual std::vector<uint64_t> GetApproximateSizes(
      std::span<const KeyRange> ranges) = 0;
};

// Delete the database in `path` and everything in it. Not an error if it
// does not exist. An open database (under any spelling of `path`) is left
// alone: absl::FailedPreconditionError.
absl::Status DestroyDB(const std::string& path, const Options& options);

// Rebuild the database in `path` when its MANIFEST (or CURRENT) is lost or
// damaged, from the tables and write-ahead logs in the directory, so that
// DB::Open opens it again.
//
// Kept: every table that reads back whole (every block's checksum checked,
// keys in order), and every intact record of every WAL (each WAL is turned
// into level-0 tables; a damaged WAL keeps the records before the damage).
// Where two versions of a key survive, the one with the higher sequence
// number wins, as before the damage. Ingested tables, whose sequence number
// only the MANIFEST held, read as newer than every table numbered below
// them.
// Set aside, never deleted: tables that do not read back whole, WALs that
// are damaged or unreadable, and every old MANIFEST are moved into the
// subdirectory `lost/` of `path`.
// Limits: a WAL whose writes were already in tables but which had not been
// deleted yet is replayed again, so a key deleted since then and compacted
// away may come back (the MANIFEST that said the WAL was obsolete is what
// was lost).
//
// Afterwards a new MANIFEST names the tables and CURRENT points at it
// (replaced atomically), and the database is opened once and compacted over
// its whole key range, which merges the recovered tables by sequence number
// (the cost of a full compaction). What was kept and set aside is appended to
// the LOG file in `path`. Returns OK if the database was rebuilt; NotFound
// if `path` does not exist or holds no tables, WALs or MANIFESTs; the I/O
// error otherwise (the directory is then left as it was, apart from files
// already set aside and tables made from WALs, so a second repair can run).
//
// Thread safety: the database must not be open: RepairDB takes the LOCK file
// and fails with FailedPrecondition if another DB (or process) holds it.
absl::Status RepairDB(const std::string& path, const Options& options);

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_DB_H_
