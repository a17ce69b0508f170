#include "table_batch.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
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
      throw py::value_error(
          "keys and values differ in length (" + std::to_string(n) + " keys, " +
          std::to_string(PySequence_Fast_GET_SIZE(values_.ptr())) + " values)");
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

// The first 8 bytes of a key as a big-endian integer (zero-padded): prefixes
// order as the keys do, up to ties.
uint64_t KeyPrefix(std::string_view key) {
  uint64_t p = 0;
  const size_t n = std::min<size_t>(key.size(), 8);
  for (size_t i = 0; i < 8; ++i) {
    p = (p << 8) | (i < n ? static_cast<unsigned char>(key[i]) : 0u);
  }
  return p;
}

struct SortItem {
  uint64_t prefix;
  size_t index;
};

// Up to this many runs already in key order are merged instead of sorted.
constexpr size_t kMaxMergedRuns = 256;

// What the GIL-free part of WriteTableBatch produces.
struct BatchResult {
  absl::StatusOr<sift::ExternalTableInfo> info;
  uint64_t checksum = 0;
  uint64_t duplicates = 0;
};

// The positions of `entries` in key order; entries of one key stay in input
// order (a stable order), so the last of each run of equal keys is the one
// that came last in the input.
std::vector<SortItem> SortedOrder(const std::vector<Entry>& entries) {
  std::vector<SortItem> order(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    order[i] = SortItem{KeyPrefix(entries[i].key), i};
  }
  // Input made of a few runs already in key order (the pieces split_packed
  // makes) is merged, reading each run front to back, rather than sorted.
  std::vector<size_t> run_starts{0};
  for (size_t i = 1; i < entries.size() && run_starts.size() <= kMaxMergedRuns;
       ++i) {
    if (entries[i].key < entries[i - 1].key) run_starts.push_back(i);
  }
  if (run_starts.size() <= kMaxMergedRuns) {
    if (run_starts.size() == 1) return order;
    run_starts.push_back(entries.size());
    // A heap of the runs' heads, smallest key first, ties to the earlier run.
    std::vector<std::pair<size_t, size_t>> heads;  // (position, run)
    auto later = [&entries, &order](const std::pair<size_t, size_t>& a,
                                    const std::pair<size_t, size_t>& b) {
      const SortItem& x = order[a.first];
      const SortItem& y = order[b.first];
      if (x.prefix != y.prefix) return x.prefix > y.prefix;
      const int c = entries[a.first].key.compare(entries[b.first].key);
      return c != 0 ? c > 0 : a.second > b.second;
    };
    for (size_t run = 0; run + 1 < run_starts.size(); ++run) {
      heads.emplace_back(run_starts[run], run);
    }
    std::make_heap(heads.begin(), heads.end(), later);
    std::vector<SortItem> merged;
    merged.reserve(entries.size());
    while (!heads.empty()) {
      std::pop_heap(heads.begin(), heads.end(), later);
      auto& [pos, run] = heads.back();
      merged.push_back(order[pos]);
      if (++pos < run_starts[run + 1]) {
        std::push_heap(heads.begin(), heads.end(), later);
      } else {
        heads.pop_back();
      }
    }
    return merged;
  }
  // Sorted as (first 8 key bytes as a big-endian integer, position) pairs:
  // most comparisons are of integers held in the array itself, not of keys
  // reached through pointers; equal prefixes fall back to the whole keys,
  // then to the position.
  std::sort(order.begin(), order.end(),
            [&entries](const SortItem& a, const SortItem& b) {
              if (a.prefix != b.prefix) return a.prefix < b.prefix;
              const int c = entries[a.index].key.compare(entries[b.index].key);
              return c != 0 ? c < 0 : a.index < b.index;
            });
  return order;
}

