#include "database.h"

#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "iterator.h"
#include "sift/options.h"
#include "sift/prefix_extractor.h"

namespace sift_node {
namespace {

// Reads a boolean option; `fallback` when absent or not a boolean.
bool BoolOption(const Napi::Object& options, const char* name, bool fallback) {
  Napi::Value v = options.Get(name);
  return v.IsBoolean() ? v.As<Napi::Boolean>().Value() : fallback;
}

// Reads a numeric option into *out when present. The JavaScript side has
// checked types, and that an integer field's value is a whole number from 0
// up; one its field cannot hold becomes the field's largest value (never an
// out-of-range cast), which sift's Open refuses naming the field, as it
// checks every range.
template <typename T>
void NumberOption(const Napi::Object& options, const char* name, T* out) {
  Napi::Value v = options.Get(name);
  if (!v.IsNumber()) return;
  const double d = v.As<Napi::Number>().DoubleValue();
  if constexpr (std::is_integral_v<T>) {
    if (!(d >= 0) || d >= static_cast<double>(std::numeric_limits<T>::max())) {
      *out = std::numeric_limits<T>::max();
      return;
    }
  }
  *out = static_cast<T>(d);
}

class OpenWorker final : public DbWorker {
 public:
  OpenWorker(Napi::Env env, Database* db, std::string location,
             const sift::Options& options)
      : DbWorker(env, db, "sift-level.open"),
        location_(std::move(location)),
        options_(options) {}

 private:
  void Execute() override {
    absl::StatusOr<std::unique_ptr<sift::DB>> db =
        sift::DB::Open(options_, location_);
    if (db.ok()) {
      opened_ = *std::move(db);
      return;
    }
    status_ = db.status();
    // abstract-level's users (and its suite) recognise a missing database
    // by the words "does not exist"; sift's InvalidArgument covers that
    // case and bad options alike, so tell them apart by looking.
    std::error_code ec;
    if (absl::IsInvalidArgument(status_) && !options_.create_if_missing &&
        !std::filesystem::exists(std::filesystem::path(location_) / "CURRENT",
                                 ec)) {
      status_ = absl::InvalidArgumentError(absl::StrCat(
          location_,
          " does not exist (createIfMissing is false): ", status_.message()));
    }
  }
  void BeforeSettle() override { db_->Opened(std::move(opened_)); }

  std::string location_;
  sift::Options options_;
  std::unique_ptr<sift::DB> opened_;
};

class CloseWorker final : public DbWorker {
 public:
  CloseWorker(Napi::Env env, Database* db, std::unique_ptr<sift::DB> closing,
              Napi::Promise::Deferred deferred)
      : DbWorker(env, db, "sift-level.close", deferred),
        closing_(std::move(closing)) {}

 private:
  // Destroying the DB waits for its background work: off the main thread.
  void Execute() override { closing_.reset(); }
  void BeforeSettle() override { db_->Closed(); }

  std::unique_ptr<sift::DB> closing_;
};

// Deletes the keys of a range, as of a snapshot taken when the clear was
// asked for, in batches so one huge range does not build one huge batch.
class ClearWorker final : public DbWorker {
 public:
  ClearWorker(Napi::Env env, Database* db, SnapshotRef snapshot)
      : DbWorker(env, db, "sift-level.clear"), snapshot_(std::move(snapshot)) {}

  std::optional<std::string> lower_, upper_;
  bool reverse_ = false;
  int64_t limit_ = -1;

 private:
  void Execute() override {
    sift::DB* db = sift_db_;
    sift::ReadOptions ro;
    ro.snapshot = snapshot_.get();
    ro.fill_cache = false;
    if (lower_) ro.iterate_lower_bound = *lower_;
    if (upper_) ro.iterate_upper_bound = *upper_;
    std::unique_ptr<sift::Iterator> it = db->NewIterator(ro);
    constexpr uint32_t kBatchEntries = 1000;
    sift::WriteBatch batch;
    int64_t deleted = 0;
    if (reverse_) {
      it->SeekToLast();
    } else {
      it->SeekToFirst();
    }
    for (; it->Valid() && (limit_ < 0 || deleted < limit_); deleted++) {
      batch.Delete(it->key());
      if (batch.Count() >= kBatchEntries) {
        status_ = db->Write(sift::WriteOptions(), &batch);
        if (!status_.ok()) return;
        batch.Clear();
      }
      if (reverse_) {
        it->Prev();
      } else {
        it->Next();
      }
    }
    status_ = it->status();
    if (status_.ok() && batch.Count() > 0) {
      status_ = db->Write(sift::WriteOptions(), &batch);
    }
    it.reset();
    snapshot_.reset();
  }

