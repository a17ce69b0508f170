// The C API (include/sift/c.h): a thin layer over the public C++ API. Each
// entry point checks what a C caller can get wrong (NULL handles, NULL keys
// with a length, out-of-range options) and turns statuses and exceptions
// into malloc'd messages, so nothing undefined or thrown crosses into C.

#include "sift/c.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/prefix_extractor.h"
#include "sift/table_file_writer.h"
#include "sift/write_batch.h"

using sift::DB;
using sift::Env;
using sift::IngestOptions;
using sift::Iterator;
using sift::KeyRange;
using sift::Options;
using sift::ReadOptions;
using sift::ReadStats;
using sift::Snapshot;
using sift::TableFileWriter;
using sift::WriteBatch;
using sift::WriteOptions;

extern "C" {

struct sift_t {
  std::unique_ptr<DB> db;
  // Handles that depend on the DB: sift_close deals with them (the C++ DB
  // must outlive its iterators and get its snapshots back).
  std::set<sift_iterator_t*> iterators;
  std::set<sift_snapshot_t*> snapshots;
};

struct sift_env_t {
  Env* env;                    // what Options::env points to
  std::unique_ptr<Env> owned;  // set for an Env this handle made
};

struct sift_iterator_t {
  std::unique_ptr<Iterator> iter;
  sift_t* db;  // nullptr once the database is closed
  // Copies of the read options' bounds, which the C++ iterator reads for its
  // whole life: the read options may be destroyed first.
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
};

struct sift_snapshot_t {
  const Snapshot* snapshot;
  sift_t* db;
};

struct sift_writebatch_t {
  WriteBatch rep;
  // The first misuse of put/delete; sift_write refuses the batch with it.
  std::string error;
};

struct sift_options_t {
  Options rep;
  // The first setter given a value that is not even representable in
  // Options (an unknown enumerator, a negative size); sift_open reports it.
  std::string error;
};

struct sift_readoptions_t {
  ReadOptions rep;
  const sift_snapshot_t* snapshot = nullptr;
  // The iteration bounds' bytes, owned here: rep's views are pointed at them
  // only when a read is made (ToReadOptions), so a copy of the struct never
  // holds views into another copy.
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
  // A bound that could not be copied (out of memory); reads report it.
  std::string error;
};

struct sift_writeoptions_t {
  WriteOptions rep;
};

struct sift_ingestoptions_t {
  IngestOptions rep;
};

struct sift_prefixextractor_t {
  std::shared_ptr<const sift::PrefixExtractor> rep;
  std::string name;  // rep->Name() with a terminator, for C
};

struct sift_tablefilewriter_t {
  std::unique_ptr<TableFileWriter> writer;
  std::optional<sift::ExternalTableInfo> info;  // set by a successful finish
  bool finished = false;  // Finish was called (it may be called once)
};

}  // extern "C"

namespace {

char* CopyString(std::string_view s) {
  char* result = static_cast<char*>(std::malloc(s.size() + 1));
  if (result == nullptr) return nullptr;
  if (!s.empty()) std::memcpy(result, s.data(), s.size());
  result[s.size()] = '\0';
  return result;
}

// Bytes without a terminator; malloc(0) may return NULL, so at least one
// byte is allocated: a present empty value is a non-NULL pointer.
char* CopyBytes(std::string_view s) {
  char* result = static_cast<char*>(std::malloc(s.empty() ? 1 : s.size()));
  if (result != nullptr && !s.empty()) {
    std::memcpy(result, s.data(), s.size());
  }
  return result;
}

// Replaces *errptr with `message`. A NULL errptr is the caller's misuse;
// there is nowhere to report it, so the message is dropped.
void SetError(char** errptr, std::string_view message) {
  if (errptr == nullptr) return;
  std::free(*errptr);
  *errptr = CopyString(message);
}

// True (and *errptr untouched) if `s` is OK.
bool SaveError(char** errptr, const absl::Status& s) {
  if (s.ok()) return true;
  SetError(errptr, s.ToString());
  return false;
}

// The message for an exception caught at the boundary.
std::string ExceptionMessage(const char* function) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return std::string(function) + ": out of memory";
  } catch (const std::exception& e) {
    return std::string(function) + ": " + e.what();
  } catch (...) {
    return std::string(function) + ": unknown exception";
  }
}

// Runs `body` (returning true on success), reporting a caught exception
// through errptr. Returns whether `body` succeeded.
template <typename Body>
bool Guard(const char* function, char** errptr, Body&& body) {
  try {
    return body();
  } catch (...) {
    SetError(errptr, ExceptionMessage(function));
    return false;
  }
}

// A (pointer, length) argument as a view; false if the pointer is NULL with
// a nonzero length.
bool ToView(const char* data, size_t len, std::string_view* out) {
  if (data == nullptr) {
    if (len != 0) return false;
    *out = std::string_view();
    return true;
  }
  *out = std::string_view(data, len);
  return true;
}

// Checks a database handle; sets *errptr naming `function` if it is NULL.
bool CheckDB(const char* function, const sift_t* db, char** errptr) {
  if (db == nullptr || db->db == nullptr) {
    SetError(errptr, std::string(function) + ": db is NULL");
    return false;
  }
  return true;
}

