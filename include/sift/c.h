/* The C API of sift: a stable, C99-compatible interface for programs written
   in C and for bindings (FFI generators, other languages' native modules).

   Where a concept exists in LevelDB's C API, the function here has the same
   name with sift_ for leveldb_ and the same signature, so a C program
   written for LevelDB ports by renaming. sift's own features (multi_get,
   flush, read statistics, checkpoints, external tables and ingestion, the
   filter options) follow the same conventions. doc/c_api.md has the
   details and the differences from LevelDB.

   Conventions:
   - Every type is an opaque handle made by its _create (or _open) function
     and released by its _destroy (or _close, _release) function.
   - Keys and values are byte arrays passed as (pointer, length); they may
     hold any bytes, including NUL. A NULL pointer is allowed only with
     length 0.
   - Errors: a function that can fail takes `char** errptr` last. On entry
     *errptr must be NULL or a message returned by this library. On success
     *errptr is left unchanged; on failure the old message (if any) is freed
     with sift_free and *errptr is set to a new malloc'd, NUL-terminated
     message, which the caller frees with sift_free. `errptr` itself must
     not be NULL.
   - Values returned to the caller (sift_get, sift_multi_get,
     sift_property_value) are malloc'd and freed with sift_free.
   - Iterator keys and values, and the keys a table file writer reports,
     are borrowed: valid until the handle moves or is destroyed.
   - Booleans are uint8_t: 0 is false, anything else true.
   - Misuse the library can detect (a NULL handle, a NULL key with a
     nonzero length, an option value out of range, a snapshot of another
     database, an iterator whose database was closed) is reported through
     errptr, or, where a function has no errptr, makes it do nothing and
     return an empty result. No C++ exception crosses this interface.

   Thread safety: a sift_t may be used by many threads at once, except
   sift_close, which must not run concurrently with any other call on the
   database or its iterators and snapshots. Every other handle (options,
   batches, iterators, table file writers) is for one thread at a time. */

#ifndef SIFT_INCLUDE_SIFT_C_H_
#define SIFT_INCLUDE_SIFT_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Handles ---- */

typedef struct sift_t sift_t;
typedef struct sift_env_t sift_env_t;
typedef struct sift_iterator_t sift_iterator_t;
typedef struct sift_options_t sift_options_t;
typedef struct sift_readoptions_t sift_readoptions_t;
typedef struct sift_snapshot_t sift_snapshot_t;
typedef struct sift_writebatch_t sift_writebatch_t;
typedef struct sift_writeoptions_t sift_writeoptions_t;
typedef struct sift_ingestoptions_t sift_ingestoptions_t;
typedef struct sift_tablefilewriter_t sift_tablefilewriter_t;
typedef struct sift_prefixextractor_t sift_prefixextractor_t;

/* ---- Database ---- */

/* Opens (or creates, see sift_options_set_create_if_missing) the database
   in directory `name`. Returns NULL and sets *errptr on failure: an option
   out of range (named in the message), a missing database without
   create_if_missing, a database already open, damage, I/O errors. The
   options are copied; `options` may be destroyed after the call, but an
   Env set in it must outlive the database. */
sift_t* sift_open(const sift_options_t* options, const char* name,
                  char** errptr);

/* Closes the database and frees `db`. Snapshots not yet released are
   released and their handles freed. Iterators not yet destroyed stay
   allocated but become invalid: sift_iter_valid returns 0 and
   sift_iter_get_error reports that the database is closed; they must still
   be freed with sift_iter_destroy. Waits for background work to stop.
   NULL does nothing. */
void sift_close(sift_t* db);

/* Sets key to value. A failed write (I/O error) makes the database
   read-only: every later write fails with that error. */
void sift_put(sift_t* db, const sift_writeoptions_t* options, const char* key,
              size_t keylen, const char* val, size_t vallen, char** errptr);

/* Removes key, if present; not an error if it is absent. */
void sift_delete(sift_t* db, const sift_writeoptions_t* options,
                 const char* key, size_t keylen, char** errptr);

/* Applies every update of `batch` atomically. The batch is not modified.
   A batch that recorded a misuse (see sift_writebatch_put) is refused with
   that error and nothing is written. */
void sift_write(sift_t* db, const sift_writeoptions_t* options,
                sift_writebatch_t* batch, char** errptr);

/* Returns the value of key as a malloc'd array of *vallen bytes (not
   NUL-terminated; free it with sift_free), or NULL with *vallen = 0 if the
   key is absent (not an error). On error returns NULL and sets *errptr. */
