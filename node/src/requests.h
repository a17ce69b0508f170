// Point reads and writes go through two queues of requests, each drained on
// the thread pool by a few workers: a write trip takes every request queued
// so far, a read trip about 32 keys' worth at a time (so that a second read
// trip, started when 16 or more keys wait, shares large reads with it).
// A request costs one trip to the pool only when none is running; requests
// made while one runs share the next trip. Many reads (or writes) in flight
// thus cost a fraction of a trip each, where one worker per request would
// pay the thread hand-offs of every one. Consecutive writes of one trip are
// committed as one sift::WriteBatch: atomic together, in call order.
#ifndef SIFT_NODE_SRC_REQUESTS_H_
#define SIFT_NODE_SRC_REQUESTS_H_

#include <napi.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common.h"
#include "sift/db.h"
#include "sift/write_batch.h"

namespace sift_node {

class Database;

struct Request {
  enum class Kind { kGet, kHas, kGetMany, kHasMany, kWrite };

  Request(Napi::Env env, Kind k)
      : kind(k), deferred(Napi::Promise::Deferred::New(env)) {}

  // Makes a settled request new again, keeping the capacity of its buffers
  // (keys, values) for the next call.
  void Reset(Napi::Env env, Kind k);

  Kind kind;
  Napi::Promise::Deferred deferred;

  // Reads: the key (or keys), their snapshot (taken when the call was
  // made), how to return values.
  std::string key;
  // Many keys: their bytes back to back in key (no allocation per key),
  // key_ends[i] the end of the i-th.
  std::vector<size_t> key_ends;
  SnapshotRef snapshot;
  // The DB read (open when the read was made; a close waits for the read).
  sift::DB* db = nullptr;
  bool as_string = false;
  bool fill_cache = true;
  // Writes: the updates (a put or del is a batch of one).
  sift::WriteBatch batch;
  bool sync = false;

  // Set on the pool.
  absl::Status status;
  std::string value;
  std::vector<std::string> values;
  std::vector<bool> found;
  // getMany's values back to back (PackValues), kept for its capacity.
  std::string packed;

  // On the pool: performs a read.
  void Read(sift::DB* db);
  // On the JavaScript thread: settles the promise.
  void Settle(Napi::Env env);
  Napi::Value PackValues(Napi::Env env);
};

// Thread safety: pending_ is shared with the pool under mu_; running_ is
// the JavaScript thread's.
class RequestQueue {
 public:
  RequestQueue(bool writes, int max_running)
      : writes_(writes), max_running_(max_running) {}

  // A request to fill in and Add: a settled one reused, or a new one.
  // JavaScript thread only.
  std::unique_ptr<Request> NewRequest(Napi::Env env, Request::Kind kind);

  // Queues `request` and starts a drain when fewer than max_running are
  // running. Returns the request's promise.
  Napi::Promise Add(Database* database, std::unique_ptr<Request> request);

 private:
  friend class DrainWorker;
  friend class StreamWorker;

  // The keys a request reads (a getMany's each; a get or a write is one).
  static size_t Keys(const Request& r);
  void MaybeStart(Database* database);
  std::vector<std::unique_ptr<Request>> Take();
  // Take with mu_ held: writes all at once (one WriteBatch per trip); reads
  // from the front, kTripKeys keys' worth (at least one request), so that
  // with a few large reads queued (getMany) a second trip finds work while
  // the first serves its share.
  std::vector<std::unique_ptr<Request>> TakeLocked();
  // On the pool: Take, waiting a little for requests when none are queued;
  // empty if none came.
  std::vector<std::unique_ptr<Request>> TakeOrWait();
  // On the JavaScript thread: settles a served request and keeps it for
  // reuse.
  void Settled(Napi::Env env, Database* database, std::unique_ptr<Request> r);
  // On the pool: serves `requests` in order (writes into `db`, reads from
  // the DB each was made for).
  void Serve(sift::DB* db, std::vector<std::unique_ptr<Request>>& requests);

  const bool writes_;
  const int max_running_;
  int running_ = 0;
  std::mutex mu_;
  // Taken from the front a trip's worth at a time: a deque, so that a long
  // queue (thousands of gets in flight) is not shifted on every trip.
  std::deque<std::unique_ptr<Request>> pending_;  // guarded by mu_
  size_t pending_keys_ = 0;  // Keys() of pending_, summed; guarded by mu_
  std::condition_variable cv_;
  bool waiting_ = false;  // a trip waits on cv_; guarded by mu_
  // pending_.size(), readable without mu_ (a spinning trip polls it).
  std::atomic<size_t> queued_{0};
  // Settled requests kept for reuse (JavaScript thread only).
  std::vector<std::unique_ptr<Request>> free_;
};

}  // namespace sift_node

#endif  // SIFT_NODE_SRC_REQUESTS_H_