  void BeforeSettle() override { db_->WriteHappened(); }

  SnapshotRef snapshot_;
};

class FlushWorker final : public DbWorker {
 public:
  FlushWorker(Napi::Env env, Database* db)
      : DbWorker(env, db, "sift-level.flush") {}

  bool compact_ = false;
  std::optional<std::string> begin_, end_;

 private:
  void Execute() override {
    sift::DB* db = sift_db_;
    if (!compact_) {
      status_ = db->Flush();
    } else {
      status_ = db->CompactRange(begin_ ? &*begin_ : nullptr,
                                 end_ ? &*end_ : nullptr);
    }
  }
};

// Reads the range options of iterators and clear() in sift's form: lower
// bound inclusive, upper bound exclusive. gte wins over gt and lte over lt,
// as abstract-level specifies; the smallest key after k is k + "\0", which
// turns gt and lte into sift's bounds exactly.
bool ReadRange(const Napi::Object& options, std::optional<std::string>* lower,
               std::optional<std::string>* upper) {
  std::string bytes;
  Napi::Value gte = options.Get("gte"), gt = options.Get("gt");
  Napi::Value lte = options.Get("lte"), lt = options.Get("lt");
  if (!gte.IsUndefined()) {
    if (!ReadBytes(gte, &bytes)) return false;
    *lower = bytes;
  } else if (!gt.IsUndefined()) {
    if (!ReadBytes(gt, &bytes)) return false;
    bytes.push_back('\0');
    *lower = bytes;
  }
  if (!lte.IsUndefined()) {
    if (!ReadBytes(lte, &bytes)) return false;
    bytes.push_back('\0');
    *upper = bytes;
  } else if (!lt.IsUndefined()) {
    if (!ReadBytes(lt, &bytes)) return false;
    *upper = bytes;
  }
  return true;
}

Napi::Error KeyTypeError(Napi::Env env, const char* what) {
  return CodedError(env, "LEVEL_INVALID_KEY",
                    absl::StrCat(what, " must be a string or a Uint8Array"));
}

}  // namespace

bool ReadRangeOptions(const Napi::Object& options,
                      std::optional<std::string>* lower,
                      std::optional<std::string>* upper) {
  return ReadRange(options, lower, upper);
}

Napi::Function Database::Init(Napi::Env env) {
  return DefineClass(
      env, "Database",
      {
          InstanceMethod<&Database::Open>("open"),
          InstanceMethod<&Database::Close>("close"),
          InstanceMethod<&Database::Put>("put"),
          InstanceMethod<&Database::Del>("del"),
          InstanceMethod<&Database::Get>("get"),
          InstanceMethod<&Database::GetMany>("getMany"),
          InstanceMethod<&Database::Has>("has"),
          InstanceMethod<&Database::HasMany>("hasMany"),
          InstanceMethod<&Database::Batch>("batch"),
          InstanceMethod<&Database::WriteBatch>("write"),
          InstanceMethod<&Database::Clear>("clear"),
          InstanceMethod<&Database::Flush>("flush"),
          InstanceMethod<&Database::CompactRange>("compactRange"),
          InstanceMethod<&Database::GetProperty>("getProperty"),
          InstanceMethod<&Database::ReadStats>("readStats"),
      });
}

Database::Database(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<Database>(info) {
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(info.Env(), "location must be a string")
        .ThrowAsJavaScriptException();
    return;
  }
  location_ = info[0].As<Napi::String>().Utf8Value();
}

Database::~Database() {
  // Collected without a close (no work can be in flight: every piece holds
  // a reference to this object). Close here, blocking, as nothing else will.
  DetachAll();
  db_.reset();
}

SnapshotRef Database::ImplicitSnapshot() {
  if (implicit_snapshot_ == nullptr) {
    implicit_snapshot_ = TakeSnapshot(db_.get());
  }
  return implicit_snapshot_;
}

void Database::DetachAll() {
  implicit_snapshot_.reset();
  // Detach() unregisters; iterate over copies.
  std::vector<Iterator*> iterators(iterators_.begin(), iterators_.end());
  for (Iterator* it : iterators) it->Detach();
  std::vector<SnapshotHandle*> snapshots(snapshots_.begin(), snapshots_.end());
  for (SnapshotHandle* s : snapshots) s->Detach();
  iterators_.clear();
  snapshots_.clear();
}

Napi::Value Database::NotOpen(Napi::Env env) {
  return Rejected(
      env, CodedError(env, "LEVEL_DATABASE_NOT_OPEN", "Database is not open"));
}

void Database::WorkDone() {
  if (--in_flight_ == 0 && pending_close_ != nullptr) StartClose(Env());
}

void Database::Opened(std::unique_ptr<sift::DB> db) {
  db_ = std::move(db);
  state_ = db_ != nullptr ? State::kOpen : State::kClosed;
}

void Database::Closed() { state_ = State::kClosed; }

Napi::Value Database::Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (state_ != State::kClosed) {
    return Rejected(env, CodedError(env, "LEVEL_DATABASE_NOT_CLOSED",
                                    "Database is not closed"));
  }
  if (info.Length() < 1 || !info[0].IsObject()) {
    return Rejected(env,
                    Napi::TypeError::New(env, "options must be an object"));
  }
  Napi::Object o = info[0].As<Napi::Object>();
  sift::Options options;
  options.create_if_missing = BoolOption(o, "createIfMissing", true);
  options.error_if_exists = BoolOption(o, "errorIfExists", false);
  options.paranoid_checks = BoolOption(o, "paranoidChecks", false);
  options.allow_mmap_reads =
      BoolOption(o, "mmapReads", options.allow_mmap_reads);
  options.use_direct_reads = BoolOption(o, "directReads", false);
  options.whole_key_filtering =
      BoolOption(o, "wholeKeyFiltering", options.whole_key_filtering);
  NumberOption(o, "writeBufferSize", &options.write_buffer_size);
  NumberOption(o, "maxFileSize", &options.max_file_size);
  NumberOption(o, "blockSize", &options.block_size);
  NumberOption(o, "blockRestartInterval", &options.block_restart_interval);
  NumberOption(o, "cacheSize", &options.block_cache_capacity);
  NumberOption(o, "maxOpenFiles", &options.max_open_files);
  NumberOption(o, "filterBitsPerKey", &options.filter_bits_per_key);
  NumberOption(o, "filterMemoryLimit", &options.filter_memory_limit);
  NumberOption(o, "rangeFilterBitsPerKey", &options.range_filter_bits_per_key);
  // The JavaScript side has checked the prefix options: a positive length,
  // a delimiter's byte code, not both.
  if (Napi::Value v = o.Get("prefixLength"); v.IsNumber()) {
    size_t length = 0;
    NumberOption(o, "prefixLength", &length);
    options.prefix_extractor = sift::NewFixedPrefixExtractor(length);
  }
  if (Napi::Value v = o.Get("prefixDelimiter"); v.IsNumber()) {
    uint8_t delimiter = 0;
    NumberOption(o, "prefixDelimiter", &delimiter);
    options.prefix_extractor =
        sift::NewDelimitedPrefixExtractor(static_cast<char>(delimiter));
  }
  // Enumerations arrive as sift's numeric values, checked by the JavaScript
  // side against the names it accepts.
  uint8_t raw = 0;
  if (Napi::Value v = o.Get("compression"); v.IsNumber()) {
    NumberOption(o, "compression", &raw);
    options.compression = static_cast<sift::Compression>(raw);
  }
  if (Napi::Value v = o.Get("filterKind"); v.IsNumber()) {
    NumberOption(o, "filterKind", &raw);
    options.filter_kind = static_cast<sift::FilterKind>(raw);
  }
  if (Napi::Value v = o.Get("filterAllocation"); v.IsNumber()) {
    NumberOption(o, "filterAllocation", &raw);
    options.filter_allocation = static_cast<sift::FilterAllocation>(raw);
  }
  state_ = State::kOpening;
  return (new OpenWorker(env, this, location_, options))->Start();
}