char* sift_get(sift_t* db, const sift_readoptions_t* options, const char* key,
               size_t keylen, size_t* vallen, char** errptr);

/* Looks up num_keys keys in one consistent view (faster than a loop of
   sift_get). For each i: a present key gets values_list[i] (malloc'd, free
   with sift_free) and values_list_sizes[i], with errs[i] = NULL; an absent
   key gets values_list[i] = NULL, size 0, errs[i] = NULL; a key whose
   lookup failed gets errs[i] set to a malloc'd message (values_list[i]
   NULL). The output arrays hold num_keys entries; their old contents are
   overwritten, not freed. Whole-call misuse (NULL db, options or arrays, a
   NULL key with a nonzero length) sets *errptr and fills every entry with
   NULL and 0 instead. */
void sift_multi_get(sift_t* db, const sift_readoptions_t* options,
                    size_t num_keys, const char* const* keys_list,
                    const size_t* keys_list_sizes, char** values_list,
                    size_t* values_list_sizes, char** errs, char** errptr);

/* A new iterator over the database as of options' snapshot (or now), not
   positioned: call a seek function first. Destroy it with
   sift_iter_destroy, before or after sift_close. Returns NULL if db or
   options is NULL or the snapshot belongs to another database. */
sift_iterator_t* sift_create_iterator(sift_t* db,
                                      const sift_readoptions_t* options);

/* A view of the database now; reads given it (sift_readoptions_set_snapshot)
   see nothing written later. Release it with sift_release_snapshot (or let
   sift_close release it). NULL if db is NULL. */
const sift_snapshot_t* sift_create_snapshot(sift_t* db);
/* REQUIRES: snapshot came from sift_create_snapshot(db) and is not
   released. NULL snapshot does nothing; a snapshot of another database is
   left alone. */
void sift_release_snapshot(sift_t* db, const sift_snapshot_t* snapshot);

/* The value of a property (see sift/db.h: "sift.stats",
   "sift.num-files-at-level<N>", "sift.filter-memory-bytes", ...) as a
   malloc'd NUL-terminated string (free with sift_free), or NULL if the name
   is unknown or db or propname is NULL. */
char* sift_property_value(sift_t* db, const char* propname);

/* For each of num_ranges ranges [range_start_key[i], range_limit_key[i]),
   stores in sizes[i] the approximate bytes of table files holding its keys
   (writes still in the memtable are not counted; see
   DB::GetApproximateSizes). On misuse (NULL db, NULL arrays with
   num_ranges > 0) every size is 0 where `sizes` allows. */
void sift_approximate_sizes(sift_t* db, int num_ranges,
                            const char* const* range_start_key,
                            const size_t* range_start_key_len,
                            const char* const* range_limit_key,
                            const size_t* range_limit_key_len, uint64_t* sizes);

/* Compacts the tables overlapping [start_key, limit_key] down the levels.
   A NULL key means open on that side: (NULL, 0, NULL, 0) compacts
   everything. Returns when done. As in LevelDB, errors are not reported;
   sift_compact_range_with_error reports them. */
void sift_compact_range(sift_t* db, const char* start_key, size_t start_key_len,
                        const char* limit_key, size_t limit_key_len);
/* sift_compact_range, reporting errors (I/O, a database gone read-only,
   misuse) through errptr. */
void sift_compact_range_with_error(sift_t* db, const char* start_key,
                                   size_t start_key_len, const char* limit_key,
                                   size_t limit_key_len, char** errptr);

/* Writes the memtable to a table and returns once it is durable. */
void sift_flush(sift_t* db, char** errptr);

/* Makes an openable copy of the database as of now in directory `dir`,
   which must not exist (its parent must). See DB::CreateCheckpoint. */
void sift_create_checkpoint(sift_t* db, const char* dir, char** errptr);

/* Counters of the point-read path since the database was opened (see
   sift/read_stats.h). Fields may be added at the end in later versions;
   sift_get_read_stats writes only the first `stats_size` bytes, so a
   program passes sizeof(sift_read_stats_t) as it was compiled. */
