#include "table_batch.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "handles.h"
#include "sift/table_file_writer.h"

namespace sift_python {
namespace {

struct Entry {
  std::string_view key, value;
};

// The entries of a (keys, values) pair of sequences as views into the Python
// objects. The views stay valid while this object lives: the fast sequences
// hold references to every item, and buffers of non-bytes values are held
// (and released) by `held_values_`.
class EntryViews {
 public:
  EntryViews(py::handle keys, py::handle values) {
    keys_ = Fast(keys, "keys");
    values_ = Fast(values, "values");
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(keys_.ptr());
    if (PySequence_Fast_GET_SIZE(values_.ptr()) != n) {
      throw py::value_error("keys and values differ in length (" +
                            std::to_string(n) + " keys, " +
                            std::to_string(PySequence_Fast_GET_SIZE(
                                values_.ptr())) +
                            " values)");
    }
    PyObject** k = PySequence_Fast_ITEMS(keys_.ptr());
    PyObject** v = PySequence_Fast_ITEMS(values_.ptr());
    entries_.resize(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!PyBytes_Check(k[i])) {
        throw py::type_error("key at position " + std::to_string(i) +
                             " must be bytes, not " + Py_TYPE(k[i])->tp_name);
      }
      Entry& e = entries_[static_cast<size_t>(i)];
      e.key = std::string_view(PyBytes_AS_STRING(k[i]),
                               static_cast<size_t>(PyBytes_GET_SIZE(k[i])));
      if (PyBytes_Check(v[i])) {
        e.value = std::string_view(PyBytes_AS_STRING(v[i]),
                                   static_cast<size_t>(PyBytes_GET_SIZE(v[i])));
      } else {
        std::string what = "value at position " + std::to_string(i);
        held_values_.emplace_back(py::handle(v[i]), what.c_str(), true);
        e.value = held_values_.back().view();
      }
    }
  }

  std::vector<Entry>& entries() { return entries_; }

 private:
  static py::object Fast(py::handle seq, const char* what) {
    std::string message = std::string(what) + " must be a sequence";
    PyObject* fast = PySequence_Fast(seq.ptr(), message.c_str());
    if (fast == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(fast);
  }

  py::object keys_, values_;
  std::deque<BytesArg> held_values_;  // a deque: BytesArg cannot move
  std::vector<Entry> entries_;
};

uint64_t EntryHash(const Entry& e) {
  return XXH3_64bits_withSeed(e.value.data(), e.value.size(),
                              XXH3_64bits(e.key.data(), e.key.size()));
}

// What the GIL-free part of WriteTableBatch produces.
struct BatchResult {
  absl::StatusOr<sift::ExternalTableInfo> info;
  uint64_t checksum = 0;
  uint64_t duplicates = 0;
};

BatchResult SortAndWrite(std::vector<Entry>& entries,
                         const sift::Options& options,
                         const std::string& path) {
  BatchResult r;
  // A stable sort keeps entries of one key in input order, so the last of
  // each run of equal keys is the one that came last in the input.
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const Entry& a, const Entry& b) { return a.key < b.key; });
  absl::StatusOr<std::unique_ptr<sift::TableFileWriter>> writer =
      sift::TableFileWriter::Open(options, path);
  if (!writer.ok()) {
    r.info = writer.status();
    return r;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + 1 < entries.size() && entries[i + 1].key == entries[i].key) {
      ++r.duplicates;  // overwritten by a later entry of the input
      continue;
    }
    absl::Status s = (*writer)->Put(entries[i].key, entries[i].value);
    if (!s.ok()) {
      r.info = s;
      return r;
    }
    r.checksum += EntryHash(entries[i]);
  }
  r.info = (*writer)->Finish();
  return r;
}

py::dict InfoDict(py::handle path_obj, const BatchResult& r) {
  py::dict d;
  d["path"] = path_obj;
  d["smallest_key"] = py::bytes(r.info->smallest_key);
  d["largest_key"] = py::bytes(r.info->largest_key);
  d["num_entries"] = r.info->num_entries;
  d["file_size"] = r.info->file_size;
  d["checksum"] = r.checksum;
  d["duplicates"] = r.duplicates;
  return d;
}

}  // namespace