bool CheckNotNull(const char* function, const void* p, const char* what,
                  char** errptr) {
  if (p == nullptr) {
    SetError(errptr, std::string(function) + ": " + what + " is NULL");
    return false;
  }
  return true;
}

bool CheckKey(const char* function, const char* key, size_t keylen,
              std::string_view* out, char** errptr, const char* what = "key") {
  if (!ToView(key, keylen, out)) {
    SetError(errptr, std::string(function) + ": " + what +
                         " is NULL with a nonzero length");
    return false;
  }
  return true;
}

// The C++ ReadOptions of `options` for reads of `db`: false (and *errptr
// set) if its snapshot belongs to another database.
bool ToReadOptions(const char* function, const sift_t* db,
                   const sift_readoptions_t* options, ReadOptions* out,
                   char** errptr) {
  if (!CheckNotNull(function, options, "options", errptr)) return false;
  if (!options->error.empty()) {
    SetError(errptr, std::string(function) + ": " + options->error);
    return false;
  }
  *out = options->rep;
  // Views of the bytes `options` owns, valid while it lives unchanged (a
  // call's duration); an iterator re-points them at copies of its own.
  out->iterate_lower_bound.reset();
  out->iterate_upper_bound.reset();
  if (options->lower_bound) out->iterate_lower_bound = *options->lower_bound;
  if (options->upper_bound) out->iterate_upper_bound = *options->upper_bound;
  if (options->snapshot != nullptr) {
    if (options->snapshot->db != db) {
      SetError(errptr, std::string(function) +
                           ": the snapshot of the read options belongs to "
                           "another database");
      return false;
    }
    out->snapshot = options->snapshot->snapshot;
  }
  return true;
}

void SetOptionError(sift_options_t* options, std::string message) {
  if (options->error.empty()) options->error = std::move(message);
}

// Options ready for sift::DB::Open or TableFileWriter::Open.
bool ToOptions(const char* function, const sift_options_t* options,
               char** errptr) {
  if (!CheckNotNull(function, options, "options", errptr)) return false;
  if (!options->error.empty()) {
    SetError(errptr, std::string(function) + ": " + options->error);
    return false;
  }
  return true;
}

// The C++ iterator if `iter` is usable, else nullptr.
Iterator* Live(const sift_iterator_t* iter) {
  return iter == nullptr ? nullptr : iter->iter.get();
}

void RecordBatchError(sift_writebatch_t* batch, const char* message) {
  try {
    if (batch->error.empty()) batch->error = message;
  } catch (...) {
    // Out of memory for the message: the batch cannot say why, but an
    // empty message would let it through, so keep a fixed one.
  }
  if (batch->error.empty()) batch->error.assign("out of memory");
}

bool CheckWriter(const char* function, const sift_tablefilewriter_t* writer,
                 char** errptr) {
  if (!CheckNotNull(function, writer, "writer", errptr)) return false;
  if (writer->finished) {
    SetError(errptr, std::string(function) + ": the writer is finished");
    return false;
  }
  return true;
}

}  // namespace

extern "C" {

// ---- Database ----

sift_t* sift_open(const sift_options_t* options, const char* name,
                  char** errptr) {
  sift_t* result = nullptr;
  Guard("sift_open", errptr, [&] {
    if (!ToOptions("sift_open", options, errptr) ||
        !CheckNotNull("sift_open", name, "name", errptr)) {
      return false;
    }
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options->rep, name);
    if (!SaveError(errptr, db.status())) return false;
    auto handle = std::make_unique<sift_t>();
    handle->db = *std::move(db);
    result = handle.release();
    return true;
  });
  return result;
}

void sift_close(sift_t* db) {
  if (db == nullptr) return;
  // Destruction of the C++ objects does not throw; the set operations
  // below only erase.
  for (sift_iterator_t* iter : db->iterators) {
    iter->iter.reset();
    iter->db = nullptr;
  }
  for (sift_snapshot_t* snapshot : db->snapshots) {
    db->db->ReleaseSnapshot(snapshot->snapshot);
    delete snapshot;
  }
  delete db;
}

void sift_put(sift_t* db, const sift_writeoptions_t* options, const char* key,
              size_t keylen, const char* val, size_t vallen, char** errptr) {
  Guard("sift_put", errptr, [&] {
    std::string_view k, v;
    if (!CheckDB("sift_put", db, errptr) ||
        !CheckNotNull("sift_put", options, "options", errptr) ||
        !CheckKey("sift_put", key, keylen, &k, errptr) ||
        !CheckKey("sift_put", val, vallen, &v, errptr, "value")) {
      return false;
    }
    return SaveError(errptr, db->db->Put(options->rep, k, v));
  });
}

void sift_delete(sift_t* db, const sift_writeoptions_t* options,
                 const char* key, size_t keylen, char** errptr) {
  Guard("sift_delete", errptr, [&] {
    std::string_view k;
    if (!CheckDB("sift_delete", db, errptr) ||
        !CheckNotNull("sift_delete", options, "options", errptr) ||
        !CheckKey("sift_delete", key, keylen, &k, errptr)) {
      return false;
    }
    return SaveError(errptr, db->db->Delete(options->rep, k));
  });
}

