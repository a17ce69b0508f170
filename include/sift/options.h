#ifndef SIFT_INCLUDE_SIFT_OPTIONS_H_
#define SIFT_INCLUDE_SIFT_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "sift/prefix_extractor.h"

namespace sift {

class Env;
class Snapshot;

// How each table block is stored on disk.
enum class Compression : uint8_t {
  kNone = 0,    // blocks are stored as they are
  kSnappy = 1,  // Snappy per block, kept only when it saves at least 1/8
};

// Layout of the filter embedded in every table.
enum class FilterKind : uint8_t {
  // Probes spread over the whole bit array: the lowest false-positive rate
  // for a given size, one cache miss per probe.
  kStandardBloom = 1,
  // All probes of a key fall in one 64-byte cache line chosen by the key's
  // hash: one cache miss per query, at a slightly higher false-positive rate.
  kBlockedBloom = 2,
  // A binary fuse filter (Graf & Lemire 2022) over the table's distinct user
  // keys: three slot reads per query and a false-positive rate of 2^-w with
  // w-bit fingerprints, w the widest that filter_bits_per_key affords for the
  // table's key count (about 1.125 * w bits per key for large tables: 9 or 10
  // bits/key give w = 8, 0.39%; small tables take more slots per key, so a
  // narrower w). Tables are immutable, so the filter is built once from all
  // of a table's keys.
  kBinaryFuse = 3,
};

// How the filter memory budget (Options::filter_bits_per_key on average) is
// shared among the tables of the tree (doc/filters.md).
enum class FilterAllocation : uint8_t {
  // Every table gets filter_bits_per_key bits per key.
  kUniform = 1,
  // Each new table's filter is sized from the level it is written to and the
  // tree's current shape so that the expected number of false positives per
  // lookup of an absent key is minimal at the same total memory: the small
  // runs an absent key probes (each level-0 table, the upper levels) get
  // more bits per key, the large deepest level fewer.
  kOptimal = 2,
};

// Options that control a whole database. Passed to DB::Open; copied, so the
// caller may discard its Options after Open returns (but not `env`, see below).
// DB::Open checks every field against its REQUIRES line and refuses a value
// outside it with absl::InvalidArgumentError naming the field and the range;
// nothing is adjusted silently.
//
// Thread safety: a plain struct; not shared by the engine after Open.
struct Options {
  // Create the database if it is missing.
  // Default: false
  bool create_if_missing = false;

  // Fail Open if the database already exists.
  // Default: false
  bool error_if_exists = false;

  // Treat any damage detected while opening (a bad record in the middle of a
  // write-ahead log, say) as an error instead of skipping what is damaged.
  // Default: false
  bool paranoid_checks = false;

  // All file and thread access goes through this Env. Not owned: it must
  // outlive every DB opened with it.
  // Default: Env::Default(), the POSIX environment
  Env* env = nullptr;

  // Bytes of updates to collect in the in-memory table before it is turned
  // into a level-0 table. Larger values speed up bulk loads and lengthen
  // recovery after a crash. Level 1 holds 2.5 times this much before it is
  // compacted, and at least 10 MiB (each deeper level ten times more).
  // REQUIRES: 16 KiB <= write_buffer_size <= 1 GiB
  // Default: 4 MiB
  size_t write_buffer_size = 4 << 20;

  // Target size of a table written by compaction.
  // REQUIRES: 16 KiB <= max_file_size <= 1 GiB
  // Default: 2 MiB
  size_t max_file_size = 2 << 20;

  // Approximate size of the uncompressed user data packed per block.
  // REQUIRES: 256 <= block_size <= 4 MiB
  // Default: 4 KiB
  size_t block_size = 4 << 10;

  // Entries between restart points of a block's prefix compression.
  // REQUIRES: block_restart_interval >= 1
  // Default: 16
  int block_restart_interval = 16;

  // Block compression.
  // REQUIRES: one of the enumerators of Compression (not a cast integer)
  // Default: Compression::kSnappy
  Compression compression = Compression::kSnappy;

  // Bytes of uncompressed data blocks kept in memory across reads; 0 turns
  // the block cache off. Any value is accepted. Once full, the cache takes a
  // block only on its second miss within about one cache's worth of misses,
  // so blocks read once (a long scan, random reads over data many times the
  // cache) do not evict those read again (doc/engine.md).
  // Default: 8 MiB
  size_t block_cache_capacity = 8 << 20;

