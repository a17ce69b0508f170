// The native side of SiftLevel's iterators: a sift::Iterator over a range,
// read in runs of entries off the JavaScript thread.
#ifndef SIFT_NODE_SRC_ITERATOR_H_
#define SIFT_NODE_SRC_ITERATOR_H_

#include <napi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "sift/iterator.h"

namespace sift_node {

class Database;

// Created on the JavaScript thread with the snapshot it reads (taken then,
// so it sees no write made after its creation); the sift::Iterator itself is
// made by the first read, on the thread pool, since making one may open
// tables. abstract-level runs at most one read per iterator at a time and
// never seeks during a read, so the members a read uses are touched by one
// thread at a time: the pool thread between Start and OnOK, the JavaScript
// thread otherwise.
class Iterator : public Napi::ObjectWrap<Iterator> {
 public:
  static Napi::Function Init(Napi::Env env);
  // new Iterator(database, options, snapshotHandle | null, keys, values)
  explicit Iterator(const Napi::CallbackInfo& info);
  ~Iterator() override;

  // Releases the sift iterator and the snapshot (the database is closing or
  // being collected). Later reads fail with LEVEL_ITERATOR_NOT_OPEN.
  void Detach();

 private:
  friend class NextWorker;

  // seek(target): the next read starts at the entry closest to target
  // (the first >= target, or the last <= target in reverse).
  Napi::Value Seek(const Napi::CallbackInfo& info);
  // next(size) -> Promise of up to size entries ([key, value] pairs, or keys
  // or values alone as the iterator was made); [] at the end.
  Napi::Value Next(const Napi::CallbackInfo& info);
  // close(): releases everything now (no read is in flight then).
  Napi::Value Close(const Napi::CallbackInfo& info);

  // On the pool: reads up to `size` entries into arena_/ends_.
  absl::Status Fill(sift::DB* db, uint32_t size);
  void Position();
  // On the JavaScript thread: the entries of the last Fill.
  Napi::Value Entries(Napi::Env env) const;

  Database* database_;
  SnapshotRef snapshot_;
  // Bounds in sift's form: lower inclusive, upper exclusive. Kept here, as
  // the sift::Iterator holds views of them.
  std::optional<std::string> lower_, upper_;
  bool reverse_ = false;
  bool keys_ = true, values_ = true;
  bool keys_as_string_ = false, values_as_string_ = false;
  bool fill_cache_ = true;
  int64_t limit_ = -1;  // -1: none
  int64_t count_ = 0;   // entries returned so far

  std::unique_ptr<sift::Iterator> it_;
  bool positioned_ = false;
  std::optional<std::string> seek_target_;
  bool ended_ = false;
  bool busy_ = false;
  // close() came while a read was in flight: done when the read completes.
  bool close_pending_ = false;

  // The last run read: keys and values back to back in arena_, ends_[i] the
  // end offset of the i-th piece. Reused across reads.
  std::string arena_;
  std::vector<size_t> ends_;
};

}  // namespace sift_node

#endif  // SIFT_NODE_SRC_ITERATOR_H_