void sift_write(sift_t* db, const sift_writeoptions_t* options,
                sift_writebatch_t* batch, char** errptr) {
  Guard("sift_write", errptr, [&] {
    if (!CheckDB("sift_write", db, errptr) ||
        !CheckNotNull("sift_write", options, "options", errptr) ||
        !CheckNotNull("sift_write", batch, "batch", errptr)) {
      return false;
    }
    if (!batch->error.empty()) {
      SetError(errptr, "sift_write: the batch is refused: " + batch->error);
      return false;
    }
    return SaveError(errptr, db->db->Write(options->rep, &batch->rep));
  });
}

char* sift_get(sift_t* db, const sift_readoptions_t* options, const char* key,
               size_t keylen, size_t* vallen, char** errptr) {
  char* result = nullptr;
  if (vallen != nullptr) *vallen = 0;
  Guard("sift_get", errptr, [&] {
    std::string_view k;
    ReadOptions ro;
    if (!CheckDB("sift_get", db, errptr) ||
        !CheckNotNull("sift_get", vallen, "vallen", errptr) ||
        !ToReadOptions("sift_get", db, options, &ro, errptr) ||
        !CheckKey("sift_get", key, keylen, &k, errptr)) {
      return false;
    }
    std::string value;
    absl::Status s = db->db->Get(ro, k, &value);
    if (absl::IsNotFound(s)) return true;
    if (!SaveError(errptr, s)) return false;
    result = CopyBytes(value);
    if (result == nullptr) throw std::bad_alloc();
    *vallen = value.size();
    return true;
  });
  return result;
}

void sift_multi_get(sift_t* db, const sift_readoptions_t* options,
                    size_t num_keys, const char* const* keys_list,
                    const size_t* keys_list_sizes, char** values_list,
                    size_t* values_list_sizes, char** errs, char** errptr) {
  // Every output entry is defined whatever happens below.
  for (size_t i = 0; i < num_keys; ++i) {
    if (values_list != nullptr) values_list[i] = nullptr;
    if (values_list_sizes != nullptr) values_list_sizes[i] = 0;
    if (errs != nullptr) errs[i] = nullptr;
  }
  const bool ok = Guard("sift_multi_get", errptr, [&] {
    ReadOptions ro;
    if (!CheckDB("sift_multi_get", db, errptr) ||
        !ToReadOptions("sift_multi_get", db, options, &ro, errptr)) {
      return false;
    }
    if (num_keys > 0 &&
        (!CheckNotNull("sift_multi_get", keys_list, "keys_list", errptr) ||
         !CheckNotNull("sift_multi_get", keys_list_sizes, "keys_list_sizes",
                       errptr) ||
         !CheckNotNull("sift_multi_get", values_list, "values_list", errptr) ||
         !CheckNotNull("sift_multi_get", values_list_sizes, "values_list_sizes",
                       errptr) ||
         !CheckNotNull("sift_multi_get", errs, "errs", errptr))) {
      return false;
    }
    std::vector<std::string_view> keys(num_keys);
    for (size_t i = 0; i < num_keys; ++i) {
      if (!CheckKey("sift_multi_get", keys_list[i], keys_list_sizes[i],
                    &keys[i], errptr)) {
        return false;
      }
    }
    std::vector<std::string> values;
    const std::vector<absl::Status> statuses =
        db->db->MultiGet(ro, absl::MakeConstSpan(keys), &values);
    for (size_t i = 0; i < num_keys; ++i) {
      if (statuses[i].ok()) {
        values_list[i] = CopyBytes(values[i]);
        if (values_list[i] == nullptr) throw std::bad_alloc();
        values_list_sizes[i] = values[i].size();
      } else if (!absl::IsNotFound(statuses[i])) {
        errs[i] = CopyString(statuses[i].ToString());
        if (errs[i] == nullptr) throw std::bad_alloc();
      }
    }
    return true;
  });
  if (!ok) {
    // A failure part-way (out of memory) frees what was handed out.
    for (size_t i = 0; i < num_keys; ++i) {
      if (values_list != nullptr) {
        std::free(values_list[i]);
        values_list[i] = nullptr;
      }
      if (values_list_sizes != nullptr) values_list_sizes[i] = 0;
      if (errs != nullptr) {
        std::free(errs[i]);
        errs[i] = nullptr;
      }
    }
  }
}

sift_iterator_t* sift_create_iterator(sift_t* db,
                                      const sift_readoptions_t* options) {
  sift_iterator_t* result = nullptr;
  char* err = nullptr;
  Guard("sift_create_iterator", &err, [&] {
    ReadOptions ro;
    if (!CheckDB("sift_create_iterator", db, &err) ||
        !ToReadOptions("sift_create_iterator", db, options, &ro, &err)) {
      return false;
    }
    auto iter = std::make_unique<sift_iterator_t>();
    iter->lower_bound = options->lower_bound;
    iter->upper_bound = options->upper_bound;
    if (iter->lower_bound) ro.iterate_lower_bound = *iter->lower_bound;
    if (iter->upper_bound) ro.iterate_upper_bound = *iter->upper_bound;
    iter->iter = db->db->NewIterator(ro);
    iter->db = db;
    db->iterators.insert(iter.get());
    result = iter.release();
    return true;
  });
  std::free(err);  // no errptr in this signature: misuse gives NULL
  return result;
}