py::object WriteTableBatch(py::handle path_obj, py::handle keys,
                           py::handle values, const sift::Options& options) {
  std::string path = FsPath(path_obj);
  EntryViews views(keys, values);
  if (views.entries().empty()) return py::none();
  BatchResult r;
  {
    ReleaseGil release;
    r = SortAndWrite(views.entries(), options, path);
    // A failed write leaves no partial table for the caller to find.
    if (!r.info.ok()) ::unlink(path.c_str());
  }
  Check(r.info.status());
  return InfoDict(path_obj, r);
}

namespace {

// A read-only byte buffer argument, held for the call.
class Buffer {
 public:
  Buffer(py::handle obj, const char* what) {
    if (PyUnicode_Check(obj.ptr()) ||
        PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      throw py::type_error(std::string(what) +
                           " must be a bytes-like object, not " +
                           Py_TYPE(obj.ptr())->tp_name);
    }
  }
  ~Buffer() { PyBuffer_Release(&view_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::string_view bytes() const {
    return std::string_view(static_cast<const char*>(view_.buf),
                            static_cast<size_t>(view_.len));
  }

 private:
  Py_buffer view_{};
};

// The lengths of a packed sequence: a contiguous buffer of 64-bit integers
// (numpy int64), held for the call.
class Lengths {
 public:
  Lengths(py::handle obj, const char* what) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) !=
        0) {
      PyErr_Clear();
      throw py::type_error(std::string(what) +
                           " must be a contiguous buffer of int64, not " +
                           Py_TYPE(obj.ptr())->tp_name);
    }
    std::string_view format = view_.format ? view_.format : "B";
    if (view_.itemsize != 8 || (format != "q" && format != "l" &&
                                format != "<q" && format != "=q")) {
      PyBuffer_Release(&view_);
      throw py::type_error(std::string(what) + " must hold int64, not format '" +
                           std::string(format) + "'");
    }
  }
  ~Lengths() { PyBuffer_Release(&view_); }
  Lengths(const Lengths&) = delete;
  Lengths& operator=(const Lengths&) = delete;
  size_t size() const { return static_cast<size_t>(view_.len) / 8; }
  int64_t operator[](size_t i) const {
    return static_cast<const int64_t*>(view_.buf)[i];
  }

 private:
  Py_buffer view_{};
};

// Cuts `data` into size() pieces of the given lengths (ValueError unless
// they are non-negative and add up to its size exactly).
void Cut(std::string_view data, const Lengths& lengths, const char* what,
         std::vector<Entry>& entries, bool keys) {
  size_t offset = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const int64_t n = lengths[i];
    if (n < 0 || static_cast<uint64_t>(n) > data.size() - offset) {
      throw py::value_error(std::string(what) +
                            ": the lengths run past the buffer at entry " +
                            std::to_string(i));
    }
    std::string_view piece = data.substr(offset, static_cast<size_t>(n));
    (keys ? entries[i].key : entries[i].value) = piece;
    offset += static_cast<size_t>(n);
  }
  if (offset != data.size()) {
    throw py::value_error(std::string(what) + ": the lengths add up to " +
                          std::to_string(offset) + " bytes of " +
                          std::to_string(data.size()));
  }
}

}  // namespace

py::object WriteTablePacked(py::handle path_obj, py::handle keys,
                            py::handle key_lengths, py::handle values,
                            py::handle value_lengths,
                            const sift::Options& options) {
  std::string path = FsPath(path_obj);
  Buffer key_bytes(keys, "keys"), value_bytes(values, "values");
  Lengths key_lens(key_lengths, "key_lengths");
  Lengths value_lens(value_lengths, "value_lengths");
  if (key_lens.size() != value_lens.size()) {
    throw py::value_error("key_lengths and value_lengths differ in length (" +
                          std::to_string(key_lens.size()) + " and " +
                          std::to_string(value_lens.size()) + ")");
  }
  std::vector<Entry> entries(key_lens.size());
  Cut(key_bytes.bytes(), key_lens, "keys", entries, true);
  Cut(value_bytes.bytes(), value_lens, "values", entries, false);
  if (entries.empty()) return py::none();
  BatchResult r;
  {
    ReleaseGil release;
    r = SortAndWrite(entries, options, path);
    if (!r.info.ok()) ::unlink(path.c_str());
  }
  Check(r.info.status());
  return InfoDict(path_obj, r);
}

uint64_t EntriesChecksum(py::handle keys, py::handle values) {
  EntryViews views(keys, values);
  uint64_t sum = 0;
  {
    ReleaseGil release;
    for (const Entry& e : views.entries()) sum += EntryHash(e);
  }
  return sum;
}

}  // namespace sift_python