typedef struct sift_read_stats_t {
  uint64_t gets;                   /* point reads (a multi_get key is one) */
  uint64_t memtable_hits;          /* answered by a memtable */
  uint64_t tables_probed;          /* tables whose key range covered a key */
  uint64_t filter_negatives;       /* tables skipped by their filter */
  uint64_t filter_positives;       /* tables whose filter said "maybe" */
  uint64_t filter_false_positives; /* ... and did not hold the key */
  uint64_t block_cache_hits;       /* blocks served by the block cache */
  uint64_t block_reads;            /* blocks read from files */
  uint64_t bytes_read;             /* bytes of those reads */
  uint64_t table_loads;            /* tables opened by point reads */
  uint64_t filter_unit_loads;      /* filter units read back (memory limit) */
  /* Iterators, counted when an iterator is destroyed: */
  uint64_t seeks;                     /* seek, seek_to_first, seek_to_last */
  uint64_t iterator_block_reads;      /* blocks iterators read from files */
  uint64_t iterator_block_cache_hits; /* ... and found in the block cache */
  uint64_t prefix_filter_probes;      /* tables asked about a scan's prefix */
  uint64_t prefix_filter_negatives;   /* ... and skipped: prefix absent */
  uint64_t range_filter_probes;       /* tables asked about a scan's bounds */
  uint64_t range_filter_negatives;    /* ... and skipped: no key in bounds */
  uint64_t range_filter_false_positives; /* "maybe", yet no key in bounds */
} sift_read_stats_t;
/* Stores the counters in *stats. REQUIRES: stats_size <=
   sizeof(sift_read_stats_t) of the library's version, which always holds
   for sizeof(sift_read_stats_t) compiled against this or an older header;
   a larger stats_size, a NULL db or a NULL stats sets *errptr. */
void sift_get_read_stats(sift_t* db, sift_read_stats_t* stats,
                         size_t stats_size, char** errptr);

/* Deletes the database in `name` and everything in it; not an error if it
   does not exist. Fails if the database is open. */
void sift_destroy_db(const sift_options_t* options, const char* name,
                     char** errptr);

/* Rebuilds the database in `name` when its MANIFEST or CURRENT is lost or
   damaged, from the tables and write-ahead logs in the directory (see
   sift::RepairDB in sift/db.h): every table and log record that reads back
   is kept, damaged files and old MANIFESTs are moved into `name`/lost, and
   a summary is appended to `name`/LOG. Fails if the database is open, does
   not exist or holds no sift files. */
void sift_repair_db(const sift_options_t* options, const char* name,
                    char** errptr);

/* ---- Iterators ----
   Not safe for concurrent use. Functions that move the iterator require
   sift_iter_valid where the C++ API does (next, prev); here they do nothing
   on an iterator that is not valid instead. NULL does nothing (and
   sift_iter_valid returns 0). */

void sift_iter_destroy(sift_iterator_t* iter);
uint8_t sift_iter_valid(const sift_iterator_t* iter);
void sift_iter_seek_to_first(sift_iterator_t* iter);
void sift_iter_seek_to_last(sift_iterator_t* iter);
/* Positions at the first key >= k. */
void sift_iter_seek(sift_iterator_t* iter, const char* k, size_t klen);
void sift_iter_next(sift_iterator_t* iter);
void sift_iter_prev(sift_iterator_t* iter);
/* The current key (value) and its length, borrowed: valid until the
   iterator moves or is destroyed. NULL with length 0 when not valid. */
const char* sift_iter_key(const sift_iterator_t* iter, size_t* klen);
const char* sift_iter_value(const sift_iterator_t* iter, size_t* vlen);
/* Sets *errptr if the iterator met an error (I/O, damage), its database
   was closed, or iter is NULL; an iterator that met one is not valid. */
void sift_iter_get_error(const sift_iterator_t* iter, char** errptr);

/* ---- Write batches ----
   Updates applied atomically by sift_write, in the order added. */

sift_writebatch_t* sift_writebatch_create(void);
void sift_writebatch_destroy(sift_writebatch_t* batch);
/* Drops every update, and a misuse recorded by put or delete. */
void sift_writebatch_clear(sift_writebatch_t* batch);
/* Adds key -> val (both copied). A NULL key or value with a nonzero length
   adds nothing and is recorded: sift_write then refuses the batch. */
void sift_writebatch_put(sift_writebatch_t* batch, const char* key, size_t klen,
                         const char* val, size_t vlen);
/* Adds a deletion of key (copied); misuse as sift_writebatch_put. */
void sift_writebatch_delete(sift_writebatch_t* batch, const char* key,
                            size_t klen);
/* Calls put or deleted for each update, in order, with borrowed views
   valid during the call. `state` is passed through. */
void sift_writebatch_iterate(const sift_writebatch_t* batch, void* state,
                             void (*put)(void*, const char* k, size_t klen,
                                         const char* v, size_t vlen),
                             void (*deleted)(void*, const char* k,
                                             size_t klen));
/* Appends every update of source to destination (and a misuse recorded in
   source). */
void sift_writebatch_append(sift_writebatch_t* destination,
                            const sift_writebatch_t* source);