const sift_snapshot_t* sift_create_snapshot(sift_t* db) {
  if (db == nullptr || db->db == nullptr) return nullptr;
  try {
    auto snapshot = std::make_unique<sift_snapshot_t>();
    snapshot->db = db;
    snapshot->snapshot = db->db->GetSnapshot();
    db->snapshots.insert(snapshot.get());
    return snapshot.release();
  } catch (...) {
    return nullptr;
  }
}

void sift_release_snapshot(sift_t* db, const sift_snapshot_t* snapshot) {
  if (db == nullptr || snapshot == nullptr || snapshot->db != db) return;
  auto* s = const_cast<sift_snapshot_t*>(snapshot);
  if (db->snapshots.erase(s) == 0) return;  // not a live snapshot of db
  db->db->ReleaseSnapshot(s->snapshot);
  delete s;
}

char* sift_property_value(sift_t* db, const char* propname) {
  if (db == nullptr || db->db == nullptr || propname == nullptr) {
    return nullptr;
  }
  try {
    std::optional<std::string> value = db->db->GetProperty(propname);
    return value.has_value() ? CopyString(*value) : nullptr;
  } catch (...) {
    return nullptr;
  }
}

void sift_approximate_sizes(sift_t* db, int num_ranges,
                            const char* const* range_start_key,
                            const size_t* range_start_key_len,
                            const char* const* range_limit_key,
                            const size_t* range_limit_key_len,
                            uint64_t* sizes) {
  if (sizes == nullptr || num_ranges <= 0) return;
  const size_t n = static_cast<size_t>(num_ranges);
  for (size_t i = 0; i < n; ++i) sizes[i] = 0;
  if (db == nullptr || db->db == nullptr || range_start_key == nullptr ||
      range_start_key_len == nullptr || range_limit_key == nullptr ||
      range_limit_key_len == nullptr) {
    return;
  }
  try {
    std::vector<KeyRange> ranges(n);
    for (size_t i = 0; i < n; ++i) {
      // A bad key leaves the whole call at 0: there is no errptr to say
      // which range was wrong.
      if (!ToView(range_start_key[i], range_start_key_len[i],
                  &ranges[i].start) ||
          !ToView(range_limit_key[i], range_limit_key_len[i],
                  &ranges[i].limit)) {
        return;
      }
    }
    const std::vector<uint64_t> result = db->db->GetApproximateSizes(ranges);
    for (size_t i = 0; i < n && i < result.size(); ++i) sizes[i] = result[i];
  } catch (...) {
    for (size_t i = 0; i < n; ++i) sizes[i] = 0;
  }
}

void sift_compact_range_with_error(sift_t* db, const char* start_key,
                                   size_t start_key_len, const char* limit_key,
                                   size_t limit_key_len, char** errptr) {
  Guard("sift_compact_range", errptr, [&] {
    if (!CheckDB("sift_compact_range", db, errptr)) return false;
    if ((start_key == nullptr && start_key_len != 0) ||
        (limit_key == nullptr && limit_key_len != 0)) {
      SetError(errptr,
               "sift_compact_range: a key is NULL with a nonzero length");
      return false;
    }
    std::optional<std::string> begin;
    std::optional<std::string> end;
    if (start_key != nullptr) begin.emplace(start_key, start_key_len);
    if (limit_key != nullptr) end.emplace(limit_key, limit_key_len);
    return SaveError(errptr, db->db->CompactRange(begin ? &*begin : nullptr,
                                                  end ? &*end : nullptr));
  });
}

void sift_compact_range(sift_t* db, const char* start_key, size_t start_key_len,
                        const char* limit_key, size_t limit_key_len) {
  char* err = nullptr;
  sift_compact_range_with_error(db, start_key, start_key_len, limit_key,
                                limit_key_len, &err);
  std::free(err);  // LevelDB's signature reports nothing
}

void sift_flush(sift_t* db, char** errptr) {
  Guard("sift_flush", errptr, [&] {
    return CheckDB("sift_flush", db, errptr) &&
           SaveError(errptr, db->db->Flush());
  });
}

void sift_create_checkpoint(sift_t* db, const char* dir, char** errptr) {
  Guard("sift_create_checkpoint", errptr, [&] {
    return CheckDB("sift_create_checkpoint", db, errptr) &&
           CheckNotNull("sift_create_checkpoint", dir, "dir", errptr) &&
           SaveError(errptr, db->db->CreateCheckpoint(dir));
  });
}

void sift_get_read_stats(sift_t* db, sift_read_stats_t* stats,
                         size_t stats_size, char** errptr) {
  Guard("sift_get_read_stats", errptr, [&] {
    if (!CheckDB("sift_get_read_stats", db, errptr) ||
        !CheckNotNull("sift_get_read_stats", stats, "stats", errptr)) {
      return false;
    }
    if (stats_size > sizeof(sift_read_stats_t)) {
      SetError(errptr,
               "sift_get_read_stats: stats_size " + std::to_string(stats_size) +
                   " is larger than this library's sift_read_stats_t (" +
                   std::to_string(sizeof(sift_read_stats_t)) + " bytes)");
      return false;
    }
    const ReadStats s = db->db->GetReadStats();
    sift_read_stats_t out;
    out.gets = s.gets;
    out.memtable_hits = s.memtable_hits;
    out.tables_probed = s.tables_probed;
    out.filter_negatives = s.filter_negatives;
    out.filter_positives = s.filter_positives;
    out.filter_false_positives = s.filter_false_positives;
    out.block_cache_hits = s.block_cache_hits;
    out.block_reads = s.block_reads;
    out.bytes_read = s.bytes_read;
    out.table_loads = s.table_loads;
    out.filter_unit_loads = s.filter_unit_loads;
    out.seeks = s.seeks;
    out.iterator_block_reads = s.iterator_block_reads;
    out.iterator_block_cache_hits = s.iterator_block_cache_hits;
    out.prefix_filter_probes = s.prefix_filter_probes;
    out.prefix_filter_negatives = s.prefix_filter_negatives;
    out.range_filter_probes = s.range_filter_probes;
    out.range_filter_negatives = s.range_filter_negatives;
    out.range_filter_false_positives = s.range_filter_false_positives;
    std::memcpy(stats, &out, stats_size);
    return true;
  });
}

