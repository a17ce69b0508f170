/* The C API (include/sift/c.h), compiled as C: every function, its error
   conventions (errptr, malloc'd results, borrowed iterator views) and the
   misuse it must survive (NULL handles and keys, bad option values,
   iterators outliving their database, snapshots of another database).
   Most of it runs on the in-memory Env; one part runs on files in the
   directory given as argv[1].

   Prints "c_api: N passed, M failed" last and exits nonzero if any check
   failed. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sift/c.h"

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* err is NULL; if not, prints it and counts a failure. Frees it. */
#define CHECK_NO_ERROR(err)                                                \
  do {                                                                     \
    if ((err) == NULL) {                                                   \
      ++passed;                                                            \
    } else {                                                               \
      ++failed;                                                            \
      fprintf(stderr, "%s:%d: unexpected error: %s\n", __FILE__, __LINE__, \
              (err));                                                      \
      sift_free(err);                                                      \
      (err) = NULL;                                                        \
    }                                                                      \
  } while (0)

/* err is set and contains `part`; frees it. */
#define CHECK_ERROR(err, part)                                          \
  do {                                                                  \
    if ((err) != NULL && strstr((err), (part)) != NULL) {               \
      ++passed;                                                         \
    } else {                                                            \
      ++failed;                                                         \
      fprintf(stderr, "%s:%d: expected an error with \"%s\", got %s\n", \
              __FILE__, __LINE__, (part), (err) ? (err) : "none");      \
    }                                                                   \
    sift_free(err);                                                     \
    (err) = NULL;                                                       \
  } while (0)

/* The value of key in db is exactly `expected` (NULL: absent). */
static void CheckGet(sift_t* db, const sift_readoptions_t* ro, const char* key,
                     const char* expected, int line) {
  char* err = NULL;
  size_t len = 12345;
  char* value = sift_get(db, ro, key, strlen(key), &len, &err);
  if (err != NULL) {
    ++failed;
    fprintf(stderr, "line %d: get %s: %s\n", line, key, err);
    sift_free(err);
    return;
  }
  if (expected == NULL) {
    if (value == NULL && len == 0) {
      ++passed;
    } else {
      ++failed;
      fprintf(stderr, "line %d: get %s: expected absent\n", line, key);
    }
  } else if (value != NULL && len == strlen(expected) &&
             memcmp(value, expected, len) == 0) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "line %d: get %s: expected %s, got %.*s\n", line, key,
            expected, (int)len, value ? value : "(null)");
  }
  sift_free(value);
}
#define CHECK_GET(db, ro, key, expected) \
  CheckGet((db), (ro), (key), (expected), __LINE__)

/* The iterator is at key -> value. */
static void CheckIter(const sift_iterator_t* it, const char* key,
                      const char* value, int line) {
  size_t klen = 0;
  size_t vlen = 0;
  const char* k;
  const char* v;
  if (!sift_iter_valid(it)) {
    ++failed;
    fprintf(stderr, "line %d: iterator not valid, expected %s\n", line, key);
    return;
  }
  k = sift_iter_key(it, &klen);
  v = sift_iter_value(it, &vlen);
  if (klen == strlen(key) && memcmp(k, key, klen) == 0 &&
      vlen == strlen(value) && memcmp(v, value, vlen) == 0) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "line %d: iterator at %.*s -> %.*s, expected %s -> %s\n",
            line, (int)klen, k, (int)vlen, v, key, value);
  }
}
#define CHECK_ITER(it, key, value) CheckIter((it), (key), (value), __LINE__)

/* Tables in every level, from the sift.num-files-at-level<N> properties. */
static int TableCount(sift_t* db) {
  int total = 0;
  int level;
  for (level = 0;; ++level) {
    char name[64];
    char* files;
    snprintf(name, sizeof(name), "sift.num-files-at-level%d", level);
    files = sift_property_value(db, name);
    if (files == NULL) break;
    total += atoi(files);
    sift_free(files);
  }
  return level > 0 ? total : -1;
}

static sift_options_t* MemOptions(sift_env_t* env) {
  sift_options_t* options = sift_options_create();
  sift_options_set_env(options, env);
  sift_options_set_create_if_missing(options, 1);
  return options;
}

/* Records what sift_writebatch_iterate reports, as text. */
struct BatchLog {
  char text[256];
};
static void LogPut(void* state, const char* k, size_t klen, const char* v,
                   size_t vlen) {
  struct BatchLog* log = (struct BatchLog*)state;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "put(%.*s,%.*s)",
           (int)klen, k, (int)vlen, v);
}
static void LogDelete(void* state, const char* k, size_t klen) {
  struct BatchLog* log = (struct BatchLog*)state;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "del(%.*s)", (int)klen,
           k);
}

static void TestVersionAndFree(void) {
  CHECK(sift_major_version() == 0);
  CHECK(sift_minor_version() >= 1);
  sift_free(NULL); /* allowed */
}