/* Number of updates in the batch (0 for NULL). */
uint32_t sift_writebatch_count(const sift_writebatch_t* batch);

/* ---- Options for a database (and for a table file writer) ----
   Setters store the value; sift_open (sift_tablefilewriter_open) checks
   every field against its range in sift/options.h and fails naming the
   first one out of range. Defaults are those of sift::Options. */

sift_options_t* sift_options_create(void);
void sift_options_destroy(sift_options_t* options);
void sift_options_set_create_if_missing(sift_options_t* options, uint8_t v);
void sift_options_set_error_if_exists(sift_options_t* options, uint8_t v);
void sift_options_set_paranoid_checks(sift_options_t* options, uint8_t v);
/* NULL env: the default (POSIX) environment. The Env is not copied. */
void sift_options_set_env(sift_options_t* options, sift_env_t* env);
void sift_options_set_write_buffer_size(sift_options_t* options, size_t v);
void sift_options_set_max_open_files(sift_options_t* options, int v);
void sift_options_set_block_size(sift_options_t* options, size_t v);
void sift_options_set_block_restart_interval(sift_options_t* options, int v);
void sift_options_set_max_file_size(sift_options_t* options, size_t v);
/* Bytes of uncompressed blocks cached; 0 turns the block cache off. */
void sift_options_set_block_cache_capacity(sift_options_t* options, size_t v);

enum { sift_no_compression = 0, sift_snappy_compression = 1 };
/* One of sift_no_compression, sift_snappy_compression. */
void sift_options_set_compression(sift_options_t* options, int v);

/* Filter bits per key on average over the tree; 0 writes no filters. */
void sift_options_set_filter_bits_per_key(sift_options_t* options, double v);
enum {
  sift_standard_bloom_filter = 1,
  sift_blocked_bloom_filter = 2,
  sift_binary_fuse_filter = 3
};
/* One of the filter kinds above. */
void sift_options_set_filter_kind(sift_options_t* options, int v);
enum { sift_uniform_filter_allocation = 1, sift_optimal_filter_allocation = 2 };
/* One of the filter allocations above. */
void sift_options_set_filter_allocation(sift_options_t* options, int v);
/* Bytes of table filters kept in memory; 0 (the default) = no limit. */
void sift_options_set_filter_memory_limit(sift_options_t* options, uint64_t v);
/* Serve table reads from memory maps (default: on for 64-bit builds). */
void sift_options_set_allow_mmap_reads(sift_options_t* options, uint8_t v);
/* Read table blocks with direct I/O (default: off). */
void sift_options_set_use_direct_reads(sift_options_t* options, uint8_t v);
/* Scan filters (see sift::Options). The options share the extractor: it
   may be destroyed after the call. NULL (the default) sets none. */
void sift_options_set_prefix_extractor(sift_options_t* options,
                                       const sift_prefixextractor_t* extractor);
/* Keep whole keys in the filters (default: on); off needs a prefix
   extractor, and then only scans are filtered. */
void sift_options_set_whole_key_filtering(sift_options_t* options, uint8_t v);
/* Range filter bits per key: 0 (the default, none) or 2 to 64. */
void sift_options_set_range_filter_bits_per_key(sift_options_t* options,
                                                double v);

/* ---- Prefix extractors (sift/prefix_extractor.h) ----
   Immutable once made; safe to share between threads and options. */

/* The first `length` bytes of a key; shorter keys have no prefix. NULL if
   length is 0 (or memory ran out). */
sift_prefixextractor_t* sift_prefixextractor_create_fixed(size_t length);
/* Everything up to and including the first `delimiter` byte; keys without
   it have no prefix. NULL only if memory ran out. */
sift_prefixextractor_t* sift_prefixextractor_create_delimited(char delimiter);
/* The name stored in the tables written with it (e.g. "sift.fixed:4"),
   valid while the extractor lives. NULL for a NULL extractor. */
const char* sift_prefixextractor_name(const sift_prefixextractor_t* extractor);
void sift_prefixextractor_destroy(sift_prefixextractor_t* extractor);

/* ---- Environments ---- */

/* The default (POSIX) environment. Destroying the handle leaves the
   process-wide environment alone. */
sift_env_t* sift_create_default_env(void);
/* A new environment keeping files in memory (for tests, or a database that
   need not survive the process); its files go with it. */
sift_env_t* sift_create_mem_env(void);
/* REQUIRES: no database or table file writer opened with env is open. */
void sift_env_destroy(sift_env_t* env);

/* ---- Read options ---- */