void sift_destroy_db(const sift_options_t* options, const char* name,
                     char** errptr) {
  Guard("sift_destroy_db", errptr, [&] {
    return ToOptions("sift_destroy_db", options, errptr) &&
           CheckNotNull("sift_destroy_db", name, "name", errptr) &&
           SaveError(errptr, sift::DestroyDB(name, options->rep));
  });
}

void sift_repair_db(const sift_options_t* options, const char* name,
                    char** errptr) {
  Guard("sift_repair_db", errptr, [&] {
    return ToOptions("sift_repair_db", options, errptr) &&
           CheckNotNull("sift_repair_db", name, "name", errptr) &&
           SaveError(errptr, sift::RepairDB(name, options->rep));
  });
}

// ---- Iterators ----

void sift_iter_destroy(sift_iterator_t* iter) {
  if (iter == nullptr) return;
  if (iter->db != nullptr) iter->db->iterators.erase(iter);
  delete iter;
}

uint8_t sift_iter_valid(const sift_iterator_t* iter) {
  Iterator* it = Live(iter);
  return it != nullptr && it->Valid() ? 1 : 0;
}

void sift_iter_seek_to_first(sift_iterator_t* iter) {
  if (Iterator* it = Live(iter); it != nullptr) it->SeekToFirst();
}

void sift_iter_seek_to_last(sift_iterator_t* iter) {
  if (Iterator* it = Live(iter); it != nullptr) it->SeekToLast();
}

void sift_iter_seek(sift_iterator_t* iter, const char* k, size_t klen) {
  std::string_view target;
  if (!ToView(k, klen, &target)) return;
  if (Iterator* it = Live(iter); it != nullptr) it->Seek(target);
}

void sift_iter_next(sift_iterator_t* iter) {
  if (Iterator* it = Live(iter); it != nullptr && it->Valid()) it->Next();
}

void sift_iter_prev(sift_iterator_t* iter) {
  if (Iterator* it = Live(iter); it != nullptr && it->Valid()) it->Prev();
}

const char* sift_iter_key(const sift_iterator_t* iter, size_t* klen) {
  Iterator* it = Live(iter);
  if (it == nullptr || !it->Valid()) {
    if (klen != nullptr) *klen = 0;
    return nullptr;
  }
  const std::string_view key = it->key();
  if (klen != nullptr) *klen = key.size();
  return key.data();
}

const char* sift_iter_value(const sift_iterator_t* iter, size_t* vlen) {
  Iterator* it = Live(iter);
  if (it == nullptr || !it->Valid()) {
    if (vlen != nullptr) *vlen = 0;
    return nullptr;
  }
  const std::string_view value = it->value();
  if (vlen != nullptr) *vlen = value.size();
  return value.data();
}

void sift_iter_get_error(const sift_iterator_t* iter, char** errptr) {
  Guard("sift_iter_get_error", errptr, [&] {
    if (!CheckNotNull("sift_iter_get_error", iter, "iterator", errptr)) {
      return false;
    }
    if (iter->iter == nullptr) {
      SetError(errptr,
               "sift_iter_get_error: the iterator's database is closed");
      return false;
    }
    return SaveError(errptr, iter->iter->status());
  });
}

// ---- Write batches ----

sift_writebatch_t* sift_writebatch_create(void) {
  return new (std::nothrow) sift_writebatch_t;
}

void sift_writebatch_destroy(sift_writebatch_t* batch) { delete batch; }

void sift_writebatch_clear(sift_writebatch_t* batch) {
  if (batch == nullptr) return;
  batch->rep.Clear();
  batch->error.clear();
}

void sift_writebatch_put(sift_writebatch_t* batch, const char* key, size_t klen,
                         const char* val, size_t vlen) {
  if (batch == nullptr) return;
  std::string_view k, v;
  if (!ToView(key, klen, &k) || !ToView(val, vlen, &v)) {
    RecordBatchError(batch,
                     "sift_writebatch_put: key or value is NULL with a "
                     "nonzero length");
    return;
  }
  try {
    batch->rep.Put(k, v);
  } catch (...) {
    RecordBatchError(batch, "sift_writebatch_put: out of memory");
  }
}

void sift_writebatch_delete(sift_writebatch_t* batch, const char* key,
                            size_t klen) {
  if (batch == nullptr) return;
  std::string_view k;
  if (!ToView(key, klen, &k)) {
    RecordBatchError(batch,
                     "sift_writebatch_delete: key is NULL with a nonzero "
                     "length");
    return;
  }
  try {
    batch->rep.Delete(k);
  } catch (...) {
    RecordBatchError(batch, "sift_writebatch_delete: out of memory");
  }
}

