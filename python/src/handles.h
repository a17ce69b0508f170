// The C++ objects behind the Python classes of the `sift` package, and the
// rules that keep them safe to use from Python threads.
//
// Every method that calls into the engine holds the GIL only to read its
// arguments and to build its result; the engine call itself runs with the GIL
// released. A DBHandle counts the calls in flight (the counter is touched only
// with the GIL held, so it needs no atomics); Close() refuses new calls, waits
// for those in flight with the GIL released, closes the iterators and
// snapshots still open and only then destroys the engine's DB. Iterators,
// snapshots and write batches hold a Python reference to their DB, so the
// DBHandle outlives them.
#ifndef SIFT_PYTHON_SRC_HANDLES_H_
#define SIFT_PYTHON_SRC_HANDLES_H_

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "sift/db.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/table_file_writer.h"
#include "sift/write_batch.h"

namespace sift_python {

namespace py = pybind11;

// Releases the GIL for its lifetime (a lighter py::gil_scoped_release).
//
// kPointRead is for engine calls of about a microsecond (Get, MultiGet of a
// few keys): on the way back, while another thread holds the GIL, the thread
// polls the GIL for up to kPointReadSpin before it blocks in
// PyEval_RestoreThread. Threads that alternate short engine calls with a few
// hundred nanoseconds of Python then hand the GIL over without sleeping on
// its condition variable: a sleeping waiter is woken by a futex call and
// then waits to be scheduled, which on a virtual machine takes longer than
// the Get it waited for, and meanwhile the releasing thread takes the GIL
// back, so a second reading thread added almost nothing (doc/python.md,
// "The GIL"). A holder busy for longer (Python work between reads) costs a
// waiter at most kPointReadSpin of polling before it blocks as usual. Needs
// the GIL's state (gil_state.h); where the interpreter does not give it,
// kPointRead is kBlock.
class ReleaseGil {
 public:
  enum Wait { kBlock, kPointRead };
  static constexpr std::chrono::microseconds kPointReadSpin{20};

  explicit ReleaseGil(Wait wait = kBlock)
      : state_(PyEval_SaveThread()), wait_(wait) {}
  ~ReleaseGil() {
    if (wait_ == kPointRead) PollWhileGilHeld(kPointReadSpin);
    PyEval_RestoreThread(state_);
  }
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  // Returns once no thread holds the GIL, or after `limit`.
  static void PollWhileGilHeld(std::chrono::microseconds limit);

  PyThreadState* state_;
  Wait wait_;
};

// Raises the Python exception for a non-OK status: sift.CorruptionError for
// damaged data, sift.Error for an invalid argument, sift.IOError otherwise.
[[noreturn]] void RaiseStatus(const absl::Status& status);
inline void Check(const absl::Status& status) {
  if (!status.ok()) RaiseStatus(status);
}
// Creates the exception classes in `m`; called once by the module init.
void RegisterExceptions(py::module_& m);
// sift.IteratorInvalidError with `message`.
[[noreturn]] void RaiseIteratorInvalid(const char* message);

// A read-only view of a bytes argument. Only `bytes` is accepted for keys
// (like plyvel); values also take any object with the buffer protocol
// (bytearray, memoryview...), held until the view is destroyed. Anything else
// (str in particular) raises TypeError naming the argument.
class BytesArg {
 public:
  BytesArg(py::handle obj, const char* what, bool allow_buffer);
  ~BytesArg();
  BytesArg(const BytesArg&) = delete;
  BytesArg& operator=(const BytesArg&) = delete;
  std::string_view view() const { return view_; }

 private:
  std::string_view view_;
  bool has_buffer_ = false;
  Py_buffer buffer_{};
};

// Optional bytes argument (None = absent) copied into a string.
std::optional<std::string> OptionalBytes(py::handle obj, const char* what);

// Something owned by a DB that DB::close() must close first.
class Resource {
 public:
  virtual ~Resource() = default;
  // Called by DBHandle::Close with the GIL held and no call in flight.
  virtual void CloseForDB() = 0;
};

class DBHandle {
 public:
  DBHandle(py::object name, const sift::Options& options);
  ~DBHandle();
  DBHandle(const DBHandle&) = delete;
  DBHandle& operator=(const DBHandle&) = delete;

  // Raises RuntimeError if the database is closed (or closing).
  void CheckOpen() const;
  bool closed() const { return db_ == nullptr; }
  sift::DB* db() const { return db_.get(); }
  const py::object& name() const { return name_; }
  void Close();

  void Register(Resource* r) { resources_.insert(r); }
  void Unregister(Resource* r) { resources_.erase(r); }

