#include "requests.h"

#include <chrono>
#include <iterator>
#include <string_view>
#include <utility>

#include "database.h"

namespace sift_node {

void Request::Read(sift::DB* db) {
  sift::ReadOptions ro;
  ro.snapshot = snapshot.get();
  ro.fill_cache = fill_cache;
  if (kind == Kind::kGet || kind == Kind::kHas) {
    absl::Status s = db->Get(ro, key, &value);
    found.push_back(s.ok());
    if (!s.ok() && !absl::IsNotFound(s)) status = s;
  } else {
    std::vector<std::string_view> views;
    views.reserve(key_ends.size());
    size_t begin = 0;
    for (size_t end : key_ends) {
      views.emplace_back(key.data() + begin, end - begin);
      begin = end;
    }
    std::vector<absl::Status> statuses = db->MultiGet(ro, views, &values);
    found.reserve(statuses.size());
    for (const absl::Status& s : statuses) {
      found.push_back(s.ok());
      if (!s.ok() && !absl::IsNotFound(s) && status.ok()) status = s;
    }
  }
  // Done with the snapshot: release it here, not on the JavaScript thread.
  snapshot.reset();
}

void Request::Reset(Napi::Env env, Kind k) {
  kind = k;
  deferred = Napi::Promise::Deferred::New(env);
  key.clear();
  key_ends.clear();
  snapshot.reset();
  db = nullptr;
  as_string = false;
  fill_cache = true;
  batch.Clear();
  sync = false;
  status = absl::OkStatus();
  found.clear();
  // value and values keep their strings: Get and MultiGet assign into them.
}

// getMany's values as [data, ends]: the values back to back in data (one
// string, or one Buffer), ends[i] the end of the i-th in data or -1 where
// the key was not found. A handful of Node-API calls per getMany instead of
// two per key; the JavaScript side cuts data into the values. Values that
// are not all ASCII, asked for as strings, come as [array of values, null]
// (decoded one by one, as UTF-8 must be).
Napi::Value Request::PackValues(Napi::Env env) {
  const size_t n = found.size();
  packed.clear();
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    if (found[i]) total += values[i].size();
  }
  bool ascii = true;
  if (total <= (size_t{1} << 30)) {
    packed.reserve(total);
    for (size_t i = 0; i < n; i++) {
      if (found[i]) packed.append(values[i]);
    }
    if (as_string) ascii = IsAscii(packed);
  }
  if (total > (size_t{1} << 30) || !ascii) {
    Napi::Array out = Napi::Array::New(env, n);
    for (uint32_t i = 0; i < n; i++) {
      out.Set(
          i, found[i] ? BytesToJs(env, values[i], as_string) : env.Undefined());
    }
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(uint32_t{0}, out);
    pair.Set(uint32_t{1}, env.Null());
    return pair;
  }
  Napi::Int32Array ends = Napi::Int32Array::New(env, n);
  int32_t* e = ends.Data();
  size_t end = 0;
  for (size_t i = 0; i < n; i++) {
    if (found[i]) {
      end += values[i].size();
      e[i] = static_cast<int32_t>(end);
    } else {
      e[i] = -1;
    }
  }
  Napi::Value data;
  if (as_string) {
    napi_value s;
    napi_create_string_latin1(env, packed.data(), packed.size(), &s);
    data = Napi::Value(env, s);
  } else {
    data = Napi::Buffer<char>::Copy(env, packed.data(), packed.size());
  }
  Napi::Array pair = Napi::Array::New(env, 2);
  pair.Set(uint32_t{0}, data);
  pair.Set(uint32_t{1}, ends);
  return pair;
}

void Request::Settle(Napi::Env env) {
  if (!status.ok()) {
    deferred.Reject(StatusToError(env, status).Value());
    return;
  }
  switch (kind) {
    case Kind::kWrite:
      deferred.Resolve(env.Undefined());
      return;
    case Kind::kHas:
      deferred.Resolve(Napi::Boolean::New(env, found[0]));
      return;
    case Kind::kGet:
      deferred.Resolve(found[0] ? BytesToJs(env, value, as_string)
                                : env.Undefined());
      return;
    case Kind::kGetMany:
      deferred.Resolve(PackValues(env));
      return;
    case Kind::kHasMany: {
      Napi::Array out = Napi::Array::New(env, found.size());
      for (uint32_t i = 0; i < found.size(); i++) {
        out.Set(i, Napi::Boolean::New(env, found[i]));
      }
      deferred.Resolve(out);
      return;
    }
  }
}

