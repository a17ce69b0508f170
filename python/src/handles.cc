#include "handles.h"

#include <chrono>
#include <thread>
#include <utility>

#include "gil_state.h"

namespace sift_python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_io_error = nullptr;
PyObject* g_corruption_error = nullptr;
PyObject* g_iterator_invalid_error = nullptr;

PyObject* NewException(py::module_& m, const char* name, PyObject* bases,
                       const char* doc) {
  std::string qualified = std::string("sift.") + name;
  PyObject* type =
      PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // the module keeps a reference too
  return type;
}

// Waits with the GIL released until `done()` (evaluated with the GIL held).
template <typename F>
void WaitUntil(F&& done) {
  while (!done()) {
    py::gil_scoped_release release;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void ReleaseGil::PollWhileGilHeld(std::chrono::microseconds limit) {
  if (SiftPythonGilLocked() != 1) return;  // free, or the state is unknown
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // The clock is read every 64 polls; a poll is one load and a pause.
  for (unsigned polls = 1; SiftPythonGilLocked() == 1; ++polls) {
    CpuRelax();
    if (polls % 64 == 0 && std::chrono::steady_clock::now() >= deadline) {
      return;
    }
  }
}

void RegisterExceptions(py::module_& m) {
  g_error = NewException(m, "Error", PyExc_Exception,
                         "Base class of the errors the engine reports.");
  py::tuple io_bases =
      py::make_tuple(py::handle(g_error), py::handle(PyExc_OSError));
  g_io_error =
      NewException(m, "IOError", io_bases.ptr(),
                   "An I/O failure (also a builtins.IOError / OSError).");
  g_corruption_error =
      NewException(m, "CorruptionError", g_error, "Damaged data was read.");
  g_iterator_invalid_error =
      NewException(m, "IteratorInvalidError", g_error,
                   "A RawIterator method that needs a position was called "
                   "on an iterator that has none.");
}

void RaiseStatus(const absl::Status& status) {
  PyObject* type;
  switch (status.code()) {
    case absl::StatusCode::kDataLoss:
      type = g_corruption_error;
      break;
    case absl::StatusCode::kInvalidArgument:
      type = g_error;
      break;
    default:
      type = g_io_error;
      break;
  }
  PyErr_SetString(type, status.ToString().c_str());
  throw py::error_already_set();
}

void RaiseIteratorInvalid(const char* message) {
  PyErr_SetString(g_iterator_invalid_error, message);
  throw py::error_already_set();
}

BytesArg::BytesArg(py::handle obj, const char* what, bool allow_buffer) {
  PyObject* o = obj.ptr();
  if (PyBytes_Check(o)) {
    view_ = std::string_view(PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
    return;
  }
  if (allow_buffer && !PyUnicode_Check(o) && PyObject_CheckBuffer(o)) {
    if (PyObject_GetBuffer(o, &buffer_, PyBUF_SIMPLE) != 0) {
      throw py::error_already_set();
    }
    has_buffer_ = true;
    view_ = std::string_view(static_cast<const char*>(buffer_.buf),
                             static_cast<size_t>(buffer_.len));
    return;
  }
  throw py::type_error(std::string(what) + " must be bytes, not " +
                       Py_TYPE(o)->tp_name);
}

BytesArg::~BytesArg() {
  if (has_buffer_) PyBuffer_Release(&buffer_);
}

std::optional<std::string> OptionalBytes(py::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  BytesArg arg(obj, what, /*allow_buffer=*/false);
  return std::string(arg.view());
}

std::string FsPath(py::handle name) {
  py::object encoded = py::module_::import("os").attr("fsencode")(name);
  return std::string(BytesArg(encoded, "name", false).view());
}

// ---- DBHandle ----

DBHandle::DBHandle(py::object name, const sift::Options& options)
    : name_(std::move(name)) {
  std::string path = FsPath(name_);
  absl::StatusOr<std::unique_ptr<sift::DB>> db;
  {
    py::gil_scoped_release release;
    db = sift::DB::Open(options, path);
  }
  Check(db.status());
  db_ = *std::move(db);
}

DBHandle::~DBHandle() {
  // No iterator, snapshot or call can be left: each holds a reference.
  if (db_ == nullptr) return;
#if PY_VERSION_HEX >= 0x030D0000
  const bool finalizing = Py_IsFinalizing();
#else
  const bool finalizing = _Py_IsFinalizing();
#endif
  if (finalizing) {  // no thread state to hand the GIL to
    db_.reset();
    return;
  }
  py::gil_scoped_release release;
  db_.reset();
}

void DBHandle::CheckOpen() const {
  if (db_ == nullptr || closing_) {
    throw std::runtime_error("Database is closed");
  }
}

void DBHandle::Close() {
  if (db_ == nullptr) return;
  if (closing_) {  // another thread is closing it: wait for that
    WaitUntil([this] { return db_ == nullptr; });
    return;
  }
  closing_ = true;
  WaitUntil([this] { return in_flight_ == 0; });
  std::unordered_set<Resource*> resources;
  resources.swap(resources_);
  for (Resource* r : resources) r->CloseForDB();
  std::unique_ptr<sift::DB> db = std::move(db_);
  {
    py::gil_scoped_release release;
    db.reset();
  }
  closing_ = false;
}

// ---- SnapshotHandle ----

SnapshotHandle::SnapshotHandle(py::object db_obj,
                               std::optional<std::string> prefix)
    : db_obj_(std::move(db_obj)),
      db_(db_obj_.cast<DBHandle*>()),
      prefix_(std::move(prefix)) {
  DBHandle::Call call(*db_);
  {
    py::gil_scoped_release release;
    snapshot_ = db_->db()->GetSnapshot();
  }
  db_->Register(this);
}

SnapshotHandle::~SnapshotHandle() {
  Release();
  db_->Unregister(this);
}

void SnapshotHandle::CheckOpen() const {
  if (snapshot_ == nullptr || db_->closed()) {
    throw std::runtime_error("Database or snapshot is closed");
  }
}

void SnapshotHandle::Close() {
  WaitUntil([this] { return users_ == 0; });
  Release();
  db_->Unregister(this);
}

void SnapshotHandle::Release() {
  if (snapshot_ == nullptr) return;
  if (!db_->closed()) db_->db()->ReleaseSnapshot(snapshot_);
  snapshot_ = nullptr;
}

// ---- IteratorBase ----

IteratorBase::IteratorBase(py::object db_obj, py::object snapshot_obj)
    : db_obj_(std::move(db_obj)),
      snapshot_obj_(std::move(snapshot_obj)),
      db_(db_obj_.cast<DBHandle*>()) {
  db_->CheckOpen();
}

void IteratorBase::Open(sift::ReadOptions options) {
  std::optional<SnapshotHandle::Use> snapshot_use;
  if (!snapshot_obj_.is_none()) {
    SnapshotHandle& s = snapshot_obj_.cast<SnapshotHandle&>();
    snapshot_use.emplace(s);
    options.snapshot = s.snapshot();
  }
  DBHandle::Call call(*db_);
  {
    py::gil_scoped_release release;
    it_ = db_->db()->NewIterator(options);
  }
  db_->Register(this);
}

IteratorBase::~IteratorBase() {
  it_.reset();
  db_->Unregister(this);
}

void IteratorBase::Close() {
  WaitUntil([this] { return !busy_; });
  it_.reset();
  db_->Unregister(this);
}

IteratorBase::Use::Use(IteratorBase& it) : it_(it), call_(*it.db_) {
  if (it_.it_ == nullptr) {
    throw std::runtime_error("Database or iterator is closed");
  }
  if (it_.busy_) {
    throw std::runtime_error("Iterator is in use by another thread");
  }
  it_.busy_ = true;
}

// ---- WriteBatchHandle ----

WriteBatchHandle::WriteBatchHandle(py::object db_obj,
                                   std::optional<std::string> prefix,
                                   bool transaction, bool sync)
    : db_obj_(std::move(db_obj)),
      db_(db_obj_.cast<DBHandle*>()),
      prefix_(std::move(prefix)),
      transaction_(transaction) {
  db_->CheckOpen();
  options_.sync = sync;
}

void WriteBatchHandle::CheckUsable() const {
  db_->CheckOpen();
  if (writing_) {
    throw std::runtime_error("Write batch is being written by another thread");
  }
}

std::string WriteBatchHandle::PrefixedKey(std::string_view key) const {
  std::string k = prefix_.value_or("");
  k.append(key);
  return k;
}

void WriteBatchHandle::Put(py::handle key, py::handle value) {
  CheckUsable();
  BytesArg k(key, "key", false);
  BytesArg v(value, "value", true);
  if (prefix_) {
    batch_.Put(PrefixedKey(k.view()), v.view());
  } else {
    batch_.Put(k.view(), v.view());
  }
}

void WriteBatchHandle::Delete(py::handle key) {
  CheckUsable();
  BytesArg k(key, "key", false);
  if (prefix_) {
    batch_.Delete(PrefixedKey(k.view()));
  } else {
    batch_.Delete(k.view());
  }
}

void WriteBatchHandle::Clear() {
  CheckUsable();
  batch_.Clear();
}

void WriteBatchHandle::Write() {
  CheckUsable();
  DBHandle::Call call(*db_);
  writing_ = true;
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = db_->db()->Write(options_, &batch_);
  }
  writing_ = false;
  Check(s);
}

void WriteBatchHandle::Append(const WriteBatchHandle& other) {
  CheckUsable();
  if (other.writing_) {
    throw std::runtime_error("Write batch is being written by another thread");
  }
  batch_.Append(other.batch_);
}

size_t WriteBatchHandle::ApproximateSize() const {
  CheckUsable();
  return batch_.ApproximateSize();
}

void WriteBatchHandle::Exit(bool raised) {
  CheckUsable();
  if (!(transaction_ && raised)) Write();
  batch_.Clear();
}

// ---- TableWriterHandle ----

TableWriterHandle::TableWriterHandle(py::object path,
                                     const sift::Options& options)
    : path_(std::move(path)) {
  std::string p = FsPath(path_);
  absl::StatusOr<std::unique_ptr<sift::TableFileWriter>> w;
  {
    py::gil_scoped_release release;
    w = sift::TableFileWriter::Open(options, p);
  }
  Check(w.status());
  writer_ = *std::move(w);
}

sift::TableFileWriter* TableWriterHandle::CheckUsable() {
  if (writer_ == nullptr) {
    throw std::runtime_error("Table writer is finished");
  }
  if (busy_)
    throw std::runtime_error("Table writer is in use by another thread");
  return writer_.get();
}

void TableWriterHandle::Put(py::handle key, py::handle value) {
  sift::TableFileWriter* w = CheckUsable();
  BytesArg k(key, "key", false);
  BytesArg v(value, "value", true);
  busy_ = true;
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = w->Put(k.view(), v.view());
  }
  busy_ = false;
  Check(s);
}

void TableWriterHandle::Delete(py::handle key) {
  sift::TableFileWriter* w = CheckUsable();
  BytesArg k(key, "key", false);
  busy_ = true;
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = w->Delete(k.view());
  }
  busy_ = false;
  Check(s);
}

py::dict TableWriterHandle::Finish() {
  sift::TableFileWriter* w = CheckUsable();
  busy_ = true;
  absl::StatusOr<sift::ExternalTableInfo> info;
  {
    py::gil_scoped_release release;
    info = w->Finish();
  }
  busy_ = false;
  writer_.reset();  // Finish may be called once, successful or not
  Check(info.status());
  py::dict d;
  d["smallest_key"] = py::bytes(info->smallest_key);
  d["largest_key"] = py::bytes(info->largest_key);
  d["num_entries"] = info->num_entries;
  d["file_size"] = info->file_size;
  return d;
}

}  // namespace sift_python