void sift_writebatch_iterate(const sift_writebatch_t* batch, void* state,
                             void (*put)(void*, const char* k, size_t klen,
                                         const char* v, size_t vlen),
                             void (*deleted)(void*, const char* k,
                                             size_t klen)) {
  if (batch == nullptr) return;
  class Handler final : public WriteBatch::Handler {
   public:
    Handler(void* state, decltype(put) put_fn, decltype(deleted) delete_fn)
        : state_(state), put_(put_fn), delete_(delete_fn) {}
    void Put(std::string_view key, std::string_view value) override {
      if (put_ != nullptr) {
        put_(state_, key.data(), key.size(), value.data(), value.size());
      }
    }
    void Delete(std::string_view key) override {
      if (delete_ != nullptr) delete_(state_, key.data(), key.size());
    }

   private:
    void* const state_;
    decltype(put) const put_;
    decltype(deleted) const delete_;
  };
  Handler handler(state, put, deleted);
  // A batch built through this API is always well formed; a status can only
  // report damaged bytes read back from a log.
  try {
    (void)batch->rep.Iterate(&handler);
  } catch (...) {
  }
}

void sift_writebatch_append(sift_writebatch_t* destination,
                            const sift_writebatch_t* source) {
  if (destination == nullptr || source == nullptr) return;
  try {
    destination->rep.Append(source->rep);
    if (destination->error.empty()) destination->error = source->error;
  } catch (...) {
    RecordBatchError(destination, "sift_writebatch_append: out of memory");
  }
}

uint32_t sift_writebatch_count(const sift_writebatch_t* batch) {
  return batch == nullptr ? 0 : batch->rep.Count();
}

// ---- Options ----

sift_options_t* sift_options_create(void) {
  return new (std::nothrow) sift_options_t;
}

void sift_options_destroy(sift_options_t* options) { delete options; }

void sift_options_set_create_if_missing(sift_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.create_if_missing = v != 0;
}

void sift_options_set_error_if_exists(sift_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.error_if_exists = v != 0;
}

void sift_options_set_paranoid_checks(sift_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.paranoid_checks = v != 0;
}

void sift_options_set_env(sift_options_t* options, sift_env_t* env) {
  if (options != nullptr)
    options->rep.env = env == nullptr ? nullptr : env->env;
}

void sift_options_set_write_buffer_size(sift_options_t* options, size_t v) {
  if (options != nullptr) options->rep.write_buffer_size = v;
}

void sift_options_set_max_open_files(sift_options_t* options, int v) {
  if (options != nullptr) options->rep.max_open_files = v;
}

void sift_options_set_block_size(sift_options_t* options, size_t v) {
  if (options != nullptr) options->rep.block_size = v;
}

void sift_options_set_block_restart_interval(sift_options_t* options, int v) {
  if (options != nullptr) options->rep.block_restart_interval = v;
}

void sift_options_set_max_file_size(sift_options_t* options, size_t v) {
  if (options != nullptr) options->rep.max_file_size = v;
}

void sift_options_set_block_cache_capacity(sift_options_t* options, size_t v) {
  if (options != nullptr) options->rep.block_cache_capacity = v;
}

// The enum setters check here, not in DB::Open: an int that is no
// enumerator cannot be stored in the C++ enum's field faithfully (it would
// be truncated to the underlying byte and might then name a valid kind).
void sift_options_set_compression(sift_options_t* options, int v) {
  if (options == nullptr) return;
  switch (v) {
    case sift_no_compression:
      options->rep.compression = sift::Compression::kNone;
      return;
    case sift_snappy_compression:
      options->rep.compression = sift::Compression::kSnappy;
      return;
    default:
      SetOptionError(options, "compression " + std::to_string(v) +
                                  " is not sift_no_compression (0) or "
                                  "sift_snappy_compression (1)");
  }
}

void sift_options_set_filter_bits_per_key(sift_options_t* options, double v) {
  if (options != nullptr) options->rep.filter_bits_per_key = v;
}

void sift_options_set_filter_memory_limit(sift_options_t* options, uint64_t v) {
  if (options != nullptr) options->rep.filter_memory_limit = v;
}

void sift_options_set_filter_kind(sift_options_t* options, int v) {
  if (options == nullptr) return;
  switch (v) {
    case sift_standard_bloom_filter:
      options->rep.filter_kind = sift::FilterKind::kStandardBloom;
      return;
    case sift_blocked_bloom_filter:
      options->rep.filter_kind = sift::FilterKind::kBlockedBloom;
      return;
    case sift_binary_fuse_filter:
      options->rep.filter_kind = sift::FilterKind::kBinaryFuse;
      return;
    default:
      SetOptionError(options, "filter kind " + std::to_string(v) +
                                  " is not sift_standard_bloom_filter (1), "
                                  "sift_blocked_bloom_filter (2) or "
                                  "sift_binary_fuse_filter (3)");
  }
}

void sift_options_set_filter_allocation(sift_options_t* options, int v) {
  if (options == nullptr) return;
  switch (v) {
    case sift_uniform_filter_allocation:
      options->rep.filter_allocation = sift::FilterAllocation::kUniform;
      return;
    case sift_optimal_filter_allocation:
      options->rep.filter_allocation = sift::FilterAllocation::kOptimal;
      return;
    default:
      SetOptionError(options, "filter allocation " + std::to_string(v) +
                                  " is not sift_uniform_filter_allocation "
                                  "(1) or sift_optimal_filter_allocation (2)");
  }
}