  // Marks one engine call in flight for its lifetime. REQUIRES: GIL held at
  // construction and destruction.
  class Call {
   public:
    explicit Call(DBHandle& h) : h_(h) {
      h_.CheckOpen();
      ++h_.in_flight_;
    }
    ~Call() { --h_.in_flight_; }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

   private:
    DBHandle& h_;
  };

 private:
  py::object name_;
  std::unique_ptr<sift::DB> db_;
  bool closing_ = false;
  int in_flight_ = 0;
  std::unordered_set<Resource*> resources_;
};

// A snapshot of a DB; `prefix` is set for snapshots of a PrefixedDB.
class SnapshotHandle : public Resource {
 public:
  SnapshotHandle(py::object db_obj, std::optional<std::string> prefix);
  ~SnapshotHandle() override;
  void CloseForDB() override { Release(); }
  void Close();
  // Raises RuntimeError if the snapshot or its DB is closed.
  void CheckOpen() const;
  DBHandle& db() const { return *db_; }
  const py::object& db_object() const { return db_obj_; }
  const sift::Snapshot* snapshot() const { return snapshot_; }
  const std::optional<std::string>& prefix() const { return prefix_; }

  // Marks a read through the snapshot in flight (Close waits for it).
  class Use {
   public:
    explicit Use(SnapshotHandle& s) : s_(s), call_(*s.db_) {
      s_.CheckOpen();
      ++s_.users_;
    }
    ~Use() { --s_.users_; }

   private:
    SnapshotHandle& s_;
    DBHandle::Call call_;
  };

 private:
  void Release();

  py::object db_obj_;
  DBHandle* db_;
  const sift::Snapshot* snapshot_ = nullptr;
  std::optional<std::string> prefix_;
  int users_ = 0;
};

// What DB.iterator() and its relatives take.
struct IteratorArgs {
  bool reverse = false;
  std::optional<std::string> start, stop, prefix;
  bool include_start = true, include_stop = false;
  bool include_key = true, include_value = true;
  bool verify_checksums = false, fill_cache = true;
};

// The engine iterator shared by Iterator and RawIterator: registration with
// the DB, closing, and the "one thread at a time" rule.
class IteratorBase : public Resource {
 public:
  // Checks that the DB is open; Open makes the engine iterator and registers
  // this with the DB.
  IteratorBase(py::object db_obj, py::object snapshot_obj);
  ~IteratorBase() override;
  void CloseForDB() override { it_.reset(); }
  void Close();
  bool closed() const { return it_ == nullptr; }

 protected:
  // Marks the iterator busy during one method call: raises RuntimeError if
  // it is closed, its DB is closed, or another thread is inside a call on it.
  class Use {
   public:
    explicit Use(IteratorBase& it);
    ~Use() { it_.busy_ = false; }

   private:
    IteratorBase& it_;
    DBHandle::Call call_;
  };

  // Makes the engine iterator (reading as of the snapshot, if any).
  void Open(sift::ReadOptions options);
  DBHandle& db() const { return *db_; }
  sift::Iterator* it() const { return it_.get(); }
  // Raises the iterator's error status, if any.
  void CheckStatus() const { Check(it_->status()); }

  // Runs an engine call on the iterator with the GIL released.
  template <typename F>
  void Move(F&& f) {
    ReleaseGil release;
    f(it_.get());
  }

 private:
  py::object db_obj_;
  py::object snapshot_obj_;  // None, or the SnapshotHandle read as of
  DBHandle* db_;
  std::unique_ptr<sift::Iterator> it_;
  bool busy_ = false;
};

// plyvel's Iterator: a range with inclusive/exclusive ends or a prefix,
// forward or reverse, with seek/prev and the Python iterator protocol.
class RangeIterator : public IteratorBase {
 public:
  RangeIterator(py::object db_obj, py::object snapshot_obj,
                std::optional<std::string> db_prefix, IteratorArgs args);

  // Next entry in the iterator's direction; nullopt at the end.
  std::optional<py::object> Next();
  // One step against the iterator's direction.
  std::optional<py::object> Prev();
  void SeekToStart();
  void SeekToStop();
  void Seek(py::handle target);

 private:
  enum class State { kBeforeStart, kAfterStop, kInBetween, kPositioned };

  std::optional<py::object> Forward();
  std::optional<py::object> Backward();
  // A step from kInBetween, served from the read-ahead.
  std::optional<py::object> Step(bool forward);
  // Copies up to ahead_limit_ entries in one direction, GIL released.
  void Fill(bool forward);
  // Discards the read-ahead and puts the engine iterator back at the entry
  // just before the cursor (kBeforeStart if there is none).
  void DropReadAhead();
  // Discards the read-ahead before a seek.
  void ResetReadAhead();
  py::object MakeEntry(std::string_view key, std::string_view value) const;
  py::object Current() const;
  // Whether `key` lies after the range's upper end / before its lower end.
  bool PastStop(std::string_view key) const;
  bool BeforeStart(std::string_view key) const;

