// The native side of a SiftLevel: one sift::DB, its open and close, point
// reads and writes, batches and explicit snapshots.
#ifndef SIFT_NODE_SRC_DATABASE_H_
#define SIFT_NODE_SRC_DATABASE_H_

#include <napi.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "common.h"
#include "requests.h"
#include "sift/db.h"
#include "sift/write_batch.h"

namespace sift_node {

class Iterator;
class SnapshotHandle;

// Reads the range options (gt, gte, lt, lte) of iterators and clear() as
// sift's bounds: *lower inclusive, *upper exclusive. false if one is neither
// a string nor a Uint8Array.
bool ReadRangeOptions(const Napi::Object& options,
                      std::optional<std::string>* lower,
                      std::optional<std::string>* upper);

// Thread safety: every member is touched on the JavaScript thread only,
// except that work on the thread pool reads db_ (through the pointer it
// copied when queued). db_ changes only while no work is in flight: it is
// set when the open completes and reset by the close, which waits for
// in-flight work to finish first.
class Database : public Napi::ObjectWrap<Database> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit Database(const Napi::CallbackInfo& info);
  ~Database() override;

  // nullptr unless open.
  sift::DB* db() const { return state_ == State::kOpen ? db_.get() : nullptr; }
  // The DB while open or closing with work in flight; nullptr otherwise.
  sift::DB* sift_db() const { return db_.get(); }

  // In-flight work accounting (DbWorker).
  void WorkStarted() { ++in_flight_; }
  void WorkDone();

  // Iterators and snapshot objects register while they hold a snapshot or
  // an iterator of this DB, so a close (or the garbage collection of this
  // object) can release them first.
  void Register(Iterator* it) { iterators_.insert(it); }
  void Unregister(Iterator* it) { iterators_.erase(it); }
  void Register(SnapshotHandle* s) { snapshots_.insert(s); }
  void Unregister(SnapshotHandle* s) { snapshots_.erase(s); }

  // The snapshot an implicit read takes when called. Reads called while no
  // write has been called or has completed since the last one share it: the
  // database's state has not changed for them in between (writes still in
  // flight when it was taken may or may not be seen, as abstract-level
  // allows). Saves a snapshot (the DB's mutex and two allocations) per read
  // in read-mostly work.
  SnapshotRef ImplicitSnapshot();
  // A write was called or has completed: later reads take a new snapshot.
  void WriteHappened() { implicit_snapshot_.reset(); }

  // Called by the open and close work when done.
  void Opened(std::unique_ptr<sift::DB> db);
  void Closed();

 private:
  enum class State { kClosed, kOpening, kOpen, kClosing };

  Napi::Value Open(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Put(const Napi::CallbackInfo& info);
  Napi::Value Del(const Napi::CallbackInfo& info);
  Napi::Value Get(const Napi::CallbackInfo& info);
  Napi::Value GetMany(const Napi::CallbackInfo& info);
  Napi::Value Has(const Napi::CallbackInfo& info);
  Napi::Value HasMany(const Napi::CallbackInfo& info);
  Napi::Value Read(const Napi::CallbackInfo& info, Request::Kind kind);
  Napi::Value Batch(const Napi::CallbackInfo& info);
  Napi::Value WriteBatch(const Napi::CallbackInfo& info);
  Napi::Value Clear(const Napi::CallbackInfo& info);
  Napi::Value Flush(const Napi::CallbackInfo& info);
  Napi::Value CompactRange(const Napi::CallbackInfo& info);
  Napi::Value GetProperty(const Napi::CallbackInfo& info);
  Napi::Value ReadStats(const Napi::CallbackInfo& info);

  // The snapshot a read made now must see: the explicit one passed as
  // argument `index` (a SnapshotHandle), or a new implicit one. nullptr with
  // a pending JavaScript exception if the argument is a closed snapshot.
  SnapshotRef ReadSnapshot(const Napi::CallbackInfo& info, size_t index,
                           bool* ok);
  // Rejection for work asked of a database that is not open.
  Napi::Value NotOpen(Napi::Env env);
  // Releases every iterator and snapshot still holding parts of db_.
  void DetachAll();
  void StartClose(Napi::Env env);

  std::string location_;
  // Reused for the bytes of keys and values copied into write batches.
  std::string scratch_key_, scratch_value_;
  State state_ = State::kClosed;
  std::unique_ptr<sift::DB> db_;
  int in_flight_ = 0;
  // A close asked for while work was in flight: started by the last WorkDone.
  std::unique_ptr<Napi::Promise::Deferred> pending_close_;
  std::unordered_set<Iterator*> iterators_;
  std::unordered_set<SnapshotHandle*> snapshots_;
  SnapshotRef implicit_snapshot_;
  // Reads may run two trips at once when many are queued (the engine serves
  // concurrent reads; reads from disk overlap their I/O); writes run one
  // trip at a time, in call order.
  RequestQueue reads_{false, 2};
  RequestQueue writes_{true, 1};
};

// An explicit snapshot (db.snapshot()). Holds its reference until released
// by close(), by the database's close, or by garbage collection.
class SnapshotHandle : public Napi::ObjectWrap<SnapshotHandle> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit SnapshotHandle(const Napi::CallbackInfo& info);
  ~SnapshotHandle() override;

  const SnapshotRef& snapshot() const { return snapshot_; }
  // Drops the snapshot (database closing or being collected).
  void Detach();

 private:
  Napi::Value Release(const Napi::CallbackInfo& info);

  Database* database_ = nullptr;
  SnapshotRef snapshot_;
};

// A chained batch's operations, collected on the JavaScript thread and
// handed over (moved) to the write.
class BatchHandle : public Napi::ObjectWrap<BatchHandle> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit BatchHandle(const Napi::CallbackInfo& info);

  sift::WriteBatch TakeBatch() { return std::move(batch_); }

 private:
  Napi::Value Put(const Napi::CallbackInfo& info);
  Napi::Value Del(const Napi::CallbackInfo& info);
  Napi::Value Clear(const Napi::CallbackInfo& info);

  sift::WriteBatch batch_;
  std::string key_, value_;  // reused for strings
};

}  // namespace sift_node

#endif  // SIFT_NODE_SRC_DATABASE_H_