// One trip to the pool: takes what is queued when it starts, serves it, and
// settles it back on the JavaScript thread. Holds a reference to the
// database's JavaScript object so the database outlives it.
class DrainWorker final : public Napi::AsyncWorker {
 public:
  DrainWorker(Napi::Env env, Database* database, RequestQueue* queue)
      : Napi::AsyncWorker(env, "sift-level.requests"),
        database_(database),
        database_ref_(Napi::Persistent(database->Value())),
        queue_(queue),
        db_(database->sift_db()) {}

 private:
  void Execute() override {
    requests_ = queue_->Take();
    queue_->Serve(db_, requests_);
  }
  void OnOK() override { Finish(); }
  void OnError(const Napi::Error&) override {
    for (auto& r : requests_) {
      if (r->status.ok()) r->status = absl::InternalError("work was not run");
    }
    Finish();
  }
  void Finish() {
    Napi::Env env = Env();
    queue_->running_--;
    if (queue_->writes_) database_->WriteHappened();
    // A few requests are kept for reuse; more than a trip's worth would
    // only hold memory.
    for (auto& r : requests_) queue_->Settled(env, database_, std::move(r));
    requests_.clear();
    queue_->MaybeStart(database_);
  }

  Database* const database_;
  Napi::ObjectReference database_ref_;
  RequestQueue* const queue_;
  sift::DB* const db_;
  std::vector<std::unique_ptr<Request>> requests_;
};

void RequestQueue::Settled(Napi::Env env, Database* database,
                           std::unique_ptr<Request> r) {
  Napi::HandleScope scope(env);
  r->Settle(env);
  database->WorkDone();
  // A few requests are kept for reuse; more than a trip's worth would only
  // hold memory.
  constexpr size_t kKeepFree = 64;
  if (free_.size() < kKeepFree && r->batch.ApproximateSize() < 4096 &&
      r->key.capacity() < 4096 && r->packed.capacity() < 65536) {
    free_.push_back(std::move(r));
  }
}

// A trip of the read queue that stays on the pool while reads keep coming:
// it serves what is queued, hands the served requests to the JavaScript
// thread (a thread-safe function call, which does not end the trip), and
// looks again. New reads made meanwhile are taken by the running trip, so a
// steady stream of reads costs no new trip (no wake-up of a pool thread,
// no async work made and destroyed) per batch. With nothing queued it
// waits a little (spinning briefly, then sleeping until a read is queued
// or the wait is over) and ends.
class StreamWorker final : public Napi::AsyncProgressQueueWorker<Request*> {
 public:
  StreamWorker(Napi::Env env, Database* database, RequestQueue* queue)
      : Napi::AsyncProgressQueueWorker<Request*>(env, "sift-level.reads"),
        database_(database),
        database_ref_(Napi::Persistent(database->Value())),
        queue_(queue) {}

 private:
  void Execute(const ExecutionProgress& progress) override {
    std::vector<Request*> done;
    for (;;) {
      std::vector<std::unique_ptr<Request>> batch = queue_->TakeOrWait();
      if (batch.empty()) break;
      queue_->Serve(nullptr, batch);
      done.clear();
      for (auto& r : batch) done.push_back(r.release());
      progress.Send(done.data(), done.size());
    }
  }
  void OnProgress(Request* const* data, size_t count) override {
    Napi::Env env = Env();
    for (size_t i = 0; i < count; i++) {
      queue_->Settled(env, database_, std::unique_ptr<Request>(data[i]));
    }
  }
  void OnOK() override { Finish(); }
  void OnError(const Napi::Error&) override { Finish(); }
  void Finish() {
    queue_->running_--;
    queue_->MaybeStart(database_);
  }

  Database* const database_;
  Napi::ObjectReference database_ref_;
  RequestQueue* const queue_;
};