Napi::Value Database::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (state_ != State::kOpen) {
    // Closing what is closed (or closing) is abstract-level's business; be
    // idempotent here.
    Napi::Promise::Deferred d = Napi::Promise::Deferred::New(env);
    d.Resolve(env.Undefined());
    return d.Promise();
  }
  state_ = State::kClosing;
  pending_close_ = std::make_unique<Napi::Promise::Deferred>(
      Napi::Promise::Deferred::New(env));
  Napi::Promise promise = pending_close_->Promise();
  // Reads and writes in flight finish first; the last one starts the close.
  if (in_flight_ == 0) StartClose(env);
  return promise;
}

void Database::StartClose(Napi::Env env) {
  std::unique_ptr<Napi::Promise::Deferred> deferred = std::move(pending_close_);
  DetachAll();
  (new CloseWorker(env, this, std::move(db_), *deferred))->Start();
}

Napi::Value Database::Put(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  WriteHappened();
  auto r = writes_.NewRequest(env, Request::Kind::kWrite);
  if (!ReadBytes(info[0], &scratch_key_)) {
    return Rejected(env, KeyTypeError(env, "key"));
  }
  if (!ReadBytes(info[1], &scratch_value_)) {
    return Rejected(env, CodedError(env, "LEVEL_INVALID_VALUE",
                                    "value must be a string or a Uint8Array"));
  }
  r->batch.Put(scratch_key_, scratch_value_);
  r->sync = info[2].ToBoolean().Value();
  return writes_.Add(this, std::move(r));
}