BatchResult SortAndWrite(std::vector<Entry>& entries,
                         const sift::Options& options,
                         const std::string& path) {
  BatchResult r;
  const std::vector<SortItem> order = SortedOrder(entries);
  absl::StatusOr<std::unique_ptr<sift::TableFileWriter>> writer =
      sift::TableFileWriter::Open(options, path);
  if (!writer.ok()) {
    r.info = writer.status();
    return r;
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const Entry& e = entries[order[i].index];
    if (i + 1 < order.size() && entries[order[i + 1].index].key == e.key) {
      ++r.duplicates;  // overwritten by a later entry of the input
      continue;
    }
    absl::Status s = (*writer)->Put(e.key, e.value);
    if (!s.ok()) {
      r.info = s;
      return r;
    }
    r.checksum += EntryHash(e);
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
    if (PyObject_GetBuffer(obj.ptr(), &view_,
                           PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      throw py::type_error(std::string(what) +
                           " must be a contiguous buffer of int64, not " +
                           Py_TYPE(obj.ptr())->tp_name);
    }
    std::string_view format = view_.format ? view_.format : "B";
    if (view_.itemsize != 8 ||
        (format != "q" && format != "l" && format != "<q" && format != "=q")) {
      PyBuffer_Release(&view_);
      throw py::type_error(std::string(what) +
                           " must hold int64, not format '" +
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

// One bytes-like object, or a list or tuple of them read as their
// concatenation (no entry may span two of them), held for the call.
class Buffers {
 public:
  Buffers(py::handle obj, const char* what) {
    if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
      for (py::handle item : obj) held_.emplace_back(item, what);
    } else {
      held_.emplace_back(obj, what);
    }
    for (const Buffer& b : held_) parts_.push_back(b.bytes());
  }
  const std::vector<std::string_view>& parts() const { return parts_; }

 private:
  std::deque<Buffer> held_;  // a deque: Buffer cannot move
  std::vector<std::string_view> parts_;
};

// Cuts `data` into size() pieces of the given lengths (ValueError unless
// they are non-negative, each lies within one of the buffers, and they add up
// to the buffers' size exactly).
void Cut(const Buffers& data, const Lengths& lengths, const char* what,
         std::vector<Entry>& entries, bool keys) {
  const std::vector<std::string_view>& parts = data.parts();
  size_t b = 0, offset = 0, total = 0;
  auto skip_done = [&] {
    while (b < parts.size() && offset == parts[b].size()) {
      ++b;
      offset = 0;
    }
  };
  for (size_t i = 0; i < lengths.size(); ++i) {
    const int64_t n = lengths[i];
    skip_done();
    if (n < 0 ||
        (n > 0 && (b == parts.size() ||
                   static_cast<uint64_t>(n) > parts[b].size() - offset))) {
      throw py::value_error(std::string(what) +
                            ": the lengths run past the buffer at entry " +
                            std::to_string(i));
    }
    std::string_view piece =
        n == 0 ? std::string_view()
               : parts[b].substr(offset, static_cast<size_t>(n));
    (keys ? entries[i].key : entries[i].value) = piece;
    offset += static_cast<size_t>(n);
    total += static_cast<size_t>(n);
  }
  size_t size = 0;
  for (std::string_view p : parts) size += p.size();
  if (total != size) {
    throw py::value_error(std::string(what) + ": the lengths add up to " +
                          std::to_string(total) + " bytes of " +
                          std::to_string(size));
  }
}

}  // namespace

py::object WriteTablePacked(py::handle path_obj, py::handle keys,
                            py::handle key_lengths, py::handle values,
                            py::handle value_lengths,
                            const sift::Options& options) {
  std::string path = FsPath(path_obj);
  Buffers key_bytes(keys, "keys"), value_bytes(values, "values");
  Lengths key_lens(key_lengths, "key_lengths");
  Lengths value_lens(value_lengths, "value_lengths");
  if (key_lens.size() != value_lens.size()) {
    throw py::value_error("key_lengths and value_lengths differ in length (" +
                          std::to_string(key_lens.size()) + " and " +
                          std::to_string(value_lens.size()) + ")");
  }
  std::vector<Entry> entries(key_lens.size());
  Cut(key_bytes, key_lens, "keys", entries, true);
  Cut(value_bytes, value_lens, "values", entries, false);
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

py::list SplitPacked(py::handle keys, py::handle values, py::handle bounds) {
  EntryViews views(keys, values);
  std::vector<Entry>& entries = views.entries();
  // The bounds, as views into the bytes objects of a fast sequence.
  PyObject* fast = PySequence_Fast(bounds.ptr(), "bounds must be a sequence");
  if (fast == nullptr) throw py::error_already_set();
  py::object bounds_seq = py::reinterpret_steal<py::object>(fast);
  const Py_ssize_t nb = PySequence_Fast_GET_SIZE(fast);
  std::vector<std::string_view> cuts(static_cast<size_t>(nb));
  for (Py_ssize_t i = 0; i < nb; ++i) {
    PyObject* b = PySequence_Fast_GET_ITEM(fast, i);
    if (!PyBytes_Check(b)) {
      throw py::type_error("bounds must be bytes, not " +
                           std::string(Py_TYPE(b)->tp_name));
    }
    cuts[static_cast<size_t>(i)] = std::string_view(
        PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b)));
    if (i > 0 &&
        !(cuts[static_cast<size_t>(i - 1)] < cuts[static_cast<size_t>(i)])) {
      throw py::value_error("bounds must strictly increase");
    }
  }
  const size_t nparts = cuts.size() + 1;
  std::vector<uint32_t> part(entries.size());
  std::vector<size_t> count(nparts, 0), key_bytes(nparts, 0),
      value_bytes(nparts, 0);
  {
    ReleaseGil release;
    for (size_t i = 0; i < entries.size(); ++i) {
      // Partition j holds bounds[j-1] <= key < bounds[j].
      const size_t j = static_cast<size_t>(
          std::upper_bound(cuts.begin(), cuts.end(), entries[i].key) -
          cuts.begin());
      part[i] = static_cast<uint32_t>(j);
      ++count[j];
      key_bytes[j] += entries[i].key.size();
      value_bytes[j] += entries[i].value.size();
    }
  }
  // One set of new bytes objects per non-empty piece, filled without the GIL
  // (nothing else holds them yet).
  struct Piece {
    py::bytes keys, key_lengths, values, value_lengths;
    char *k, *v;
    int64_t *kl, *vl;
  };
  auto fresh = [](size_t n, char** data) {
    PyObject* b =
        PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
    if (b == nullptr) throw py::error_already_set();
    *data = PyBytes_AS_STRING(b);
    return py::reinterpret_steal<py::bytes>(b);
  };
  std::vector<Piece> pieces(nparts);
  for (size_t j = 0; j < nparts; ++j) {
    if (count[j] == 0) continue;
    Piece& p = pieces[j];
    char* kl;
    char* vl;
    p.keys = fresh(key_bytes[j], &p.k);
    p.values = fresh(value_bytes[j], &p.v);
    p.key_lengths = fresh(count[j] * sizeof(int64_t), &kl);
    p.value_lengths = fresh(count[j] * sizeof(int64_t), &vl);
    p.kl = reinterpret_cast<int64_t*>(kl);
    p.vl = reinterpret_cast<int64_t*>(vl);
  }
  {
    ReleaseGil release;
    // Each piece's entries sorted by key (a stable order: by key prefix,
    // then key, then position), so the table writer merges the pieces it
    // receives instead of sorting entries spread over memory. The sort keys
    // are the prefixes, gathered in one pass over the partition.
    std::vector<std::vector<SortItem>> piece_order(nparts);
    for (size_t j = 0; j < nparts; ++j) piece_order[j].reserve(count[j]);
    for (size_t i = 0; i < entries.size(); ++i) {
      piece_order[part[i]].push_back(SortItem{KeyPrefix(entries[i].key), i});
    }
    for (size_t j = 0; j < nparts; ++j) {
      if (count[j] == 0) continue;
      std::vector<SortItem>& order = piece_order[j];
      std::sort(order.begin(), order.end(),
                [&entries](const SortItem& x, const SortItem& y) {
                  if (x.prefix != y.prefix) return x.prefix < y.prefix;
                  const int c =
                      entries[x.index].key.compare(entries[y.index].key);
                  return c != 0 ? c < 0 : x.index < y.index;
                });
      Piece& p = pieces[j];
      for (const SortItem& item : order) {
        const Entry& e = entries[item.index];
        std::memcpy(p.k, e.key.data(), e.key.size());
        p.k += e.key.size();
        std::memcpy(p.v, e.value.data(), e.value.size());
        p.v += e.value.size();
        const int64_t kn = static_cast<int64_t>(e.key.size());
        const int64_t vn = static_cast<int64_t>(e.value.size());
        std::memcpy(p.kl++, &kn, sizeof kn);
        std::memcpy(p.vl++, &vn, sizeof vn);
      }
      std::vector<SortItem>().swap(order);
    }
  }

  py::list out;
  for (size_t j = 0; j < nparts; ++j) {
    if (count[j] == 0) continue;
    Piece& p = pieces[j];
    out.append(
        py::make_tuple(j, p.keys, p.key_lengths, p.values, p.value_lengths));
  }
  return out;
}

py::tuple SampleKeys(py::handle keys, py::handle values, size_t k) {
  EntryViews views(keys, values);
  const std::vector<Entry>& entries = views.entries();
  std::vector<std::pair<uint64_t, size_t>> picked;  // (hash, first position)
  {
    ReleaseGil release;
    std::vector<std::pair<uint64_t, size_t>> h(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      h[i] = {XXH3_64bits(entries[i].key.data(), entries[i].key.size()), i};
    }
    // The k smallest (hash, position) pairs first; when repeated keys leave
    // fewer than k distinct hashes among them, all of them.
    if (h.size() > k && k > 0) {
      std::nth_element(h.begin(),
                       h.begin() + static_cast<std::ptrdiff_t>(k - 1), h.end());
      std::sort(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(k));
      const auto distinct = static_cast<size_t>(
          std::unique(
              h.begin(), h.begin() + static_cast<std::ptrdiff_t>(k),
              [](const auto& a, const auto& b) { return a.first == b.first; }) -
          h.begin());
      if (distinct < k) std::sort(h.begin(), h.end());
    } else {
      std::sort(h.begin(), h.end());
    }
    for (const auto& [hash, pos] : h) {
      if (picked.size() == k) break;
      if (!picked.empty() && picked.back().first == hash) continue;
      picked.emplace_back(hash, pos);
    }
  }
  PyObject* hb = PyBytes_FromStringAndSize(
      nullptr, static_cast<Py_ssize_t>(picked.size() * sizeof(uint64_t)));
  PyObject* sb = PyBytes_FromStringAndSize(
      nullptr, static_cast<Py_ssize_t>(picked.size() * sizeof(int64_t)));
  py::bytes hashes = py::reinterpret_steal<py::bytes>(hb);
  py::bytes sizes = py::reinterpret_steal<py::bytes>(sb);
  if (hb == nullptr || sb == nullptr) throw py::error_already_set();
  py::list sampled(picked.size());
  char* hp = PyBytes_AS_STRING(hb);
  char* sp = PyBytes_AS_STRING(sb);
  for (size_t i = 0; i < picked.size(); ++i) {
    const Entry& e = entries[picked[i].second];
    const int64_t size = static_cast<int64_t>(e.key.size() + e.value.size());
    std::memcpy(hp + i * sizeof(uint64_t), &picked[i].first, sizeof(uint64_t));
    std::memcpy(sp + i * sizeof(int64_t), &size, sizeof size);
    sampled[i] = py::bytes(e.key.data(), e.key.size());
  }
  return py::make_tuple(hashes, sampled, sizes);
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