  bool reverse_;
  std::optional<std::string> start_, stop_;
  bool include_start_, include_stop_, include_key_, include_value_;
  // The engine's exclusive upper bound: stop_, or the key right after it
  // when stop is included.
  std::optional<std::string> upper_bound_;
  size_t db_prefix_len_ = 0;
  std::optional<std::string> db_prefix_;
  State state_;

  // Read-ahead: successive steps in one direction copy entries from the
  // engine in runs, one release of the GIL per run, and serve them from
  // here. Runs double from 1 to kMaxReadAhead entries and start at 1 again
  // after a seek. Outside a run, in kInBetween the engine iterator is at the
  // entry just before the cursor (iterators.cc).
  // An entry of the run: its key and value lie back to back in
  // ahead_bytes_ from `offset` (one buffer, reused run after run).
  struct Entry {
    size_t offset, key_size, value_size;
  };
  std::string_view EntryKey(const Entry& e) const {
    return std::string_view(ahead_bytes_).substr(e.offset, e.key_size);
  }
  std::string_view EntryValue(const Entry& e) const {
    return std::string_view(ahead_bytes_)
        .substr(e.offset + e.key_size, e.value_size);
  }
  static constexpr size_t kMaxReadAhead = 64;
  static constexpr size_t kMaxReadAheadBytes = 64 << 10;
  std::vector<Entry> ahead_;
  std::string ahead_bytes_;
  size_t ahead_pos_ = 0;       // the next entry of ahead_ to serve
  bool ahead_forward_ = true;  // the direction ahead_ was read in
  bool ahead_ended_ = false;   // the run stopped at the range's end or an error
  size_t ahead_limit_ = 1;
};

// plyvel's RawIterator: the engine iterator as it is.
class RawIterator : public IteratorBase {
 public:
  // `lower_bound` (inclusive) and `upper_bound` (exclusive) become the
  // engine's ReadOptions iteration bounds; nullopt leaves that side open.
  // `prefix_same_as_start`: ReadOptions::prefix_same_as_start (with the
  // database's prefix extractor, a seek stays within its target's prefix).
  RawIterator(py::object db_obj, py::object snapshot_obj, bool verify_checksums,
              bool fill_cache, std::optional<std::string> lower_bound,
              std::optional<std::string> upper_bound,
              bool prefix_same_as_start);
  bool Valid();
  void SeekToFirst();
  void SeekToLast();
  void Seek(py::handle target);
  void Next();
  void Prev();
  py::bytes Key();
  py::bytes Value();
  py::tuple Item();

 private:
  // The bytes the engine's bounds point into, kept for the iterator's life.
  std::optional<std::string> lower_bound_, upper_bound_;
};

class WriteBatchHandle {
 public:
  WriteBatchHandle(py::object db_obj, std::optional<std::string> prefix,
                   bool transaction, bool sync);
  void Put(py::handle key, py::handle value);
  void Delete(py::handle key);
  void Clear();
  void Write();
  void Append(const WriteBatchHandle& other);
  size_t ApproximateSize() const;
  uint32_t Count() const { return batch_.Count(); }
  void Exit(bool raised);

 private:
  // Raises RuntimeError if the DB is closed or a write() of this batch runs
  // on another thread.
  void CheckUsable() const;
  std::string PrefixedKey(std::string_view key) const;

  py::object db_obj_;
  DBHandle* db_;
  std::optional<std::string> prefix_;
  bool transaction_;
  sift::WriteOptions options_;
  sift::WriteBatch batch_;
  bool writing_ = false;
};

class TableWriterHandle {
 public:
  TableWriterHandle(py::object path, const sift::Options& options);
  void Put(py::handle key, py::handle value);
  void Delete(py::handle key);
  py::dict Finish();
  void Abandon() { writer_.reset(); }
  bool finished() const { return writer_ == nullptr; }
  const py::object& path() const { return path_; }

 private:
  sift::TableFileWriter* CheckUsable();

  py::object path_;
  std::unique_ptr<sift::TableFileWriter> writer_;
  bool busy_ = false;
};

// os.fsencode(name): the path as bytes for str, bytes and os.PathLike.
std::string FsPath(py::handle name);

}  // namespace sift_python

#endif  // SIFT_PYTHON_SRC_HANDLES_H_