Napi::Value Database::Del(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  WriteHappened();
  auto r = writes_.NewRequest(env, Request::Kind::kWrite);
  if (!ReadBytes(info[0], &scratch_key_)) {
    return Rejected(env, KeyTypeError(env, "key"));
  }
  r->batch.Delete(scratch_key_);
  r->sync = info[1].ToBoolean().Value();
  return writes_.Add(this, std::move(r));
}

SnapshotRef Database::ReadSnapshot(const Napi::CallbackInfo& info, size_t index,
                                   bool* ok) {
  *ok = true;
  if (index < info.Length() && info[index].IsObject()) {
    SnapshotHandle* handle =
        SnapshotHandle::Unwrap(info[index].As<Napi::Object>());
    if (handle == nullptr || handle->snapshot() == nullptr) {
      *ok = false;
      return nullptr;
    }
    return handle->snapshot();
  }
  return ImplicitSnapshot();
}

// The four reads: get(key, valueAsString, fillCache, snapshot | null),
// getMany(keys, valueAsString, fillCache, snapshot | null),
// has(key, snapshot | null), hasMany(keys, snapshot | null).
Napi::Value Database::Read(const Napi::CallbackInfo& info, Request::Kind kind) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  const bool many =
      kind == Request::Kind::kGetMany || kind == Request::Kind::kHasMany;
  const bool get =
      kind == Request::Kind::kGet || kind == Request::Kind::kGetMany;
  if (many && !info[0].IsArray()) {
    return Rejected(env, Napi::TypeError::New(env, "keys must be an array"));
  }
  bool ok;
  SnapshotRef snapshot = ReadSnapshot(info, get ? 3 : 1, &ok);
  if (!ok) {
    return Rejected(env, CodedError(env, "LEVEL_SNAPSHOT_NOT_OPEN",
                                    "Snapshot is not open"));
  }
  auto r = reads_.NewRequest(env, kind);
  r->db = db();
  r->snapshot = std::move(snapshot);
  if (get) {
    r->as_string = info[1].ToBoolean().Value();
    r->fill_cache = info[2].ToBoolean().Value();
  }
  if (!many) {
    if (!ReadBytes(info[0], &r->key)) {
      return Rejected(env, KeyTypeError(env, "key"));
    }
  } else {
    Napi::Array keys = info[0].As<Napi::Array>();
    const uint32_t n = keys.Length();
    r->key_ends.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
      if (!ReadBytes(keys.Get(i), &scratch_key_)) {
        return Rejected(env, KeyTypeError(env, "every key"));
      }
      r->key.append(scratch_key_);
      r->key_ends.push_back(r->key.size());
    }
  }
  return reads_.Add(this, std::move(r));
}

Napi::Value Database::Get(const Napi::CallbackInfo& info) {
  return Read(info, Request::Kind::kGet);
}
Napi::Value Database::GetMany(const Napi::CallbackInfo& info) {
  return Read(info, Request::Kind::kGetMany);
}
Napi::Value Database::Has(const Napi::CallbackInfo& info) {
  return Read(info, Request::Kind::kHas);
}
Napi::Value Database::HasMany(const Napi::CallbackInfo& info) {
  return Read(info, Request::Kind::kHasMany);
}

