// Helpers shared by the addon's classes: bytes in from JavaScript, bytes and
// errors out to it, and the base of every piece of work done off the
// JavaScript thread.
#ifndef SIFT_NODE_SRC_COMMON_H_
#define SIFT_NODE_SRC_COMMON_H_

#include <napi.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "sift/db.h"

namespace sift_node {

class Database;

// A snapshot shared by everything that reads through it (an explicit
// snapshot object, the iterators and reads made with it, in-flight work);
// released by the last owner. Every reference is dropped before the DB
// closes (Database::Close waits for in-flight work and detaches the rest).
using SnapshotRef = std::shared_ptr<const sift::Snapshot>;
SnapshotRef TakeSnapshot(sift::DB* db);

// Copies the bytes of a string (as UTF-8) or of any ArrayBufferView (Buffer,
// Uint8Array...) into *out. false if `value` is neither.
bool ReadBytes(const Napi::Value& value, std::string* out);

// A view of a Buffer/TypedArray's bytes, valid while `value` is alive and the
// JavaScript thread does not run. false if `value` is not a view.
bool ViewBytes(const Napi::Value& value, std::string_view* out);

// True if every byte is below 0x80.
bool IsAscii(std::string_view bytes);

// A string (the bytes as UTF-8) or a Buffer holding a copy of `bytes`.
Napi::Value BytesToJs(Napi::Env env, std::string_view bytes, bool as_string);

// An Error whose `code` follows abstract-level's codes where one fits
// (LEVEL_CORRUPTION, LEVEL_IO_ERROR, LEVEL_LOCKED, LEVEL_NOT_FOUND) and
// SIFT_<ABSL CODE> otherwise; `status` holds absl's name of the code.
Napi::Error StatusToError(Napi::Env env, const absl::Status& status);
// An Error with the given code and message.
Napi::Error CodedError(Napi::Env env, const char* code, std::string_view msg);

// Rejected promise helpers for argument and state errors found on the
// JavaScript thread, before any work is queued.
Napi::Value Rejected(Napi::Env env, const Napi::Error& error);

// Work done off the JavaScript thread for a promise. Execute() runs on the
// libuv thread pool and sets status_; the result is built on the JavaScript
// thread by Result() when status_ is OK, else the promise is rejected with
// StatusToError(status_). Holds a reference to the database's JavaScript
// object so the database outlives the work, and counts as in-flight work of
// the database (which delays its close).
class DbWorker : public Napi::AsyncWorker {
 public:
  DbWorker(Napi::Env env, Database* db, const char* name);
  // Settles `deferred` instead of a promise of its own.
  DbWorker(Napi::Env env, Database* db, const char* name,
           Napi::Promise::Deferred deferred);
  ~DbWorker() override;

  // Queues the work and returns its promise.
  Napi::Promise Start();

 protected:
  virtual Napi::Value Result(Napi::Env env) { return env.Undefined(); }
  // Runs on the JavaScript thread when the work is done, before the promise
  // is settled (state changes that later JavaScript must observe).
  virtual void BeforeSettle() {}

  Database* const db_;
  // The database's sift::DB when the work was queued (nullptr if it was not
  // open): the pool thread reads this, never the Database's members.
  sift::DB* const sift_db_;
  absl::Status status_;

 private:
  void OnOK() final;
  void OnError(const Napi::Error& error) final;

  Napi::ObjectReference db_ref_;
  Napi::Promise::Deferred deferred_;
};

}  // namespace sift_node

#endif  // SIFT_NODE_SRC_COMMON_H_