void sift_options_set_allow_mmap_reads(sift_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.allow_mmap_reads = v != 0;
}

void sift_options_set_use_direct_reads(sift_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.use_direct_reads = v != 0;
}

void sift_options_set_prefix_extractor(
    sift_options_t* options, const sift_prefixextractor_t* extractor) {
  if (options == nullptr) return;
  options->rep.prefix_extractor =
      extractor == nullptr ? nullptr : extractor->rep;
}

void sift_options_set_whole_key_filtering(sift_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.whole_key_filtering = v != 0;
}

void sift_options_set_range_filter_bits_per_key(sift_options_t* options,
                                                double v) {
  if (options != nullptr) options->rep.range_filter_bits_per_key = v;
}

// ---- Prefix extractors ----

namespace {

// May throw std::bad_alloc; the callers turn it into NULL.
sift_prefixextractor_t* WrapExtractor(
    std::shared_ptr<const sift::PrefixExtractor> rep) {
  auto result = std::make_unique<sift_prefixextractor_t>();
  result->name = std::string(rep->Name());
  result->rep = std::move(rep);
  return result.release();
}

}  // namespace

sift_prefixextractor_t* sift_prefixextractor_create_fixed(size_t length) {
  if (length == 0) return nullptr;  // the C++ factory REQUIRES length > 0
  try {
    return WrapExtractor(sift::NewFixedPrefixExtractor(length));
  } catch (...) {
    return nullptr;
  }
}

sift_prefixextractor_t* sift_prefixextractor_create_delimited(char delimiter) {
  try {
    return WrapExtractor(sift::NewDelimitedPrefixExtractor(delimiter));
  } catch (...) {
    return nullptr;
  }
}

const char* sift_prefixextractor_name(const sift_prefixextractor_t* extractor) {
  return extractor == nullptr ? nullptr : extractor->name.c_str();
}

void sift_prefixextractor_destroy(sift_prefixextractor_t* extractor) {
  delete extractor;
}

// ---- Environments ----

sift_env_t* sift_create_default_env(void) {
  sift_env_t* env = new (std::nothrow) sift_env_t;
  if (env != nullptr) env->env = Env::Default();
  return env;
}

sift_env_t* sift_create_mem_env(void) {
  try {
    auto env = std::make_unique<sift_env_t>();
    env->owned = sift::NewMemEnv(Env::Default());
    env->env = env->owned.get();
    return env.release();
  } catch (...) {
    return nullptr;
  }
}

void sift_env_destroy(sift_env_t* env) { delete env; }

// ---- Read and write options ----

sift_readoptions_t* sift_readoptions_create(void) {
  return new (std::nothrow) sift_readoptions_t;
}

void sift_readoptions_destroy(sift_readoptions_t* options) { delete options; }

void sift_readoptions_set_verify_checksums(sift_readoptions_t* options,
                                           uint8_t v) {
  if (options != nullptr) options->rep.verify_checksums = v != 0;
}

void sift_readoptions_set_fill_cache(sift_readoptions_t* options, uint8_t v) {
  if (options != nullptr) options->rep.fill_cache = v != 0;
}

void sift_readoptions_set_snapshot(sift_readoptions_t* options,
                                   const sift_snapshot_t* snapshot) {
  if (options != nullptr) options->snapshot = snapshot;
}

namespace {

// Copy `key` into *bound, or clear it for a NULL key. A copy that fails
// leaves the bound cleared and the options refusing reads, rather than
// reading a range the caller did not ask for.
void SetBound(sift_readoptions_t* options, std::optional<std::string>* bound,
              const char* key, size_t keylen) {
  if (options == nullptr) return;
  bound->reset();
  if (key == nullptr) return;
  try {
    bound->emplace(key, keylen);
  } catch (...) {
    bound->reset();
    if (options->error.empty()) {
      options->error = "out of memory copying an iteration bound";
    }
  }
}

}  // namespace

void sift_readoptions_set_iterate_lower_bound(sift_readoptions_t* options,
                                              const char* key, size_t keylen) {
  if (options != nullptr) SetBound(options, &options->lower_bound, key, keylen);
}

void sift_readoptions_set_iterate_upper_bound(sift_readoptions_t* options,
                                              const char* key, size_t keylen) {
  if (options != nullptr) SetBound(options, &options->upper_bound, key, keylen);
}

void sift_readoptions_set_prefix_same_as_start(sift_readoptions_t* options,
                                               uint8_t v) {
  if (options != nullptr) options->rep.prefix_same_as_start = v != 0;
}

sift_writeoptions_t* sift_writeoptions_create(void) {
  return new (std::nothrow) sift_writeoptions_t;
}

void sift_writeoptions_destroy(sift_writeoptions_t* options) { delete options; }

void sift_writeoptions_set_sync(sift_writeoptions_t* options, uint8_t v) {
  if (options != nullptr) options->rep.sync = v != 0;
}

// ---- External table files and ingestion ----