static void TestOptionsValidation(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options;
  sift_t* db;

  /* Every setter with a valid value: the database opens. */
  options = MemOptions(env);
  sift_options_set_error_if_exists(options, 1);
  sift_options_set_paranoid_checks(options, 1);
  sift_options_set_write_buffer_size(options, 64 << 10);
  sift_options_set_max_open_files(options, 100);
  sift_options_set_block_size(options, 1024);
  sift_options_set_block_restart_interval(options, 8);
  sift_options_set_max_file_size(options, 64 << 10);
  sift_options_set_block_cache_capacity(options, 1 << 20);
  sift_options_set_compression(options, sift_no_compression);
  sift_options_set_compression(options, sift_snappy_compression);
  sift_options_set_filter_bits_per_key(options, 12.5);
  sift_options_set_filter_kind(options, sift_standard_bloom_filter);
  sift_options_set_filter_kind(options, sift_blocked_bloom_filter);
  sift_options_set_filter_kind(options, sift_binary_fuse_filter);
  sift_options_set_filter_allocation(options, sift_optimal_filter_allocation);
  sift_options_set_filter_allocation(options, sift_uniform_filter_allocation);
  sift_options_set_filter_memory_limit(options, 0);
  sift_options_set_allow_mmap_reads(options, 0);
  sift_options_set_use_direct_reads(options, 1); /* the mem env ignores it */
  db = sift_open(options, "/valid", &err);
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);
  sift_close(db);
  /* error_if_exists now refuses. */
  db = sift_open(options, "/valid", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "exists");
  sift_options_destroy(options);

  /* Values out of range: refused at open, naming the field. */
  options = MemOptions(env);
  sift_options_set_compression(options, 7);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "compression 7");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_filter_kind(options, 9);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "filter kind 9");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_filter_allocation(options, 0);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "filter allocation 0");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_write_buffer_size(options, 1);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "write_buffer_size");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_max_open_files(options, -1);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "max_open_files");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_block_size(options, 1);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "block_size");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_block_restart_interval(options, 0);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "block_restart_interval");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_max_file_size(options, 0);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "max_file_size");
  sift_options_destroy(options);

  options = MemOptions(env);
  sift_options_set_filter_bits_per_key(options, -1.0);
  db = sift_open(options, "/bad", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "filter_bits_per_key");
  sift_options_destroy(options);

  /* A missing database without create_if_missing. */
  options = MemOptions(env);
  sift_options_set_create_if_missing(options, 0);
  db = sift_open(options, "/missing", &err);
  CHECK(db == NULL);
  CHECK(err != NULL);
  /* A second error replaces the first (freeing it: the sanitizer build
     would report the leak otherwise). */
  db = sift_open(options, "/missing", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "/missing");
  /* NULL options and name. */
  CHECK(sift_open(NULL, "/x", &err) == NULL);
  CHECK_ERROR(err, "options is NULL");
  CHECK(sift_open(options, NULL, &err) == NULL);
  CHECK_ERROR(err, "name is NULL");
  sift_options_destroy(options);

  /* Setters and destroyers accept NULL. */
  sift_options_set_create_if_missing(NULL, 1);
  sift_options_set_compression(NULL, 1);
  sift_options_destroy(NULL);
  sift_readoptions_destroy(NULL);
  sift_writeoptions_destroy(NULL);
  sift_writebatch_destroy(NULL);
  sift_ingestoptions_destroy(NULL);
  sift_tablefilewriter_destroy(NULL);
  sift_env_destroy(NULL);
  sift_close(NULL);
}