  // Files kept open at once: tables (file handle, index and filter in
  // memory) plus the handful the database itself needs (WAL, MANIFEST, LOG,
  // LOCK), for which 10 are set aside.
  // REQUIRES: 20 <= max_open_files <= 1,000,000
  // Default: 1000
  int max_open_files = 1000;

  // Bloom filter size in bits per key, on average over the tables of the
  // tree (see filter_allocation); fractional values are allowed. 0 writes
  // tables without a filter.
  // REQUIRES: 0 <= filter_bits_per_key <= 100 (not NaN)
  // Default: 10.0 (about 1% false positives)
  double filter_bits_per_key = 10.0;

  // How filter_bits_per_key is shared among tables. kOptimal sizes each new
  // table's filter from its level and the tree's shape at the time it is
  // written, within 0..100 bits per key; tables keep the filter they were
  // written with (a table moved to another level unchanged, or written when
  // the tree was smaller, keeps its size until compaction rewrites it), so
  // the memory of the whole tree follows the average closely but not
  // exactly. Changing this (or filter_bits_per_key) on reopen affects only
  // tables written afterwards. Ignored when filter_bits_per_key is 0.
  // Default: FilterAllocation::kOptimal
  FilterAllocation filter_allocation = FilterAllocation::kOptimal;

  // Serve table reads from read-only memory maps of the table files (where
  // the Env can map them): a block read is then a view into the page cache,
  // with no system call, no copy and no block-cache entry. Uncompressed data
  // blocks read this way have their checksum verified on the first read
  // through an open table and are trusted afterwards while it stays open
  // (doc/durability.md). false reads with pread into the block cache.
  // Default: true on 64-bit platforms, false on 32-bit ones
  bool allow_mmap_reads = sizeof(void*) >= 8;

  // Read table blocks with direct I/O (O_DIRECT on POSIX): every block read
  // on the point-read and iterator paths goes to the device, not the
  // operating system's page cache, and the block cache
  // (block_cache_capacity) is the only cache of table data. This makes a
  // database larger than memory behave, and measure, like one (a block read
  // is a device read) and keeps table data from crowding the page cache.
  // Overrides allow_mmap_reads. One-pass bulk reads, those made with
  // ReadOptions::fill_cache false (compaction inputs, scans that ask not to
  // fill the cache), are still read buffered: they read each block once, in
  // order, and the kernel's readahead turns their many small block reads
  // into few large device reads (doc/engine.md). Other iterators read ahead
  // by themselves on long forward runs, in windows of up to 256 KiB.
  // Write-ahead logs, the MANIFEST and table writes are unaffected. Where
  // the file system refuses O_DIRECT (some network or in-memory file
  // systems), opening a table fails with absl::InvalidArgumentError naming
  // the file and this option; nothing falls back to buffered reads. An Env
  // without direct I/O (NewMemEnv) ignores the option.
  // Default: false
  bool use_direct_reads = false;

  // Layout of the filter written into new tables. Tables already on disk keep
  // the layout they were written with and are read correctly either way.
  // REQUIRES: one of the enumerators of FilterKind (not a cast integer)
  // Default: FilterKind::kBlockedBloom
  FilterKind filter_kind = FilterKind::kBlockedBloom;

  // Also store the prefix of every key (see PrefixExtractor) in the filters
  // of new tables, so that a scan confined to one prefix (ReadOptions: both
  // bounds inside one prefix's range, or prefix_same_as_start) skips the
  // tables whose filter says the prefix is absent without reading a block.
  // Each table records the extractor's Name(); tables written with another
  // extractor, or none, are never prefix-filtered, so changing it on reopen
  // is safe (those tables are read as if they had no prefix filter until
  // compaction rewrites them). Point reads are unaffected. Shared, not
  // copied: it must stay usable while any DB opened with it is open.
  // Ignored when filter_bits_per_key is 0.
  // REQUIRES: nullptr, or Name() 1 to 255 bytes long
  // Default: nullptr (no prefix filtering)
  std::shared_ptr<const PrefixExtractor> prefix_extractor;

  // Store whole keys in the filters of new tables (what Get and MultiGet
  // ask). false stores only prefixes (with a prefix_extractor): smaller
  // filters for a database read by prefix scans alone; Get and MultiGet then
  // read such tables as if they had no filter.
  // REQUIRES: true unless prefix_extractor is set
  // Default: true
  bool whole_key_filtering = true;