// batch(operations, sync): operations as abstract-level passes them, an
// array of { type: 'put' | 'del', key, value }.
Napi::Value Database::Batch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  WriteHappened();
  if (!info[0].IsArray()) {
    return Rejected(env,
                    Napi::TypeError::New(env, "operations must be an array"));
  }
  Napi::Array ops = info[0].As<Napi::Array>();
  auto r = writes_.NewRequest(env, Request::Kind::kWrite);
  r->sync = info[1].ToBoolean().Value();
  Napi::String key_name = Napi::String::New(env, "key");
  Napi::String value_name = Napi::String::New(env, "value");
  Napi::String type_name = Napi::String::New(env, "type");
  Napi::String del = Napi::String::New(env, "del");
  const uint32_t n = ops.Length();
  for (uint32_t i = 0; i < n; i++) {
    Napi::Value op_value = ops.Get(i);
    if (!op_value.IsObject()) continue;
    Napi::Object op = op_value.As<Napi::Object>();
    if (!ReadBytes(op.Get(key_name), &scratch_key_)) {
      return Rejected(env, KeyTypeError(env, "key"));
    }
    // abstract-level has checked the type already: 'put' or 'del'.
    if (op.Get(type_name).StrictEquals(del)) {
      r->batch.Delete(scratch_key_);
    } else {
      if (!ReadBytes(op.Get(value_name), &scratch_value_)) {
        return Rejected(env,
                        CodedError(env, "LEVEL_INVALID_VALUE",
                                   "value must be a string or a Uint8Array"));
      }
      r->batch.Put(scratch_key_, scratch_value_);
    }
  }
  return writes_.Add(this, std::move(r));
}

// write(batchHandle, sync): commits a chained batch; its operations move
// into the write.
Napi::Value Database::WriteBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  WriteHappened();
  BatchHandle* handle = info[0].IsObject()
                            ? BatchHandle::Unwrap(info[0].As<Napi::Object>())
                            : nullptr;
  if (handle == nullptr) {
    return Rejected(env, Napi::TypeError::New(env, "expected a batch"));
  }
  auto r = writes_.NewRequest(env, Request::Kind::kWrite);
  r->batch = handle->TakeBatch();
  r->sync = info[1].ToBoolean().Value();
  return writes_.Add(this, std::move(r));
}

// clear(options, snapshot | null): options has the range, reverse and limit.
Napi::Value Database::Clear(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  WriteHappened();
  if (!info[0].IsObject()) {
    return Rejected(env,
                    Napi::TypeError::New(env, "options must be an object"));
  }
  bool ok;
  SnapshotRef snapshot = ReadSnapshot(info, 1, &ok);
  if (!ok) {
    return Rejected(env, CodedError(env, "LEVEL_SNAPSHOT_NOT_OPEN",
                                    "Snapshot is not open"));
  }
  Napi::Object o = info[0].As<Napi::Object>();
  auto* w = new ClearWorker(env, this, std::move(snapshot));
  if (!ReadRange(o, &w->lower_, &w->upper_)) {
    delete w;
    return Rejected(env, KeyTypeError(env, "range option"));
  }
  w->reverse_ = o.Get("reverse").ToBoolean().Value();
  if (Napi::Value limit = o.Get("limit"); limit.IsNumber()) {
    double l = limit.As<Napi::Number>().DoubleValue();
    w->limit_ = l < 0 || l > 9e15 ? -1 : static_cast<int64_t>(l);
  }
  return w->Start();
}

Napi::Value Database::Flush(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  return (new FlushWorker(env, this))->Start();
}

// compactRange(start | null, end | null)
Napi::Value Database::CompactRange(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) return NotOpen(env);
  auto* w = new FlushWorker(env, this);
  w->compact_ = true;
  std::string bytes;
  for (int i = 0; i < 2; i++) {
    if (info[i].IsNull() || info[i].IsUndefined()) continue;
    if (!ReadBytes(info[i], &bytes)) {
      delete w;
      return Rejected(env, KeyTypeError(env, "range end"));
    }
    (i == 0 ? w->begin_ : w->end_) = bytes;
  }
  return w->Start();
}