static void TestBasicOps(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db = sift_open(options, "/basic", &err);
  size_t len = 99;
  char* value;
  CHECK_NO_ERROR(err);
  CHECK(db != NULL);

  sift_readoptions_set_verify_checksums(ro, 1);
  sift_readoptions_set_fill_cache(ro, 0);
  sift_writeoptions_set_sync(wo, 1);

  sift_put(db, wo, "foo", 3, "hello", 5, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "foo", "hello");
  CHECK_GET(db, ro, "bar", NULL);
  sift_put(db, wo, "foo", 3, "world", 5, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "foo", "world");
  sift_delete(db, wo, "foo", 3, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "foo", NULL);
  sift_delete(db, wo, "never", 5, &err); /* absent: not an error */
  CHECK_NO_ERROR(err);

  /* Bytes with NULs, and an empty value (present, non-NULL, length 0). */
  sift_put(db, wo, "a\0b", 3, "x\0y\0", 4, &err);
  CHECK_NO_ERROR(err);
  value = sift_get(db, ro, "a\0b", 3, &len, &err);
  CHECK_NO_ERROR(err);
  CHECK(value != NULL && len == 4 && memcmp(value, "x\0y\0", 4) == 0);
  sift_free(value);
  CHECK_GET(db, ro, "a", NULL);
  sift_put(db, wo, "empty", 5, NULL, 0, &err);
  CHECK_NO_ERROR(err);
  len = 99;
  value = sift_get(db, ro, "empty", 5, &len, &err);
  CHECK_NO_ERROR(err);
  CHECK(value != NULL && len == 0);
  sift_free(value);
  /* The empty key. */
  sift_put(db, wo, NULL, 0, "e", 1, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "", "e");

  /* Misuse: every call reports it and changes nothing. */
  sift_put(NULL, wo, "k", 1, "v", 1, &err);
  CHECK_ERROR(err, "sift_put: db is NULL");
  sift_put(db, NULL, "k", 1, "v", 1, &err);
  CHECK_ERROR(err, "options is NULL");
  sift_put(db, wo, NULL, 1, "v", 1, &err);
  CHECK_ERROR(err, "key is NULL with a nonzero length");
  sift_put(db, wo, "k", 1, NULL, 1, &err);
  CHECK_ERROR(err, "value is NULL with a nonzero length");
  CHECK_GET(db, ro, "k", NULL);
  sift_delete(NULL, wo, "k", 1, &err);
  CHECK_ERROR(err, "sift_delete: db is NULL");
  sift_delete(db, NULL, "k", 1, &err);
  CHECK_ERROR(err, "options is NULL");
  sift_delete(db, wo, NULL, 2, &err);
  CHECK_ERROR(err, "key is NULL");
  len = 7;
  CHECK(sift_get(NULL, ro, "k", 1, &len, &err) == NULL);
  CHECK(len == 0);
  CHECK_ERROR(err, "sift_get: db is NULL");
  CHECK(sift_get(db, NULL, "k", 1, &len, &err) == NULL);
  CHECK_ERROR(err, "options is NULL");
  CHECK(sift_get(db, ro, NULL, 1, &len, &err) == NULL);
  CHECK_ERROR(err, "key is NULL");
  CHECK(sift_get(db, ro, "k", 1, NULL, &err) == NULL);
  CHECK_ERROR(err, "vallen is NULL");

  /* Properties. */
  value = sift_property_value(db, "sift.num-files-at-level0");
  CHECK(value != NULL && strcmp(value, "0") == 0);
  sift_free(value);
  value = sift_property_value(db, "sift.stats");
  CHECK(value != NULL && strlen(value) > 0);
  sift_free(value);
  CHECK(sift_property_value(db, "sift.no-such-property") == NULL);
  CHECK(sift_property_value(db, NULL) == NULL);
  CHECK(sift_property_value(NULL, "sift.stats") == NULL);

  /* Flush writes a level-0 table. */
  CHECK(TableCount(db) == 0);
  sift_flush(db, &err);
  CHECK_NO_ERROR(err);
  CHECK(TableCount(db) == 1);
  CHECK_GET(db, ro, "empty", "");
  sift_flush(NULL, &err);
  CHECK_ERROR(err, "sift_flush: db is NULL");

  sift_close(db);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

static void TestWriteBatch(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db = sift_open(options, "/batch", &err);
  sift_writebatch_t* wb = sift_writebatch_create();
  sift_writebatch_t* other = sift_writebatch_create();
  struct BatchLog log;
  CHECK_NO_ERROR(err);

  sift_put(db, wo, "box", 3, "c", 1, &err);
  CHECK_NO_ERROR(err);
  CHECK(sift_writebatch_count(wb) == 0);
  sift_writebatch_put(wb, "foo", 3, "a", 1);
  sift_writebatch_clear(wb);
  CHECK(sift_writebatch_count(wb) == 0);
  sift_writebatch_put(wb, "bar", 3, "b", 1);
  sift_writebatch_put(wb, "box", 3, "c", 1);
  sift_writebatch_delete(wb, "bar", 3);
  sift_writebatch_put(other, "baz", 3, "d", 1);
  sift_writebatch_append(wb, other);
  CHECK(sift_writebatch_count(wb) == 4);
  CHECK(sift_writebatch_count(NULL) == 0);

  log.text[0] = '\0';
  sift_writebatch_iterate(wb, &log, LogPut, LogDelete);
  CHECK(strcmp(log.text, "put(bar,b)put(box,c)del(bar)put(baz,d)") == 0);
  sift_writebatch_iterate(NULL, &log, LogPut, LogDelete); /* no-op */

  sift_write(db, wo, wb, &err);
  CHECK_NO_ERROR(err);
  CHECK(sift_writebatch_count(wb) == 4); /* not modified by the write */
  CHECK_GET(db, ro, "foo", NULL);
  CHECK_GET(db, ro, "bar", NULL);
  CHECK_GET(db, ro, "box", "c");
  CHECK_GET(db, ro, "baz", "d");

  /* A misused batch is refused whole; clear makes it usable again. */
  sift_writebatch_clear(wb);
  sift_writebatch_put(wb, "good", 4, "1", 1);
  sift_writebatch_put(wb, NULL, 3, "1", 1);
  CHECK(sift_writebatch_count(wb) == 1);
  sift_write(db, wo, wb, &err);
  CHECK_ERROR(err, "sift_writebatch_put: key or value is NULL");
  CHECK_GET(db, ro, "good", NULL);
  /* The misuse travels with append. */
  sift_writebatch_clear(other);
  sift_writebatch_append(other, wb);
  sift_write(db, wo, other, &err);
  CHECK_ERROR(err, "refused");
  sift_writebatch_clear(wb);
  sift_writebatch_delete(wb, NULL, 1);
  sift_write(db, wo, wb, &err);
  CHECK_ERROR(err, "sift_writebatch_delete");
  sift_writebatch_clear(wb);
  sift_writebatch_put(wb, "good", 4, "1", 1);
  sift_write(db, wo, wb, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "good", "1");

  sift_write(NULL, wo, wb, &err);
  CHECK_ERROR(err, "sift_write: db is NULL");
  sift_write(db, NULL, wb, &err);
  CHECK_ERROR(err, "options is NULL");
  sift_write(db, wo, NULL, &err);
  CHECK_ERROR(err, "batch is NULL");
  sift_writebatch_put(NULL, "k", 1, "v", 1); /* no-op */
  sift_writebatch_delete(NULL, "k", 1);
  sift_writebatch_clear(NULL);
  sift_writebatch_append(NULL, wb);

  sift_writebatch_destroy(wb);
  sift_writebatch_destroy(other);
  sift_close(db);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

static void TestIteratorsAndSnapshots(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_readoptions_t* snap_ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db = sift_open(options, "/iter", &err);
  sift_t* db2 = sift_open(options, "/iter2", &err);
  const sift_snapshot_t* snap;
  const sift_snapshot_t* snap2;
  const sift_snapshot_t* leaked;
  sift_iterator_t* it;
  sift_iterator_t* orphan;
  size_t len = 5;
  CHECK_NO_ERROR(err);

  sift_put(db, wo, "a", 1, "1", 1, &err);
  sift_put(db, wo, "b", 1, "2", 1, &err);
  sift_put(db, wo, "c", 1, "3", 1, &err);
  CHECK_NO_ERROR(err);
  snap = sift_create_snapshot(db);
  CHECK(snap != NULL);
  sift_put(db, wo, "b", 1, "22", 2, &err);
  sift_delete(db, wo, "c", 1, &err);
  sift_put(db, wo, "d", 1, "4", 1, &err);
  CHECK_NO_ERROR(err);

  it = sift_create_iterator(db, ro);
  CHECK(it != NULL);
  CHECK(!sift_iter_valid(it)); /* not positioned yet */
  CHECK(sift_iter_key(it, &len) == NULL && len == 0);
  sift_iter_seek_to_first(it);
  CHECK_ITER(it, "a", "1");
  sift_iter_next(it);
  CHECK_ITER(it, "b", "22");
  sift_iter_next(it);
  CHECK_ITER(it, "d", "4");
  sift_iter_next(it);
  CHECK(!sift_iter_valid(it));
  len = 5;
  CHECK(sift_iter_value(it, &len) == NULL && len == 0);
  sift_iter_next(it); /* not valid: does nothing */
  sift_iter_prev(it);
  CHECK(!sift_iter_valid(it));
  sift_iter_seek_to_last(it);
  CHECK_ITER(it, "d", "4");
  sift_iter_prev(it);
  CHECK_ITER(it, "b", "22");
  sift_iter_seek(it, "bb", 2);
  CHECK_ITER(it, "d", "4");
  sift_iter_seek(it, NULL, 0);
  CHECK_ITER(it, "a", "1");
  sift_iter_seek(it, "e", 1);
  CHECK(!sift_iter_valid(it));
  sift_iter_get_error(it, &err);
  CHECK_NO_ERROR(err);
  sift_iter_destroy(it);

  /* Reads through the snapshot see the state at its creation. */
  sift_readoptions_set_snapshot(snap_ro, snap);
  CHECK_GET(db, snap_ro, "b", "2");
  CHECK_GET(db, snap_ro, "c", "3");
  CHECK_GET(db, snap_ro, "d", NULL);
  it = sift_create_iterator(db, snap_ro);
  sift_iter_seek_to_first(it);
  CHECK_ITER(it, "a", "1");
  sift_iter_next(it);
  CHECK_ITER(it, "b", "2");
  sift_iter_next(it);
  CHECK_ITER(it, "c", "3");
  sift_iter_next(it);
  CHECK(!sift_iter_valid(it));
  sift_iter_destroy(it);

  /* A snapshot of another database is refused, not misread. */
  CHECK(sift_get(db2, snap_ro, "b", 1, &len, &err) == NULL);
  CHECK_ERROR(err, "another database");
  CHECK(sift_create_iterator(db2, snap_ro) == NULL);
  snap2 = sift_create_snapshot(db2);
  sift_release_snapshot(db, snap2); /* wrong database: left alone */
  sift_release_snapshot(db2, snap2);
  sift_release_snapshot(db, NULL);
  sift_release_snapshot(db, snap);
  sift_readoptions_set_snapshot(snap_ro, NULL);
  CHECK_GET(db, snap_ro, "b", "22");
  CHECK(sift_create_snapshot(NULL) == NULL);

  /* Misuse of iterators. */
  CHECK(sift_create_iterator(NULL, ro) == NULL);
  CHECK(sift_create_iterator(db, NULL) == NULL);
  CHECK(!sift_iter_valid(NULL));
  sift_iter_seek_to_first(NULL);
  sift_iter_seek_to_last(NULL);
  sift_iter_seek(NULL, "a", 1);
  sift_iter_next(NULL);
  sift_iter_prev(NULL);
  CHECK(sift_iter_key(NULL, &len) == NULL && len == 0);
  CHECK(sift_iter_value(NULL, NULL) == NULL);
  sift_iter_get_error(NULL, &err);
  CHECK_ERROR(err, "iterator is NULL");
  sift_iter_destroy(NULL);
  it = sift_create_iterator(db, ro);
  sift_iter_seek(it, NULL, 3); /* NULL target with a length: ignored */
  CHECK(!sift_iter_valid(it));
  sift_iter_destroy(it);

  /* Closing with a live iterator and snapshot: the iterator turns invalid
     and says why; the snapshot is released by the close. */
  orphan = sift_create_iterator(db, ro);
  sift_iter_seek_to_first(orphan);
  CHECK(sift_iter_valid(orphan));
  leaked = sift_create_snapshot(db);
  CHECK(leaked != NULL);
  sift_close(db);
  CHECK(!sift_iter_valid(orphan));
  sift_iter_seek_to_first(orphan);
  CHECK(!sift_iter_valid(orphan));
  CHECK(sift_iter_key(orphan, &len) == NULL);
  sift_iter_get_error(orphan, &err);
  CHECK_ERROR(err, "database is closed");
  sift_iter_destroy(orphan);

  sift_close(db2);
  sift_readoptions_destroy(ro);
  sift_readoptions_destroy(snap_ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

static void TestMultiGetAndStats(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db = sift_open(options, "/multi", &err);
  /* The absent key lies inside the table's key range: its filter is asked. */
  const char* keys[4] = {"k1", "k1a", "k2", "k1"};
  size_t key_sizes[4] = {2, 3, 2, 2};
  char* values[4];
  size_t sizes[4];
  char* errs[4];
  sift_read_stats_t stats;
  int i;
  CHECK_NO_ERROR(err);

  sift_put(db, wo, "k1", 2, "v1", 2, &err);
  sift_put(db, wo, "k2", 2, "value2", 6, &err);
  CHECK_NO_ERROR(err);
  sift_flush(db, &err);
  CHECK_NO_ERROR(err);

  sift_multi_get(db, ro, 4, keys, key_sizes, values, sizes, errs, &err);
  CHECK_NO_ERROR(err);
  CHECK(values[0] != NULL && sizes[0] == 2 && memcmp(values[0], "v1", 2) == 0);
  CHECK(values[1] == NULL && sizes[1] == 0 && errs[1] == NULL);
  CHECK(values[2] != NULL && sizes[2] == 6 &&
        memcmp(values[2], "value2", 6) == 0);
  CHECK(values[3] != NULL && sizes[3] == 2 && memcmp(values[3], "v1", 2) == 0);
  for (i = 0; i < 4; ++i) {
    CHECK(errs[i] == NULL);
    sift_free(values[i]);
    sift_free(errs[i]);
  }
  sift_multi_get(db, ro, 0, NULL, NULL, NULL, NULL, NULL, &err);
  CHECK_NO_ERROR(err);

  /* Misuse: the whole call fails and every entry is NULL / 0. */
  values[0] = (char*)"junk";
  sift_multi_get(NULL, ro, 4, keys, key_sizes, values, sizes, errs, &err);
  CHECK_ERROR(err, "sift_multi_get: db is NULL");
  CHECK(values[0] == NULL && sizes[0] == 0 && errs[0] == NULL);
  sift_multi_get(db, ro, 4, NULL, key_sizes, values, sizes, errs, &err);
  CHECK_ERROR(err, "keys_list is NULL");
  sift_multi_get(db, ro, 4, keys, key_sizes, NULL, sizes, errs, &err);
  CHECK_ERROR(err, "values_list is NULL");
  sift_multi_get(db, ro, 4, keys, key_sizes, values, sizes, NULL, &err);
  CHECK_ERROR(err, "errs is NULL");
  keys[1] = NULL;
  sift_multi_get(db, ro, 4, keys, key_sizes, values, sizes, errs, &err);
  CHECK_ERROR(err, "key is NULL with a nonzero length");
  CHECK(values[0] == NULL && values[2] == NULL);

  /* Read stats: four multi_get keys counted once each, plus two gets. */
  CHECK_GET(db, ro, "k1", "v1");
  CHECK_GET(db, ro, "k15", NULL);
  memset(&stats, 0xff, sizeof(stats));
  sift_get_read_stats(db, &stats, sizeof(stats), &err);
  CHECK_NO_ERROR(err);
  CHECK(stats.gets == 6);
  CHECK(stats.tables_probed >= 4);
  CHECK(stats.memtable_hits == 0);
  CHECK(stats.filter_negatives + stats.filter_false_positives >= 1);
  CHECK(stats.block_reads + stats.block_cache_hits >= 4);
  CHECK(stats.table_loads <= 1);
  CHECK(stats.filter_unit_loads == 0); /* no filter memory limit */
  /* A caller built against an older, shorter struct gets only its part. */
  memset(&stats, 0xff, sizeof(stats));
  sift_get_read_stats(db, &stats, sizeof(uint64_t), &err);
  CHECK_NO_ERROR(err);
  CHECK(stats.gets == 6 && stats.memtable_hits == UINT64_MAX);
  sift_get_read_stats(db, &stats, sizeof(stats) + 8, &err);
  CHECK_ERROR(err, "larger than");
  sift_get_read_stats(db, NULL, sizeof(stats), &err);
  CHECK_ERROR(err, "stats is NULL");
  sift_get_read_stats(NULL, &stats, sizeof(stats), &err);
  CHECK_ERROR(err, "db is NULL");

  sift_close(db);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

static void TestSizesAndCompaction(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db;
  char key[16];
  char value[1000];
  const char* starts[3] = {"", "k0050", "z"};
  const size_t start_lens[3] = {0, 5, 1};
  const char* limits[3] = {"k0050", "z", "zz"};
  const size_t limit_lens[3] = {5, 1, 2};
  uint64_t sizes[3];
  char* level0;
  int i;

  sift_options_set_compression(options, sift_no_compression);
  db = sift_open(options, "/sizes", &err);
  CHECK_NO_ERROR(err);
  memset(value, 'v', sizeof(value));
  for (i = 0; i < 100; ++i) {
    snprintf(key, sizeof(key), "k%04d", i);
    sift_put(db, wo, key, strlen(key), value, sizeof(value), &err);
  }
  CHECK_NO_ERROR(err);

  /* In the memtable only: nothing counted. */
  sift_approximate_sizes(db, 3, starts, start_lens, limits, limit_lens, sizes);
  CHECK(sizes[0] == 0 && sizes[1] == 0 && sizes[2] == 0);
  sift_flush(db, &err);
  CHECK_NO_ERROR(err);
  sift_approximate_sizes(db, 3, starts, start_lens, limits, limit_lens, sizes);
  CHECK(sizes[0] >= 45 * 1000 && sizes[0] <= 55 * 1000);
  CHECK(sizes[1] >= 45 * 1000 && sizes[1] <= 56 * 1000);
  CHECK(sizes[2] == 0);
  /* Misuse: zeros. */
  sizes[0] = 7;
  sift_approximate_sizes(NULL, 3, starts, start_lens, limits, limit_lens,
                         sizes);
  CHECK(sizes[0] == 0 && sizes[1] == 0);
  sizes[0] = 7;
  sift_approximate_sizes(db, 3, NULL, start_lens, limits, limit_lens, sizes);
  CHECK(sizes[0] == 0);
  sift_approximate_sizes(db, 0, NULL, NULL, NULL, NULL, NULL); /* no-op */

  /* Compaction moves the level-0 table down. */
  sift_compact_range(db, NULL, 0, NULL, 0);
  level0 = sift_property_value(db, "sift.num-files-at-level0");
  CHECK(level0 != NULL && strcmp(level0, "0") == 0);
  sift_free(level0);
  {
    size_t vlen = 0;
    char* got = sift_get(db, ro, "k0042", 5, &vlen, &err);
    CHECK_NO_ERROR(err);
    CHECK(got != NULL && vlen == sizeof(value) &&
          memcmp(got, value, vlen) == 0);
    sift_free(got);
  }
  sift_compact_range_with_error(db, "k0010", 5, "k0020", 5, &err);
  CHECK_NO_ERROR(err);
  sift_compact_range_with_error(db, NULL, 3, NULL, 0, &err);
  CHECK_ERROR(err, "NULL with a nonzero length");
  sift_compact_range_with_error(NULL, NULL, 0, NULL, 0, &err);
  CHECK_ERROR(err, "db is NULL");
  sift_compact_range(NULL, NULL, 0, NULL, 0); /* nothing to report to */
  sift_approximate_sizes(db, 3, starts, start_lens, limits, limit_lens, sizes);
  CHECK(sizes[0] >= 45 * 1000 && sizes[0] <= 56 * 1000);

  sift_close(db);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

static void TestCheckpointAndDestroy(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_options_t* no_create = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db = sift_open(options, "/source", &err);
  sift_t* copy;
  CHECK_NO_ERROR(err);
  sift_options_set_create_if_missing(no_create, 0);

  sift_put(db, wo, "flushed", 7, "1", 1, &err);
  sift_flush(db, &err);
  sift_put(db, wo, "logged", 6, "2", 1, &err);
  CHECK_NO_ERROR(err);
  sift_create_checkpoint(db, "/checkpoint", &err);
  CHECK_NO_ERROR(err);
  sift_put(db, wo, "later", 5, "3", 1, &err);
  CHECK_NO_ERROR(err);
  sift_create_checkpoint(db, "/checkpoint", &err);
  CHECK_ERROR(err, "exists");
  sift_create_checkpoint(db, NULL, &err);
  CHECK_ERROR(err, "dir is NULL");
  sift_create_checkpoint(NULL, "/c2", &err);
  CHECK_ERROR(err, "db is NULL");

  copy = sift_open(no_create, "/checkpoint", &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(copy, ro, "flushed", "1");
  CHECK_GET(copy, ro, "logged", "2");
  CHECK_GET(copy, ro, "later", NULL);
  sift_close(copy);

  /* An open database is not destroyed. */
  sift_destroy_db(options, "/source", &err);
  CHECK(err != NULL);
  sift_free(err);
  err = NULL;
  sift_close(db);
  sift_destroy_db(options, "/source", &err);
  CHECK_NO_ERROR(err);
  CHECK(sift_open(no_create, "/source", &err) == NULL);
  CHECK(err != NULL);
  sift_free(err);
  err = NULL;
  sift_destroy_db(options, "/never-created", &err);
  CHECK_NO_ERROR(err);
  sift_destroy_db(NULL, "/x", &err);
  CHECK_ERROR(err, "options is NULL");
  sift_destroy_db(options, NULL, &err);
  CHECK_ERROR(err, "name is NULL");

  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
  sift_options_destroy(no_create);
}

static void TestTableFilesAndIngestion(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_ingestoptions_t* io = sift_ingestoptions_create();
  sift_tablefilewriter_t* w;
  sift_t* db;
  const char* files[1] = {"/ext1.sst"};
  const char* missing[1] = {"/no-such.sst"};
  const char* null_name[1] = {NULL};
  size_t len = 3;
  const char* k;

  w = sift_tablefilewriter_open(options, "/ext1.sst", &err);
  CHECK_NO_ERROR(err);
  CHECK(w != NULL);
  CHECK(sift_tablefilewriter_file_size(w) == 0);
  CHECK(sift_tablefilewriter_smallest_key(w, &len) == NULL && len == 0);
  sift_tablefilewriter_put(w, "e1", 2, "x1", 2, &err);
  CHECK_NO_ERROR(err);
  sift_tablefilewriter_delete(w, "e2", 2, &err);
  CHECK_NO_ERROR(err);
  sift_tablefilewriter_put(w, "e3", 2, "x3", 2, &err);
  CHECK_NO_ERROR(err);
  sift_tablefilewriter_put(w, NULL, 1, "x", 1, &err);
  CHECK_ERROR(err, "key is NULL");
  sift_tablefilewriter_finish(w, &err);
  CHECK_NO_ERROR(err);
  CHECK(sift_tablefilewriter_num_entries(w) == 3);
  CHECK(sift_tablefilewriter_file_size(w) > 0);
  k = sift_tablefilewriter_smallest_key(w, &len);
  CHECK(k != NULL && len == 2 && memcmp(k, "e1", 2) == 0);
  k = sift_tablefilewriter_largest_key(w, &len);
  CHECK(k != NULL && len == 2 && memcmp(k, "e3", 2) == 0);
  sift_tablefilewriter_finish(w, &err);
  CHECK_ERROR(err, "finished");
  sift_tablefilewriter_put(w, "e4", 2, "x", 1, &err);
  CHECK_ERROR(err, "finished");
  sift_tablefilewriter_destroy(w);

  /* Out of order, and an empty file. */
  w = sift_tablefilewriter_open(options, "/bad.sst", &err);
  CHECK_NO_ERROR(err);
  sift_tablefilewriter_put(w, "b", 1, "1", 1, &err);
  CHECK_NO_ERROR(err);
  sift_tablefilewriter_put(w, "a", 1, "1", 1, &err);
  CHECK(err != NULL);
  sift_tablefilewriter_delete(w, "c", 1, &err); /* replaces the message */
  CHECK(err != NULL);
  sift_free(err);
  err = NULL;
  sift_tablefilewriter_destroy(w);
  w = sift_tablefilewriter_open(options, "/empty.sst", &err);
  CHECK_NO_ERROR(err);
  sift_tablefilewriter_finish(w, &err);
  CHECK(err != NULL);
  sift_free(err);
  err = NULL;
  sift_tablefilewriter_destroy(w);
  CHECK(sift_tablefilewriter_open(NULL, "/x.sst", &err) == NULL);
  CHECK_ERROR(err, "options is NULL");
  CHECK(sift_tablefilewriter_open(options, NULL, &err) == NULL);
  CHECK_ERROR(err, "path is NULL");
  sift_tablefilewriter_put(NULL, "a", 1, "1", 1, &err);
  CHECK_ERROR(err, "writer is NULL");
  sift_tablefilewriter_delete(NULL, "a", 1, &err);
  CHECK_ERROR(err, "writer is NULL");
  sift_tablefilewriter_finish(NULL, &err);
  CHECK_ERROR(err, "writer is NULL");
  CHECK(sift_tablefilewriter_num_entries(NULL) == 0);
  CHECK(sift_tablefilewriter_largest_key(NULL, &len) == NULL && len == 0);
  sift_options_set_compression(options, 42);
  CHECK(sift_tablefilewriter_open(options, "/x.sst", &err) == NULL);
  CHECK_ERROR(err, "compression 42");
  sift_options_set_compression(options, sift_snappy_compression);
  sift_options_destroy(options);
  options = MemOptions(env);

  /* Ingestion. */
  db = sift_open(options, "/ingest", &err);
  CHECK_NO_ERROR(err);
  sift_put(db, wo, "e2", 2, "old", 3, &err);
  CHECK_NO_ERROR(err);
  sift_ingestoptions_set_move_files(io, 1);
  sift_ingestoptions_set_verify_checksums(io, 1);
  sift_ingest_external_file(db, files, 1, io, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "e1", "x1");
  CHECK_GET(db, ro, "e2", NULL); /* the file's deletion is newer */
  CHECK_GET(db, ro, "e3", "x3");
  sift_ingest_external_file(db, missing, 1, io, &err);
  CHECK(err != NULL);
  sift_free(err);
  err = NULL;
  sift_ingest_external_file(db, files, 0, io, &err);
  CHECK_ERROR(err, "empty");
  sift_ingest_external_file(db, NULL, 1, io, &err);
  CHECK_ERROR(err, "file_list is NULL");
  sift_ingest_external_file(db, null_name, 1, io, &err);
  CHECK_ERROR(err, "a file name is NULL");
  sift_ingest_external_file(db, files, 1, NULL, &err);
  CHECK_ERROR(err, "options is NULL");
  sift_ingest_external_file(NULL, files, 1, io, &err);
  CHECK_ERROR(err, "db is NULL");

  sift_close(db);
  sift_ingestoptions_destroy(io);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

/* Iteration bounds of the read options: copied when set, copied again by
   each iterator, cleared by NULL. */
static void TestIterationBounds(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_readoptions_t* temp_ro;
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db = sift_open(options, "/bounds", &err);
  sift_iterator_t* it;
  char lower[2] = "b";
  char upper[2] = "d";
  const char* keys[] = {"a", "b", "c", "d", "e"};
  int i;
  CHECK_NO_ERROR(err);
  for (i = 0; i < 5; ++i) {
    sift_put(db, wo, keys[i], 1, keys[i], 1, &err);
    CHECK_NO_ERROR(err);
  }
  /* Half of the keys in a table, half in the memtable. */
  sift_flush(db, &err);
  CHECK_NO_ERROR(err);
  sift_put(db, wo, "c", 1, "C", 1, &err);
  CHECK_NO_ERROR(err);

  /* [b, d): the caller's buffers change afterwards; the bounds do not. */
  sift_readoptions_set_iterate_lower_bound(ro, lower, 1);
  sift_readoptions_set_iterate_upper_bound(ro, upper, 1);
  lower[0] = 'a';
  upper[0] = 'z';
  it = sift_create_iterator(db, ro);
  CHECK(it != NULL);
  sift_iter_seek_to_first(it);
  CHECK_ITER(it, "b", "b");
  sift_iter_next(it);
  CHECK_ITER(it, "c", "C");
  sift_iter_next(it);
  CHECK(!sift_iter_valid(it)); /* d is the exclusive upper bound */
  sift_iter_seek_to_last(it);
  CHECK_ITER(it, "c", "C");
  sift_iter_prev(it);
  CHECK_ITER(it, "b", "b");
  sift_iter_prev(it);
  CHECK(!sift_iter_valid(it)); /* a is below the lower bound */
  sift_iter_seek(it, "a", 1);
  CHECK_ITER(it, "b", "b");
  sift_iter_get_error(it, &err);
  CHECK_NO_ERROR(err);
  sift_iter_destroy(it);

  /* Clearing the lower bound: from the first key, still below d. */
  sift_readoptions_set_iterate_lower_bound(ro, NULL, 0);
  it = sift_create_iterator(db, ro);
  sift_iter_seek_to_first(it);
  CHECK_ITER(it, "a", "a");
  sift_iter_seek_to_last(it);
  CHECK_ITER(it, "c", "C");
  sift_iter_destroy(it);
  /* Both cleared: every key. */
  sift_readoptions_set_iterate_upper_bound(ro, NULL, 0);
  it = sift_create_iterator(db, ro);
  sift_iter_seek_to_last(it);
  CHECK_ITER(it, "e", "e");
  sift_iter_destroy(it);

  /* The iterator outlives its read options and keeps its bounds, even
     when the options are changed before they are destroyed. */
  temp_ro = sift_readoptions_create();
  sift_readoptions_set_iterate_lower_bound(temp_ro, "c", 1);
  sift_readoptions_set_iterate_upper_bound(temp_ro, "e", 1);
  it = sift_create_iterator(db, temp_ro);
  sift_readoptions_set_iterate_lower_bound(temp_ro, "a", 1);
  sift_readoptions_set_iterate_upper_bound(temp_ro, NULL, 0);
  sift_readoptions_destroy(temp_ro);
  sift_iter_seek_to_last(it);
  CHECK_ITER(it, "d", "d");
  sift_iter_prev(it);
  CHECK_ITER(it, "c", "C");
  sift_iter_prev(it);
  CHECK(!sift_iter_valid(it));
  sift_iter_seek_to_first(it);
  CHECK_ITER(it, "c", "C");
  sift_iter_destroy(it);

  /* An empty range, and a bound with an embedded zero byte. */
  sift_readoptions_set_iterate_lower_bound(ro, "c", 1);
  sift_readoptions_set_iterate_upper_bound(ro, "c", 1);
  it = sift_create_iterator(db, ro);
  sift_iter_seek_to_first(it);
  CHECK(!sift_iter_valid(it));
  sift_iter_destroy(it);
  sift_readoptions_set_iterate_lower_bound(ro, "b\0", 2);
  sift_readoptions_set_iterate_upper_bound(ro, NULL, 0);
  it = sift_create_iterator(db, ro);
  sift_iter_seek_to_first(it);
  CHECK_ITER(it, "c", "C");
  sift_iter_destroy(it);

  /* NULL options: nothing happens. */
  sift_readoptions_set_iterate_lower_bound(NULL, "a", 1);
  sift_readoptions_set_iterate_upper_bound(NULL, NULL, 0);

  sift_close(db);
  sift_destroy_db(options, "/bounds", &err);
  CHECK_NO_ERROR(err);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

/* sift_repair_db on real files: a database whose MANIFEST was destroyed
   (emptied through stdio) does not open; after the repair it does, with
   every write, and the old MANIFEST is in `dir`/lost. */
/* Prefix and range filters: the options, the extractors and their counters. */
static void TestScanFilters(sift_env_t* env) {
  char* err = NULL;
  sift_options_t* options = MemOptions(env);
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_prefixextractor_t* fixed = sift_prefixextractor_create_fixed(2);
  sift_prefixextractor_t* delimited =
      sift_prefixextractor_create_delimited(':');
  const char* keys[] = {"aa1", "aa2", "cc1", "cc2"};
  sift_read_stats_t stats;
  sift_iterator_t* it;
  sift_t* db;
  int i;

  CHECK(sift_prefixextractor_create_fixed(0) == NULL);
  CHECK(fixed != NULL && delimited != NULL);
  CHECK(strcmp(sift_prefixextractor_name(fixed), "sift.fixed:2") == 0);
  CHECK(strcmp(sift_prefixextractor_name(delimited), "sift.delimited:3a") == 0);
  CHECK(sift_prefixextractor_name(NULL) == NULL);
  sift_prefixextractor_destroy(NULL); /* allowed */

  /* Refused at open: prefixes alone with no extractor, range filter bits
     out of [2, 64]. A NULL extractor clears the one set before. */
  sift_options_set_prefix_extractor(options, delimited);
  sift_options_set_prefix_extractor(options, NULL);
  sift_options_set_whole_key_filtering(options, 0);
  db = sift_open(options, "/scan", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "whole_key_filtering");
  sift_options_set_whole_key_filtering(options, 1);
  sift_options_set_range_filter_bits_per_key(options, 1.0);
  db = sift_open(options, "/scan", &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, "range_filter_bits_per_key");

  /* The options share the extractor: destroying the handle first is fine. */
  sift_options_set_range_filter_bits_per_key(options, 16.0);
  sift_options_set_prefix_extractor(options, fixed);
  sift_prefixextractor_destroy(fixed);
  sift_options_set_prefix_extractor(NULL, delimited); /* nothing happens */
  sift_options_set_whole_key_filtering(NULL, 0);
  sift_options_set_range_filter_bits_per_key(NULL, 0.0);
  db = sift_open(options, "/scan", &err);
  CHECK_NO_ERROR(err);
  for (i = 0; i < 4; ++i) {
    sift_put(db, wo, keys[i], 3, keys[i], 3, &err);
    CHECK_NO_ERROR(err);
  }
  sift_flush(db, &err);
  CHECK_NO_ERROR(err);

  /* Within the seek target's prefix only: aa1, aa2, then the end. */
  sift_readoptions_set_prefix_same_as_start(ro, 1);
  sift_readoptions_set_prefix_same_as_start(NULL, 1); /* nothing happens */
  it = sift_create_iterator(db, ro);
  sift_iter_seek(it, "aa", 2);
  CHECK_ITER(it, "aa1", "aa1");
  sift_iter_next(it);
  CHECK_ITER(it, "aa2", "aa2");
  sift_iter_next(it);
  CHECK(!sift_iter_valid(it));
  /* bb lies inside the table's key range; its prefix filter rules it out. */
  sift_iter_seek(it, "bb", 2);
  CHECK(!sift_iter_valid(it));
  sift_iter_destroy(it);
  memset(&stats, 0xff, sizeof(stats));
  sift_get_read_stats(db, &stats, sizeof(stats), &err);
  CHECK_NO_ERROR(err);
  CHECK(stats.seeks == 2);
  CHECK(stats.prefix_filter_probes >= 1);
  CHECK(stats.prefix_filter_negatives >= 1);
  CHECK(stats.iterator_block_reads + stats.iterator_block_cache_hits >= 1);

  /* Bounds with no key between them, in a prefix that has keys: the
     prefix filter says "maybe", the range filter rules the bounds out. The
     table's keys are 3 bytes: the filter sees them as 3-byte integers, and
     [aaz, aa{) is one value 72 above aa2 (at 16 bits/key the FPR of a
     range of one value is below 0.002). */
  sift_readoptions_set_prefix_same_as_start(ro, 0);
  sift_readoptions_set_iterate_lower_bound(ro, "aaz", 3);
  sift_readoptions_set_iterate_upper_bound(ro, "aa{", 3);
  it = sift_create_iterator(db, ro);
  sift_iter_seek(it, "aaz", 3);
  CHECK(!sift_iter_valid(it));
  sift_iter_destroy(it);
  sift_get_read_stats(db, &stats, sizeof(stats), &err);
  CHECK_NO_ERROR(err);
  CHECK(stats.range_filter_probes >= 1);
  CHECK(stats.range_filter_negatives >= 1);
  /* Point reads are unchanged. */
  CHECK_GET(db, ro, "cc2", "cc2");
  CHECK_GET(db, ro, "bb1", NULL);
  sift_close(db);

  /* Prefixes only in the filters: scans are filtered, gets still right. */
  sift_options_set_prefix_extractor(options, delimited);
  sift_options_set_whole_key_filtering(options, 0);
  sift_options_set_range_filter_bits_per_key(options, 0.0);
  db = sift_open(options, "/scan_prefix_only", &err);
  CHECK_NO_ERROR(err);
  sift_put(db, wo, "user:1", 6, "one", 3, &err);
  CHECK_NO_ERROR(err);
  sift_flush(db, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "user:1", "one");
  CHECK_GET(db, ro, "user:2", NULL);
  sift_close(db);

  sift_prefixextractor_destroy(delimited);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

static void TestRepair(const char* dir) {
  char* err = NULL;
  sift_options_t* options = sift_options_create();
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db;
  char path[1024];
  char lost[1024];
  char manifest[256];
  FILE* f;
  size_t n;
  sift_options_set_create_if_missing(options, 1);

  sift_destroy_db(options, dir, &err);
  CHECK_NO_ERROR(err);
  db = sift_open(options, dir, &err);
  CHECK_NO_ERROR(err);
  sift_put(db, wo, "table", 5, "t", 1, &err);
  sift_flush(db, &err);
  sift_put(db, wo, "wal", 3, "w", 1, &err);
  CHECK_NO_ERROR(err);
  sift_close(db);

  /* CURRENT holds the MANIFEST's name and a newline. */
  snprintf(path, sizeof(path), "%s/CURRENT", dir);
  f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f == NULL) goto done;
  n = fread(manifest, 1, sizeof(manifest) - 1, f);
  fclose(f);
  manifest[n] = '\0';
  if (n > 0 && manifest[n - 1] == '\n') manifest[n - 1] = '\0';
  CHECK(strncmp(manifest, "MANIFEST-", 9) == 0);
  snprintf(path, sizeof(path), "%s/%s", dir, manifest);
  f = fopen(path, "wb"); /* truncated: every record gone */
  CHECK(f != NULL);
  if (f != NULL) fclose(f);

  sift_options_set_create_if_missing(options, 0);
  db = sift_open(options, dir, &err);
  CHECK(db == NULL);
  CHECK_ERROR(err, manifest);

  sift_repair_db(options, dir, &err);
  CHECK_NO_ERROR(err);
  db = sift_open(options, dir, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "table", "t");
  CHECK_GET(db, ro, "wal", "w");
  /* Refused while the database is open. */
  sift_repair_db(options, dir, &err);
  CHECK_ERROR(err, "lock");
  sift_close(db);

  /* The damaged MANIFEST was set aside, not deleted; clean it up (remove
     takes an empty directory too). */
  snprintf(lost, sizeof(lost), "%s/lost/%s", dir, manifest);
  CHECK(remove(lost) == 0);
  snprintf(lost, sizeof(lost), "%s/lost", dir);
  CHECK(remove(lost) == 0);

  /* Misuse: NULL arguments, a directory that is not there. */
  sift_repair_db(NULL, dir, &err);
  CHECK_ERROR(err, "options");
  sift_repair_db(options, NULL, &err);
  CHECK_ERROR(err, "name");
  snprintf(path, sizeof(path), "%s/no-such-db", dir);
  sift_repair_db(options, path, &err);
  CHECK_ERROR(err, "no-such-db");

done:
  sift_destroy_db(options, dir, &err);
  CHECK_NO_ERROR(err);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
}

/* The default Env on real files in `dir`: data survives a reopen. */
static void TestOnDisk(const char* dir) {
  char* err = NULL;
  sift_env_t* env = sift_create_default_env();
  sift_options_t* options = sift_options_create();
  sift_readoptions_t* ro = sift_readoptions_create();
  sift_writeoptions_t* wo = sift_writeoptions_create();
  sift_t* db;
  CHECK(env != NULL);
  sift_options_set_env(options, env);
  sift_options_set_create_if_missing(options, 1);
  sift_options_set_allow_mmap_reads(options, 1);
  sift_options_set_use_direct_reads(options, 0);

  sift_destroy_db(options, dir, &err);
  CHECK_NO_ERROR(err);
  db = sift_open(options, dir, &err);
  CHECK_NO_ERROR(err);
  sift_put(db, wo, "disk", 4, "yes", 3, &err);
  CHECK_NO_ERROR(err);
  sift_flush(db, &err);
  CHECK_NO_ERROR(err);
  sift_put(db, wo, "wal", 3, "too", 3, &err);
  CHECK_NO_ERROR(err);
  sift_close(db);
  db = sift_open(options, dir, &err);
  CHECK_NO_ERROR(err);
  CHECK_GET(db, ro, "disk", "yes");
  CHECK_GET(db, ro, "wal", "too");
  sift_close(db);
  sift_destroy_db(options, dir, &err);
  CHECK_NO_ERROR(err);

  /* NULL env in the options: the default environment too. */
  sift_options_set_env(options, NULL);
  db = sift_open(options, dir, &err);
  CHECK_NO_ERROR(err);
  sift_close(db);
  sift_destroy_db(options, dir, &err);
  CHECK_NO_ERROR(err);

  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
  sift_env_destroy(env);
}

int main(int argc, char** argv) {
  sift_env_t* env = sift_create_mem_env();
  CHECK(env != NULL);
  TestVersionAndFree();
  TestOptionsValidation(env);
  TestBasicOps(env);
  TestWriteBatch(env);
  TestIteratorsAndSnapshots(env);
  TestMultiGetAndStats(env);
  TestSizesAndCompaction(env);
  TestCheckpointAndDestroy(env);
  TestTableFilesAndIngestion(env);
  TestIterationBounds(env);
  TestScanFilters(env);
  sift_env_destroy(env);
  TestOnDisk(argc > 1 ? argv[1] : "c_api_test_db");
  TestRepair(argc > 1 ? argv[1] : "c_api_test_db");
  printf("c_api: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