sift_tablefilewriter_t* sift_tablefilewriter_open(const sift_options_t* options,
                                                  const char* path,
                                                  char** errptr) {
  sift_tablefilewriter_t* result = nullptr;
  Guard("sift_tablefilewriter_open", errptr, [&] {
    if (!ToOptions("sift_tablefilewriter_open", options, errptr) ||
        !CheckNotNull("sift_tablefilewriter_open", path, "path", errptr)) {
      return false;
    }
    absl::StatusOr<std::unique_ptr<TableFileWriter>> writer =
        TableFileWriter::Open(options->rep, path);
    if (!SaveError(errptr, writer.status())) return false;
    auto handle = std::make_unique<sift_tablefilewriter_t>();
    handle->writer = *std::move(writer);
    result = handle.release();
    return true;
  });
  return result;
}

void sift_tablefilewriter_put(sift_tablefilewriter_t* writer, const char* key,
                              size_t klen, const char* val, size_t vlen,
                              char** errptr) {
  Guard("sift_tablefilewriter_put", errptr, [&] {
    std::string_view k, v;
    return CheckWriter("sift_tablefilewriter_put", writer, errptr) &&
           CheckKey("sift_tablefilewriter_put", key, klen, &k, errptr) &&
           CheckKey("sift_tablefilewriter_put", val, vlen, &v, errptr,
                    "value") &&
           SaveError(errptr, writer->writer->Put(k, v));
  });
}

void sift_tablefilewriter_delete(sift_tablefilewriter_t* writer,
                                 const char* key, size_t klen, char** errptr) {
  Guard("sift_tablefilewriter_delete", errptr, [&] {
    std::string_view k;
    return CheckWriter("sift_tablefilewriter_delete", writer, errptr) &&
           CheckKey("sift_tablefilewriter_delete", key, klen, &k, errptr) &&
           SaveError(errptr, writer->writer->Delete(k));
  });
}

void sift_tablefilewriter_finish(sift_tablefilewriter_t* writer,
                                 char** errptr) {
  Guard("sift_tablefilewriter_finish", errptr, [&] {
    if (!CheckWriter("sift_tablefilewriter_finish", writer, errptr)) {
      return false;
    }
    writer->finished = true;  // TableFileWriter::Finish may run only once
    absl::StatusOr<sift::ExternalTableInfo> info = writer->writer->Finish();
    if (!SaveError(errptr, info.status())) return false;
    writer->info = *std::move(info);
    return true;
  });
}

uint64_t sift_tablefilewriter_file_size(const sift_tablefilewriter_t* writer) {
  return writer != nullptr && writer->info ? writer->info->file_size : 0;
}

uint64_t sift_tablefilewriter_num_entries(
    const sift_tablefilewriter_t* writer) {
  return writer != nullptr && writer->info ? writer->info->num_entries : 0;
}

const char* sift_tablefilewriter_smallest_key(
    const sift_tablefilewriter_t* writer, size_t* klen) {
  const bool known = writer != nullptr && writer->info.has_value();
  if (klen != nullptr) *klen = known ? writer->info->smallest_key.size() : 0;
  return known ? writer->info->smallest_key.data() : nullptr;
}

const char* sift_tablefilewriter_largest_key(
    const sift_tablefilewriter_t* writer, size_t* klen) {
  const bool known = writer != nullptr && writer->info.has_value();
  if (klen != nullptr) *klen = known ? writer->info->largest_key.size() : 0;
  return known ? writer->info->largest_key.data() : nullptr;
}

void sift_tablefilewriter_destroy(sift_tablefilewriter_t* writer) {
  delete writer;
}

sift_ingestoptions_t* sift_ingestoptions_create(void) {
  return new (std::nothrow) sift_ingestoptions_t;
}

void sift_ingestoptions_destroy(sift_ingestoptions_t* options) {
  delete options;
}

void sift_ingestoptions_set_move_files(sift_ingestoptions_t* options,
                                       uint8_t v) {
  if (options != nullptr) options->rep.move_files = v != 0;
}

void sift_ingestoptions_set_verify_checksums(sift_ingestoptions_t* options,
                                             uint8_t v) {
  if (options != nullptr) options->rep.verify_checksums = v != 0;
}

void sift_ingest_external_file(sift_t* db, const char* const* file_list,
                               size_t list_len,
                               const sift_ingestoptions_t* options,
                               char** errptr) {
  Guard("sift_ingest_external_file", errptr, [&] {
    if (!CheckDB("sift_ingest_external_file", db, errptr) ||
        !CheckNotNull("sift_ingest_external_file", options, "options",
                      errptr) ||
        (list_len > 0 && !CheckNotNull("sift_ingest_external_file", file_list,
                                       "file_list", errptr))) {
      return false;
    }
    std::vector<std::string> paths;
    paths.reserve(list_len);
    for (size_t i = 0; i < list_len; ++i) {
      if (!CheckNotNull("sift_ingest_external_file", file_list[i],
                        "a file name", errptr)) {
        return false;
      }
      paths.emplace_back(file_list[i]);
    }
    return SaveError(errptr, db->db->IngestExternalFiles(paths, options->rep));
  });
}

// ---- Utility ----

void sift_free(void* ptr) { std::free(ptr); }

int sift_major_version(void) { return SIFT_VERSION_MAJOR; }

int sift_minor_version(void) { return SIFT_VERSION_MINOR; }

}  // extern "C"