sift_readoptions_t* sift_readoptions_create(void);
void sift_readoptions_destroy(sift_readoptions_t* options);
void sift_readoptions_set_verify_checksums(sift_readoptions_t* options,
                                           uint8_t v);
void sift_readoptions_set_fill_cache(sift_readoptions_t* options, uint8_t v);
/* NULL reads the latest state. The snapshot must stay unreleased while
   reads use these options. */
void sift_readoptions_set_snapshot(sift_readoptions_t* options,
                                   const sift_snapshot_t* snapshot);
/* Iteration bounds: iterators created with these options see only keys
   >= the lower bound (inclusive) and < the upper bound (exclusive). The
   bytes are copied, so `key` need not outlive the call, and an iterator
   keeps its own copy: the options may be changed or destroyed while it
   lives. A NULL key clears the bound (default: none). */
void sift_readoptions_set_iterate_lower_bound(sift_readoptions_t* options,
                                              const char* key, size_t keylen);
void sift_readoptions_set_iterate_upper_bound(sift_readoptions_t* options,
                                              const char* key, size_t keylen);
/* With the database's prefix extractor: an iterator seeks within the
   target's prefix only, and tables whose prefix filter rules the prefix
   out are skipped (default: off). */
void sift_readoptions_set_prefix_same_as_start(sift_readoptions_t* options,
                                               uint8_t v);

/* ---- Write options ---- */

sift_writeoptions_t* sift_writeoptions_create(void);
void sift_writeoptions_destroy(sift_writeoptions_t* options);
/* Sync the write-ahead log before a write returns (default: off). */
void sift_writeoptions_set_sync(sift_writeoptions_t* options, uint8_t v);

/* ---- External table files and ingestion ---- */

/* Creates (or truncates) a table file at `path` to be added to a database
   later with sift_ingest_external_files. Layout from `options`
   (block size, restart interval, compression, filter bits and kind, env).
   Returns NULL and sets *errptr on failure. */
sift_tablefilewriter_t* sift_tablefilewriter_open(const sift_options_t* options,
                                                  const char* path,
                                                  char** errptr);
/* Adds key -> val. Keys must come in strictly increasing bytewise order;
   a key out of order fails, and so does every later call. */
void sift_tablefilewriter_put(sift_tablefilewriter_t* writer, const char* key,
                              size_t klen, const char* val, size_t vlen,
                              char** errptr);
/* Adds a deletion of key; ordering as sift_tablefilewriter_put. */
void sift_tablefilewriter_delete(sift_tablefilewriter_t* writer,
                                 const char* key, size_t klen, char** errptr);
/* Writes the rest of the file, syncs and closes it. Fails if nothing was
   added, or if called twice. */
void sift_tablefilewriter_finish(sift_tablefilewriter_t* writer, char** errptr);
/* After a successful finish: the file's size, its entries (values and
   deletions), and its first and last keys (borrowed until the writer is
   destroyed). Before that: 0, and NULL keys with length 0. */
uint64_t sift_tablefilewriter_file_size(const sift_tablefilewriter_t* writer);
uint64_t sift_tablefilewriter_num_entries(const sift_tablefilewriter_t* writer);
const char* sift_tablefilewriter_smallest_key(
    const sift_tablefilewriter_t* writer, size_t* klen);
const char* sift_tablefilewriter_largest_key(
    const sift_tablefilewriter_t* writer, size_t* klen);
/* A writer destroyed before a successful finish leaves an incomplete file,
   which the caller removes. */
void sift_tablefilewriter_destroy(sift_tablefilewriter_t* writer);

sift_ingestoptions_t* sift_ingestoptions_create(void);
void sift_ingestoptions_destroy(sift_ingestoptions_t* options);
/* Hard-link files into the database instead of copying (default: off). */
void sift_ingestoptions_set_move_files(sift_ingestoptions_t* options,
                                       uint8_t v);
/* Check every block's checksum before ingesting (default: on). */
void sift_ingestoptions_set_verify_checksums(sift_ingestoptions_t* options,
                                             uint8_t v);

/* Adds the table files of file_list (list_len of them, written by a table
   file writer) to the database atomically: all of them or, on error, none.
   The caller's files are never removed or modified. See
   DB::IngestExternalFiles. */
void sift_ingest_external_file(sift_t* db, const char* const* file_list,
                               size_t list_len,
                               const sift_ingestoptions_t* options,
                               char** errptr);

/* ---- Utility ---- */

/* Frees memory this library returned (values, property values, error
   messages). NULL does nothing. */
void sift_free(void* ptr);

/* The library's version. */
int sift_major_version(void);
int sift_minor_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SIFT_INCLUDE_SIFT_C_H_ */