std::vector<std::unique_ptr<Request>> RequestQueue::TakeOrWait() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  // Spin first: the JavaScript thread is typically settling the last batch
  // and about to queue the reads that follow from it.
  constexpr auto kSpin = std::chrono::microseconds(30);
  constexpr auto kWait = std::chrono::microseconds(1000);
  for (;;) {
    if (queued_.load(std::memory_order_acquire) > 0) {
      std::vector<std::unique_ptr<Request>> taken = Take();
      if (!taken.empty()) return taken;
    }
    if (Clock::now() - start >= kSpin) break;
    for (int i = 0; i < 32; i++) __builtin_ia32_pause();
  }
  std::unique_lock<std::mutex> lock(mu_);
  waiting_ = true;
  cv_.wait_until(lock, start + kWait, [this] { return !pending_.empty(); });
  waiting_ = false;
  return TakeLocked();
}

std::unique_ptr<Request> RequestQueue::NewRequest(Napi::Env env,
                                                  Request::Kind kind) {
  if (free_.empty()) return std::make_unique<Request>(env, kind);
  std::unique_ptr<Request> r = std::move(free_.back());
  free_.pop_back();
  r->Reset(env, kind);
  return r;
}

Napi::Promise RequestQueue::Add(Database* database,
                                std::unique_ptr<Request> request) {
  Napi::Promise promise = request->deferred.Promise();
  database->WorkStarted();
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_keys_ += Keys(*request);
    pending_.push_back(std::move(request));
    queued_.store(pending_.size(), std::memory_order_release);
    wake = waiting_;
  }
  if (wake) cv_.notify_one();
  MaybeStart(database);
  return promise;
}

void RequestQueue::MaybeStart(Database* database) {
  if (running_ >= max_running_ || database->sift_db() == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A second trip while one runs only for much queued work: a few keys
    // wait better for the running trip to take them all at once (two trips
    // for four gets cost more than one), while many are worth serving on
    // two threads (reads from disk overlap their I/O, and a getMany's keys
    // are a trip's worth of work each). Counted in keys, not requests: with
    // four getMany of 32 in flight, counting requests kept them all on one
    // thread.
    constexpr size_t kParallelKeys = 16;
    if (pending_.empty() || (running_ > 0 && pending_keys_ < kParallelKeys)) {
      return;
    }
  }
  running_++;
  if (writes_) {
    (new DrainWorker(database->Env(), database, this))->Queue();
  } else {
    (new StreamWorker(database->Env(), database, this))->Queue();
  }
}

size_t RequestQueue::Keys(const Request& r) {
  return r.key_ends.empty() ? 1 : r.key_ends.size();
}

std::vector<std::unique_ptr<Request>> RequestQueue::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  return TakeLocked();
}

std::vector<std::unique_ptr<Request>> RequestQueue::TakeLocked() {
  constexpr size_t kTripKeys = 32;
  std::vector<std::unique_ptr<Request>> taken;
  size_t n = pending_.size();
  if (writes_ || pending_keys_ <= kTripKeys) {
    pending_keys_ = 0;
  } else {
    n = 0;
    size_t keys = 0;
    while (n < pending_.size() && keys < kTripKeys)
      keys += Keys(*pending_[n++]);
    pending_keys_ -= keys;
  }
  taken.assign(std::make_move_iterator(pending_.begin()),
               std::make_move_iterator(pending_.begin() + n));
  pending_.erase(pending_.begin(), pending_.begin() + n);
  queued_.store(pending_.size(), std::memory_order_release);
  return taken;
}

void RequestQueue::Serve(sift::DB* db,
                         std::vector<std::unique_ptr<Request>>& requests) {
  if (!writes_) {
    // Each read with the DB it was made for: a trip may outlive a close of
    // the database and serve reads made after it is opened again.
    for (auto& r : requests) r->Read(r->db);
    return;
  }
  // Consecutive writes commit as one batch; sync if any of them asked.
  size_t i = 0;
  while (i < requests.size()) {
    size_t end = i + 1;
    sift::WriteOptions wo;
    wo.sync = requests[i]->sync;
    absl::Status s;
    if (requests.size() - i == 1) {
      s = db->Write(wo, &requests[i]->batch);
    } else {
      sift::WriteBatch group = std::move(requests[i]->batch);
      for (; end < requests.size(); end++) {
        group.Append(requests[end]->batch);
        wo.sync = wo.sync || requests[end]->sync;
      }
      s = db->Write(wo, &group);
    }
    for (; i < end; i++) requests[i]->status = s;
  }
}

}  // namespace sift_node