  // Bits per key of a range filter in every new table (a filter after the
  // design of Grafite, doc/filters.md): an iterator with both
  // ReadOptions::iterate_lower_bound and iterate_upper_bound asks each
  // table its bounds cover whether they may hold a key of it, and leaves
  // out, before reading any block, those whose filter says no. For a range
  // of at most 32 consecutive values of the 8 key bytes after a table's
  // common prefix, the false-positive rate is at most 32 / 2^(bits - 2)
  // (0.2% at 16 bits/key), whatever the ranges; longer ranges cost more.
  // Tables keep the range filter they were written with; 0 writes none.
  // REQUIRES: 0, or 2 <= range_filter_bits_per_key <= 64 (not NaN)
  // Default: 0.0 (no range filter)
  double range_filter_bits_per_key = 0.0;

  // Bytes of table filters to keep in memory; 0 = no limit. With a limit,
  // blocked Bloom filters (filter_kind kBlockedBloom) are written as
  // independent units of about 2.5 bits per key (doc/filter_format.md,
  // kind 4) and the open tables keep as many of their units as the limit
  // allows, chosen where they save the most block reads: by how often
  // absent-key Gets probe each table (its level's key-range coverage) and
  // what each unit takes off its false-positive rate. The choice is made
  // again whenever the tree changes; units dropped stay on disk and are read
  // back (ReadStats::filter_unit_loads) when the tree makes them worth
  // their memory again. Filters of other kinds, range filters and tables
  // written without units count against the limit whole. Tables opened
  // between two choices take the units the last choice's marginal rate
  // gives them, so the bound is approximate while tables open and close
  // (more tables than max_open_files).
  // Default: 0 (every filter whole in memory)
  uint64_t filter_memory_limit = 0;
};

// Options for reads.
struct ReadOptions {
  // Check the checksum of every block read from a file.
  // Default: true
  bool verify_checksums = true;

  // Offer blocks read for this operation to the block cache, which takes
  // them while it has room and, once full, a block on its second recent miss
  // (see block_cache_capacity). false: never insert them; bulk scans may set
  // it so as not to touch the cache at all.
  // Default: true
  bool fill_cache = true;

  // Read as of this snapshot (from DB::GetSnapshot on the same DB, not yet
  // released). nullptr reads the latest state.
  // Default: nullptr
  const Snapshot* snapshot = nullptr;

  // Iteration bounds for DB::NewIterator (Get and MultiGet ignore them). An
  // iterator made with them yields only keys k with
  //   *iterate_lower_bound <= k < *iterate_upper_bound   (bytewise),
  // whatever it is asked: Seek(t) with t before the lower bound lands on the
  // first key at or after the bound, SeekToFirst/SeekToLast start at the
  // bounds, and Next/Prev stop at them. Below the iterator, tables and data
  // blocks that lie wholly outside the bounds are never read, so a bounded
  // scan costs what its range holds, not what lies beyond it.
  // The views are not copied: the caller keeps their bytes alive and
  // unchanged for the life of every iterator made with these options.
  // std::nullopt: that side is open. A lower bound at or after the upper
  // bound makes an empty range.
  // Default: std::nullopt (both)
  std::optional<std::string_view> iterate_lower_bound;
  std::optional<std::string_view> iterate_upper_bound;

  // With the database's Options::prefix_extractor: after Seek(target) with
  // target in the extractor's domain, the iterator yields only keys that
  // share target's prefix (Next and Prev stop at the ends of the prefix's
  // range, inside the bounds above), and tables whose prefix filter says
  // the prefix is absent are skipped without a block read. SeekToFirst,
  // SeekToLast, and Seek to a key outside the domain iterate in total order
  // (within the bounds). Without an extractor this option does nothing.
  // Default: false
  bool prefix_same_as_start = false;
};

// Options for writes.
struct WriteOptions {
  // If true, the write-ahead log is flushed to stable storage (fdatasync)
  // before the write returns: the write survives a machine crash. If false,
  // it survives a crash of the process but may be lost if the machine fails.
  // Default: false
  bool sync = false;
};

// Options for DB::IngestExternalFiles.
//
// Thread safety: a plain struct; read only during the call it is passed to.
struct IngestOptions {
  // Hard-link each file into the database instead of copying it. The
  // caller's file is never removed or changed either way; with a link the
  // database shares its data, so the caller must not modify it afterwards
  // (removing it is fine). Where a link is impossible (another file system,
  // an Env without links) the file is copied.
  // Default: false
  bool move_files = false;

  // Read every block of each file and check its checksum before ingesting,
  // refusing a damaged file with absl::DataLossError. false checks only
  // what opening the table reads (footer, index, filter, properties).
  // Default: true
  bool verify_checksums = true;
};

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_OPTIONS_H_