// getProperty(name): sift's properties are computed in memory.
Napi::Value Database::GetProperty(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) {
    CodedError(env, "LEVEL_DATABASE_NOT_OPEN", "Database is not open")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (!info[0].IsString()) {
    Napi::TypeError::New(env, "name must be a string")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::optional<std::string> value =
      db_->GetProperty(info[0].As<Napi::String>().Utf8Value());
  if (!value) return env.Undefined();
  return Napi::String::New(env, *value);
}

// readStats(): sift's ReadStats counters, as numbers.
Napi::Value Database::ReadStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (db() == nullptr) {
    CodedError(env, "LEVEL_DATABASE_NOT_OPEN", "Database is not open")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  sift::ReadStats s = db_->GetReadStats();
  Napi::Object o = Napi::Object::New(env);
  auto set = [&](const char* name, uint64_t v) {
    o.Set(name, Napi::Number::New(env, static_cast<double>(v)));
  };
  set("gets", s.gets);
  set("memtableHits", s.memtable_hits);
  set("tablesProbed", s.tables_probed);
  set("filterNegatives", s.filter_negatives);
  set("filterPositives", s.filter_positives);
  set("filterFalsePositives", s.filter_false_positives);
  set("blockCacheHits", s.block_cache_hits);
  set("blockReads", s.block_reads);
  set("bytesRead", s.bytes_read);
  set("tableLoads", s.table_loads);
  set("seeks", s.seeks);
  set("iteratorBlockReads", s.iterator_block_reads);
  set("iteratorBlockCacheHits", s.iterator_block_cache_hits);
  set("filterUnitLoads", s.filter_unit_loads);
  set("prefixFilterProbes", s.prefix_filter_probes);
  set("prefixFilterNegatives", s.prefix_filter_negatives);
  set("rangeFilterProbes", s.range_filter_probes);
  set("rangeFilterNegatives", s.range_filter_negatives);
  set("rangeFilterFalsePositives", s.range_filter_false_positives);
  o.Set("measuredFpr", Napi::Number::New(env, s.MeasuredFpr()));
  o.Set("readAmplification", Napi::Number::New(env, s.ReadAmplification()));
  return o;
}

// --- SnapshotHandle ---

Napi::Function SnapshotHandle::Init(Napi::Env env) {
  return DefineClass(env, "Snapshot",
                     {InstanceMethod<&SnapshotHandle::Release>("close")});
}

// new Snapshot(database): taken now, on the JavaScript thread, as
// abstract-level requires (a write queued right after must not be seen).
SnapshotHandle::SnapshotHandle(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<SnapshotHandle>(info) {
  Napi::Env env = info.Env();
  Database* database = info[0].IsObject()
                           ? Database::Unwrap(info[0].As<Napi::Object>())
                           : nullptr;
  if (database == nullptr || database->db() == nullptr) {
    CodedError(env, "LEVEL_DATABASE_NOT_OPEN", "Database is not open")
        .ThrowAsJavaScriptException();
    return;
  }
  database_ = database;
  snapshot_ = TakeSnapshot(database->db());
  database_->Register(this);
}

SnapshotHandle::~SnapshotHandle() { Detach(); }

void SnapshotHandle::Detach() {
  if (database_ != nullptr) database_->Unregister(this);
  database_ = nullptr;
  snapshot_.reset();
}

Napi::Value SnapshotHandle::Release(const Napi::CallbackInfo& info) {
  Detach();
  return info.Env().Undefined();
}

// --- BatchHandle ---

Napi::Function BatchHandle::Init(Napi::Env env) {
  return DefineClass(env, "Batch",
                     {InstanceMethod<&BatchHandle::Put>("put"),
                      InstanceMethod<&BatchHandle::Del>("del"),
                      InstanceMethod<&BatchHandle::Clear>("clear")});
}

BatchHandle::BatchHandle(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<BatchHandle>(info) {}

Napi::Value BatchHandle::Put(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!ReadBytes(info[0], &key_)) {
    KeyTypeError(env, "key").ThrowAsJavaScriptException();
  } else if (!ReadBytes(info[1], &value_)) {
    CodedError(env, "LEVEL_INVALID_VALUE",
               "value must be a string or a Uint8Array")
        .ThrowAsJavaScriptException();
  } else {
    batch_.Put(key_, value_);
  }
  return env.Undefined();
}

Napi::Value BatchHandle::Del(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!ReadBytes(info[0], &key_)) {
    KeyTypeError(env, "key").ThrowAsJavaScriptException();
  } else {
    batch_.Delete(key_);
  }
  return env.Undefined();
}

Napi::Value BatchHandle::Clear(const Napi::CallbackInfo& info) {
  batch_.Clear();
  return info.Env().Undefined();
}

}  // namespace sift_node
