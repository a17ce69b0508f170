// The extension module sift._sift: the classes of python/src/handles.h as
// Python types with plyvel's method names and keywords. sift/__init__.py
// re-exports them and adds the pure-Python parts (PrefixedDB).
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fast_paths.h"
#include "handles.h"
#include "sift/prefix_extractor.h"
#include "sift/read_stats.h"
#include "table_batch.h"

namespace sift_python {
namespace {

using py::arg;

// ---- options ----

// Sets *field from `value` unless it is None. A bool field takes the
// value's truth; an int field takes an int only (TypeError naming the keyword
// otherwise, ValueError if it does not fit).
template <typename T>
void SetIfGiven(T* field, const py::object& value, const char* name) {
  if (value.is_none()) return;
  if constexpr (std::is_same_v<T, bool>) {
    *field = py::bool_(value);
  } else {
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
      throw py::type_error(std::string("'") + name + "' must be an int");
    }
    try {
      *field = value.cast<T>();
    } catch (const py::cast_error&) {
      throw py::value_error(std::string("'") + name + "' is out of range");
    }
  }
}

std::string EnumName(const py::object& value, const char* what) {
  if (py::isinstance<py::bytes>(value)) {
    return std::string(value.cast<py::bytes>());
  }
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(std::string("'") + what +
                         "' must be None or a string");
  }
  return value.cast<std::string>();
}

void SetCompression(sift::Options* o, const py::object& compression) {
  if (compression.is_none()) {
    o->compression = sift::Compression::kNone;
    return;
  }
  std::string name = EnumName(compression, "compression");
  if (name != "snappy") {
    throw py::value_error("'compression' must be None or 'snappy'");
  }
  o->compression = sift::Compression::kSnappy;
}

void SetFilter(sift::Options* o, const py::object& bits,
               const py::object& kind) {
  if (!bits.is_none()) {
    if (py::isinstance<py::bool_>(bits) ||
        !(py::isinstance<py::int_>(bits) || py::isinstance<py::float_>(bits))) {
      throw py::type_error("'bloom_filter_bits' must be a number");
    }
    o->filter_bits_per_key = bits.cast<double>();
  }
  if (kind.is_none()) return;
  std::string name = EnumName(kind, "filter_kind");
  if (name == "blocked_bloom") {
    o->filter_kind = sift::FilterKind::kBlockedBloom;
  } else if (name == "standard_bloom") {
    o->filter_kind = sift::FilterKind::kStandardBloom;
  } else if (name == "binary_fuse") {
    o->filter_kind = sift::FilterKind::kBinaryFuse;
  } else {
    throw py::value_error(
        "'filter_kind' must be 'blocked_bloom', 'standard_bloom' or "
        "'binary_fuse'");
  }
}

void SetAllocation(sift::Options* o, const py::object& allocation) {
  if (allocation.is_none()) return;
  std::string name = EnumName(allocation, "filter_allocation");
  if (name == "optimal") {
    o->filter_allocation = sift::FilterAllocation::kOptimal;
  } else if (name == "uniform") {
    o->filter_allocation = sift::FilterAllocation::kUniform;
  } else {
    throw py::value_error("'filter_allocation' must be 'optimal' or 'uniform'");
  }
}

// plyvel's `comparator` and `comparator_name`: accepted only as None.
void RefuseComparator(sift::Options*, const py::object& value, const char*) {
  if (!value.is_none()) {
    throw py::value_error(
        "custom comparators are not supported: sift orders keys bytewise");
  }
}

// ---- shared read paths of DB and Snapshot ----

sift::ReadOptions MakeReadOptions(bool verify_checksums, bool fill_cache,
                                  const sift::Snapshot* snapshot) {
  sift::ReadOptions o;
  o.verify_checksums = verify_checksums;
  o.fill_cache = fill_cache;
  o.snapshot = snapshot;
  return o;
}

py::object Get(DBHandle& db, const sift::ReadOptions& options,
               std::string_view key, const py::object& default_value) {
  std::string value;
  absl::Status s;
  {
    ReleaseGil release(ReleaseGil::kPointRead);
    s = db.db()->Get(options, key, &value);
  }
  if (absl::IsNotFound(s)) return default_value;
  Check(s);
  return py::bytes(value);
}

py::list MultiGet(DBHandle& db, const sift::ReadOptions& options,
                  const py::handle& keys, const std::string* prefix) {
  // Hold the key objects (and prefixed copies) for the call.
  py::list held;
  std::vector<std::string> prefixed;
  std::vector<std::string_view> views;
  for (py::handle k : keys) {
    BytesArg a(k, "key", false);
    held.append(k);
    if (prefix != nullptr) {
      prefixed.push_back(*prefix + std::string(a.view()));
    } else {
      views.push_back(a.view());
    }
  }
  if (prefix != nullptr) views.assign(prefixed.begin(), prefixed.end());
  std::vector<std::string> values;
  std::vector<absl::Status> statuses;
  {
    ReleaseGil release(ReleaseGil::kPointRead);
    statuses = db.db()->MultiGet(options, views, &values);
  }
  py::list out(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    if (absl::IsNotFound(statuses[i])) {
      out[i] = py::none();
    } else {
      Check(statuses[i]);
      out[i] = py::bytes(values[i]);
    }
  }
  return out;
}

py::object MakeRangeIterator(py::object db, py::object snapshot,
                             std::optional<std::string> db_prefix, bool reverse,
                             py::object start, py::object stop,
                             bool include_start, bool include_stop,
                             py::object prefix, bool include_key,
                             bool include_value, bool verify_checksums,
                             bool fill_cache) {
  IteratorArgs a;
  a.reverse = reverse;
  a.start = OptionalBytes(start, "start");
  a.stop = OptionalBytes(stop, "stop");
  a.prefix = OptionalBytes(prefix, "prefix");
  a.include_start = include_start;
  a.include_stop = include_stop;
  a.include_key = include_key;
  a.include_value = include_value;
  a.verify_checksums = verify_checksums;
  a.fill_cache = fill_cache;
  return py::cast(new RangeIterator(std::move(db), std::move(snapshot),
                                    std::move(db_prefix), std::move(a)),
                  py::return_value_policy::take_ownership);
}

#define SIFT_ITERATOR_KWARGS                                                   \
  arg("reverse") = false, arg("start") = py::none(), arg("stop") = py::none(), \
  arg("include_start") = true, arg("include_stop") = false,                    \
  arg("prefix") = py::none(), arg("include_key") = true,                       \
  arg("include_value") = true, arg("verify_checksums") = false,                \
  arg("fill_cache") = true

py::dict ReadStatsDict(const sift::ReadStats& r) {
  py::dict d;
  d["gets"] = r.gets;
  d["memtable_hits"] = r.memtable_hits;
  d["tables_probed"] = r.tables_probed;
  d["filter_negatives"] = r.filter_negatives;
  d["filter_positives"] = r.filter_positives;
  d["filter_false_positives"] = r.filter_false_positives;
  d["block_cache_hits"] = r.block_cache_hits;
  d["block_reads"] = r.block_reads;
  d["bytes_read"] = r.bytes_read;
  d["table_loads"] = r.table_loads;
  d["filter_unit_loads"] = r.filter_unit_loads;
  d["seeks"] = r.seeks;
  d["iterator_block_reads"] = r.iterator_block_reads;
  d["iterator_block_cache_hits"] = r.iterator_block_cache_hits;
  d["prefix_filter_probes"] = r.prefix_filter_probes;
  d["prefix_filter_negatives"] = r.prefix_filter_negatives;
  d["range_filter_probes"] = r.range_filter_probes;
  d["range_filter_negatives"] = r.range_filter_negatives;
  d["range_filter_false_positives"] = r.range_filter_false_positives;
  d["measured_fpr"] = r.MeasuredFpr();
  d["read_amplification"] = r.ReadAmplification();
  return d;
}

void RunReleased(DBHandle& db, absl::Status (*f)(sift::DB*, void*), void* ctx) {
  DBHandle::Call call(db);
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = f(db.db(), ctx);
  }
  Check(s);
}

// A prefix extractor as a Python object (sift.fixed_prefix,
// sift.delimited_prefix): immutable, shared by the options it is given to.
struct PrefixExtractorHandle {
  std::shared_ptr<const sift::PrefixExtractor> rep;
};

void SetPrefixExtractor(sift::Options* o, const py::object& extractor) {
  if (extractor.is_none()) {
    o->prefix_extractor = nullptr;
    return;
  }
  if (!py::isinstance<PrefixExtractorHandle>(extractor)) {
    throw py::type_error(
        "'prefix_extractor' must be None or made by sift.fixed_prefix() or "
        "sift.delimited_prefix()");
  }
  o->prefix_extractor = extractor.cast<const PrefixExtractorHandle&>().rep;
}

void SetRangeFilterBits(sift::Options* o, const py::object& bits) {
  if (bits.is_none()) return;
  if (py::isinstance<py::bool_>(bits) ||
      !(py::isinstance<py::int_>(bits) || py::isinstance<py::float_>(bits))) {
    throw py::type_error("'range_filter_bits_per_key' must be a number");
  }
  o->range_filter_bits_per_key = bits.cast<double>();
}

// How one keyword of DB() or repair_db() sets Options; `name` is the
// keyword, for error messages.
using KeywordSetter = void (*)(sift::Options*, const py::object& value,
                               const char* name);

template <auto Member>
void SetMember(sift::Options* o, const py::object& value, const char* name) {
  SetIfGiven(&(o->*Member), value, name);
}

struct Keyword {
  const char* name;
  KeywordSetter set;
  bool open_only;  // DB() only (not repair_db())
};

// plyvel's keywords and sift's own, in the order doc/python.md gives them.
constexpr Keyword kKeywords[] = {
    {"create_if_missing", &SetMember<&sift::Options::create_if_missing>, true},
    {"error_if_exists", &SetMember<&sift::Options::error_if_exists>, true},
    {"paranoid_checks", &SetMember<&sift::Options::paranoid_checks>, false},
    {"write_buffer_size", &SetMember<&sift::Options::write_buffer_size>, false},
    {"max_open_files", &SetMember<&sift::Options::max_open_files>, false},
    {"lru_cache_size", &SetMember<&sift::Options::block_cache_capacity>, false},
    {"block_size", &SetMember<&sift::Options::block_size>, false},
    {"block_restart_interval",
     &SetMember<&sift::Options::block_restart_interval>, false},
    {"max_file_size", &SetMember<&sift::Options::max_file_size>, false},
    {"compression",
     [](sift::Options* o, const py::object& v, const char*) {
       SetCompression(o, v);
     },
     false},
    {"bloom_filter_bits",
     [](sift::Options* o, const py::object& v, const char*) {
       SetFilter(o, v, py::none());
     },
     false},
    {"comparator", &RefuseComparator, false},
    {"comparator_name", &RefuseComparator, false},
    {"filter_kind",
     [](sift::Options* o, const py::object& v, const char*) {
       SetFilter(o, py::none(), v);
     },
     false},
    {"filter_allocation",
     [](sift::Options* o, const py::object& v, const char*) {
       SetAllocation(o, v);
     },
     false},
    {"allow_mmap_reads", &SetMember<&sift::Options::allow_mmap_reads>, false},
    {"use_direct_reads", &SetMember<&sift::Options::use_direct_reads>, false},
    {"filter_memory_limit", &SetMember<&sift::Options::filter_memory_limit>,
     false},
    {"prefix_extractor",
     [](sift::Options* o, const py::object& v, const char*) {
       SetPrefixExtractor(o, v);
     },
     false},
    {"whole_key_filtering", &SetMember<&sift::Options::whole_key_filtering>,
     false},
    {"range_filter_bits_per_key",
     [](sift::Options* o, const py::object& v, const char*) {
       SetRangeFilterBits(o, v);
     },
     false},
};

// The Options of DB() (`open_keywords`) or repair_db() from their keywords,
// all keyword-only: a keyword given None keeps the engine's default, except
// that compression and bloom_filter_bits default as in plyvel ('snappy',
// 10). An unknown keyword is a TypeError; out-of-range values are left to
// DB::Open, which names them.
sift::Options MakeOptions(const char* function, const py::kwargs& kwargs,
                          bool open_keywords) {
  sift::Options o;
  o.compression = sift::Compression::kSnappy;
  o.filter_bits_per_key = 10;
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::cast<std::string>(key);
    const Keyword* k = std::find_if(
        std::begin(kKeywords), std::end(kKeywords), [&](const Keyword& k) {
          return name == k.name && (open_keywords || !k.open_only);
        });
    if (k == std::end(kKeywords)) {
      throw py::type_error(std::string(function) +
                           "() got an unexpected keyword argument '" + name +
                           "'");
    }
    k->set(&o, py::reinterpret_borrow<py::object>(value), k->name);
  }
  return o;
}

void DefineDB(py::module_& m) {
  py::class_<DBHandle>(m, "DB", py::dynamic_attr())
      .def(py::init([](py::object name, const py::kwargs& kwargs) {
             return new DBHandle(std::move(name),
                                 MakeOptions("DB", kwargs, true));
           }),
           arg("name"))
      .def_property_readonly("name", &DBHandle::name)
      .def_property_readonly("closed", &DBHandle::closed)
      .def("close", &DBHandle::Close)
      .def(
          "__contains__",
          [](DBHandle& self, py::handle key) {
            DBHandle::Call call(self);
            BytesArg k(key, "key", false);
            std::string value;
            absl::Status s;
            {
              ReleaseGil release(ReleaseGil::kPointRead);
              s = self.db()->Get(sift::ReadOptions(), k.view(), &value);
            }
            if (absl::IsNotFound(s)) return false;
            Check(s);
            return true;
          },
          arg("key"))
      .def(
          "multi_get",
          [](DBHandle& self, py::handle keys, bool verify_checksums,
             bool fill_cache) {
            DBHandle::Call call(self);
            return MultiGet(
                self, MakeReadOptions(verify_checksums, fill_cache, nullptr),
                keys, nullptr);
          },
          arg("keys"), py::kw_only(), arg("verify_checksums") = false,
          arg("fill_cache") = true)
      .def(
          "write_batch",
          [](py::object self, bool transaction, bool sync) {
            return new WriteBatchHandle(std::move(self), std::nullopt,
                                        transaction, sync);
          },
          py::kw_only(), arg("transaction") = false, arg("sync") = false)
      .def(
          "iterator",
          [](py::object self, bool reverse, py::object start, py::object stop,
             bool include_start, bool include_stop, py::object prefix,
             bool include_key, bool include_value, bool verify_checksums,
             bool fill_cache) {
            return MakeRangeIterator(
                std::move(self), py::none(), std::nullopt, reverse, start, stop,
                include_start, include_stop, prefix, include_key, include_value,
                verify_checksums, fill_cache);
          },
          py::kw_only(), SIFT_ITERATOR_KWARGS)
      .def("__iter__",
           [](py::object self) {
             return MakeRangeIterator(
                 std::move(self), py::none(), std::nullopt, false, py::none(),
                 py::none(), true, false, py::none(), true, true, false, true);
           })
      .def(
          "raw_iterator",
          [](py::object self, bool verify_checksums, bool fill_cache,
             py::object lower_bound, py::object upper_bound,
             bool prefix_same_as_start) {
            return new RawIterator(std::move(self), py::none(),
                                   verify_checksums, fill_cache,
                                   OptionalBytes(lower_bound, "lower_bound"),
                                   OptionalBytes(upper_bound, "upper_bound"),
                                   prefix_same_as_start);
          },
          py::kw_only(), arg("verify_checksums") = false,
          arg("fill_cache") = true, arg("lower_bound") = py::none(),
          arg("upper_bound") = py::none(), arg("prefix_same_as_start") = false)
      .def("snapshot",
           [](py::object self) {
             return new SnapshotHandle(std::move(self), std::nullopt);
           })
      .def(
          "get_property",
          [](DBHandle& self, py::handle name) -> py::object {
            DBHandle::Call call(self);
            std::string n;
            if (py::isinstance<py::str>(name)) {
              n = name.cast<std::string>();
            } else {
              n = std::string(BytesArg(name, "name", false).view());
            }
            std::optional<std::string> v;
            {
              py::gil_scoped_release release;
              v = self.db()->GetProperty(n);
            }
            if (!v) return py::none();
            return py::bytes(*v);
          },
          arg("name"))
      .def(
          "compact_range",
          [](DBHandle& self, py::object start, py::object stop) {
            std::optional<std::string> b = OptionalBytes(start, "start");
            std::optional<std::string> e = OptionalBytes(stop, "stop");
            std::pair<const std::string*, const std::string*> range(
                b ? &*b : nullptr, e ? &*e : nullptr);
            RunReleased(
                self,
                [](sift::DB* db, void* ctx) {
                  auto* r = static_cast<
                      std::pair<const std::string*, const std::string*>*>(ctx);
                  return db->CompactRange(r->first, r->second);
                },
                &range);
          },
          py::kw_only(), arg("start") = py::none(), arg("stop") = py::none())
      .def("flush",
           [](DBHandle& self) {
             RunReleased(
                 self, [](sift::DB* db, void*) { return db->Flush(); },
                 nullptr);
           })
      .def(
          "checkpoint",
          [](DBHandle& self, py::handle dir) {
            std::string d = FsPath(dir);
            RunReleased(
                self,
                [](sift::DB* db, void* ctx) {
                  return db->CreateCheckpoint(*static_cast<std::string*>(ctx));
                },
                &d);
          },
          arg("dir"))
      .def(
          "ingest",
          [](DBHandle& self, py::handle files, bool move_files,
             bool verify_checksums) {
            std::pair<std::vector<std::string>, sift::IngestOptions> call;
            if (py::isinstance<py::str>(files) ||
                py::isinstance<py::bytes>(files)) {
              call.first.push_back(FsPath(files));
            } else {
              for (py::handle f : files) call.first.push_back(FsPath(f));
            }
            call.second.move_files = move_files;
            call.second.verify_checksums = verify_checksums;
            RunReleased(
                self,
                [](sift::DB* db, void* ctx) {
                  auto* c = static_cast<decltype(call)*>(ctx);
                  return db->IngestExternalFiles(c->first, c->second);
                },
                &call);
          },
          arg("files"), py::kw_only(), arg("move_files") = false,
          arg("verify_checksums") = true)
      .def(
          "approximate_sizes",
          [](DBHandle& self, py::args ranges) {
            DBHandle::Call call(self);
            py::list held;  // keeps the range objects alive for the call
            std::vector<sift::KeyRange> r;
            for (py::handle range : ranges) {
              if (!py::isinstance<py::sequence>(range) || py::len(range) != 2) {
                throw py::type_error(
                    "each range must be a (start, stop) pair of bytes");
              }
              py::sequence pair = py::reinterpret_borrow<py::sequence>(range);
              held.append(pair);
              py::object start = pair[0], stop = pair[1];
              held.append(start);
              held.append(stop);
              r.push_back({BytesArg(start, "start", false).view(),
                           BytesArg(stop, "stop", false).view()});
            }
            std::vector<uint64_t> sizes;
            {
              ReleaseGil release;
              sizes = self.db()->GetApproximateSizes(r);
            }
            return sizes;
          })
      .def(
          "approximate_size",
          [](DBHandle& self, py::handle start, py::handle stop) {
            DBHandle::Call call(self);
            sift::KeyRange r{BytesArg(start, "start", false).view(),
                             BytesArg(stop, "stop", false).view()};
            std::vector<uint64_t> sizes;
            {
              ReleaseGil release;
              sizes = self.db()->GetApproximateSizes({&r, 1});
            }
            return sizes[0];
          },
          arg("start"), arg("stop"))
      .def("read_stats",
           [](DBHandle& self) {
             DBHandle::Call call(self);
             return ReadStatsDict(self.db()->GetReadStats());
           })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](DBHandle& self, py::args) { self.Close(); });
}

void DefineSnapshot(py::module_& m) {
  py::class_<SnapshotHandle>(m, "Snapshot")
      .def(
          "get",
          [](SnapshotHandle& self, py::handle key, py::object default_value,
             bool verify_checksums, bool fill_cache) {
            SnapshotHandle::Use use(self);
            BytesArg k(key, "key", false);
            sift::ReadOptions o =
                MakeReadOptions(verify_checksums, fill_cache, self.snapshot());
            if (self.prefix()) {
              return Get(self.db(), o, *self.prefix() + std::string(k.view()),
                         default_value);
            }
            return Get(self.db(), o, k.view(), default_value);
          },
          arg("key"), arg("default") = py::none(), py::kw_only(),
          arg("verify_checksums") = false, arg("fill_cache") = true)
      .def(
          "multi_get",
          [](SnapshotHandle& self, py::handle keys, bool verify_checksums,
             bool fill_cache) {
            SnapshotHandle::Use use(self);
            return MultiGet(
                self.db(),
                MakeReadOptions(verify_checksums, fill_cache, self.snapshot()),
                keys, self.prefix() ? &*self.prefix() : nullptr);
          },
          arg("keys"), py::kw_only(), arg("verify_checksums") = false,
          arg("fill_cache") = true)
      .def(
          "iterator",
          [](py::object self, bool reverse, py::object start, py::object stop,
             bool include_start, bool include_stop, py::object prefix,
             bool include_key, bool include_value, bool verify_checksums,
             bool fill_cache) {
            SnapshotHandle& s = self.cast<SnapshotHandle&>();
            s.CheckOpen();
            return MakeRangeIterator(
                s.db_object(), std::move(self), s.prefix(), reverse, start,
                stop, include_start, include_stop, prefix, include_key,
                include_value, verify_checksums, fill_cache);
          },
          py::kw_only(), SIFT_ITERATOR_KWARGS)
      .def("__iter__",
           [](py::object self) {
             SnapshotHandle& s = self.cast<SnapshotHandle&>();
             s.CheckOpen();
             return MakeRangeIterator(
                 s.db_object(), std::move(self), s.prefix(), false, py::none(),
                 py::none(), true, false, py::none(), true, true, false, true);
           })
      .def(
          "raw_iterator",
          [](py::object self, bool verify_checksums, bool fill_cache,
             py::object lower_bound, py::object upper_bound,
             bool prefix_same_as_start) {
            SnapshotHandle& s = self.cast<SnapshotHandle&>();
            s.CheckOpen();
            return new RawIterator(s.db_object(), std::move(self),
                                   verify_checksums, fill_cache,
                                   OptionalBytes(lower_bound, "lower_bound"),
                                   OptionalBytes(upper_bound, "upper_bound"),
                                   prefix_same_as_start);
          },
          py::kw_only(), arg("verify_checksums") = false,
          arg("fill_cache") = true, arg("lower_bound") = py::none(),
          arg("upper_bound") = py::none(), arg("prefix_same_as_start") = false)
      .def("close", &SnapshotHandle::Close)
      .def("release", &SnapshotHandle::Close)
      .def_property_readonly("closed",
                             [](SnapshotHandle& self) {
                               return self.snapshot() == nullptr ||
                                      self.db().closed();
                             })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](SnapshotHandle& self, py::args) { self.Close(); });
}

void DefineIterators(py::module_& m) {
  py::class_<RangeIterator>(m, "Iterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__",
           [](RangeIterator& self) {
             std::optional<py::object> v = self.Next();
             if (!v) throw py::stop_iteration();
             return *std::move(v);
           })
      .def("prev",
           [](RangeIterator& self) {
             std::optional<py::object> v = self.Prev();
             if (!v) throw py::stop_iteration();
             return *std::move(v);
           })
      .def("seek", &RangeIterator::Seek, arg("target"))
      .def("seek_to_start", &RangeIterator::SeekToStart)
      .def("seek_to_stop", &RangeIterator::SeekToStop)
      .def("close", &RangeIterator::Close)
      .def_property_readonly("closed", &RangeIterator::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](RangeIterator& self, py::args) { self.Close(); });

  py::class_<RawIterator>(m, "RawIterator")
      .def("valid", &RawIterator::Valid)
      .def("seek_to_first", &RawIterator::SeekToFirst)
      .def("seek_to_last", &RawIterator::SeekToLast)
      .def("seek", &RawIterator::Seek, arg("target"))
      .def("next", &RawIterator::Next)
      .def("prev", &RawIterator::Prev)
      .def("key", &RawIterator::Key)
      .def("value", &RawIterator::Value)
      .def("item", &RawIterator::Item)
      .def("close", &RawIterator::Close)
      .def_property_readonly("closed", &RawIterator::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](RawIterator& self, py::args) { self.Close(); });
}

// The table layout keywords of TableWriter() and write_table().
sift::Options TableOptions(const py::object& block_size,
                           const py::object& block_restart_interval,
                           const py::object& compression,
                           const py::object& bloom_filter_bits,
                           const py::object& filter_kind) {
  sift::Options o;
  SetIfGiven(&o.block_size, block_size, "block_size");
  SetIfGiven(&o.block_restart_interval, block_restart_interval,
             "block_restart_interval");
  SetCompression(&o, compression);
  SetFilter(&o, bloom_filter_bits, filter_kind);
  return o;
}

#define SIFT_TABLE_KWARGS                                                     \
  arg("block_size") = py::none(), arg("block_restart_interval") = py::none(), \
  arg("compression") = "snappy", arg("bloom_filter_bits") = 10,               \
  arg("filter_kind") = py::none()

void DefineWriters(py::module_& m) {
  py::class_<WriteBatchHandle>(m, "WriteBatch")
      .def("clear", &WriteBatchHandle::Clear)
      .def("write", &WriteBatchHandle::Write)
      .def("append", &WriteBatchHandle::Append, arg("source"))
      .def("approximate_size", &WriteBatchHandle::ApproximateSize)
      .def("__len__", &WriteBatchHandle::Count)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](WriteBatchHandle& self, py::handle exc_type, py::handle,
              py::handle) { self.Exit(!exc_type.is_none()); });

  py::class_<TableWriterHandle>(m, "TableWriter")
      .def(
          py::init([](py::object path, py::object block_size,
                      py::object block_restart_interval, py::object compression,
                      py::object bloom_filter_bits, py::object filter_kind) {
            return new TableWriterHandle(
                std::move(path),
                TableOptions(block_size, block_restart_interval, compression,
                             bloom_filter_bits, filter_kind));
          }),
          arg("path"), py::kw_only(), SIFT_TABLE_KWARGS)
      .def("put", &TableWriterHandle::Put, arg("key"), arg("value"))
      .def("delete", &TableWriterHandle::Delete, arg("key"))
      .def("finish", &TableWriterHandle::Finish)
      .def_property_readonly("path", &TableWriterHandle::path)
      .def_property_readonly("finished", &TableWriterHandle::finished)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](TableWriterHandle& self, py::handle exc_type,
                          py::handle, py::handle) {
        // Finish on a clean exit; on an exception the file is left
        // incomplete and the exception propagates.
        if (exc_type.is_none() && !self.finished()) {
          self.Finish();
        } else {
          self.Abandon();
        }
      });
  // A partition at once: python/src/table_batch.cc.
  m.def(
      "write_table",
      [](py::object path, py::handle keys, py::handle values,
         py::object block_size, py::object block_restart_interval,
         py::object compression, py::object bloom_filter_bits,
         py::object filter_kind) {
        return WriteTableBatch(
            path, keys, values,
            TableOptions(block_size, block_restart_interval, compression,
                         bloom_filter_bits, filter_kind));
      },
      arg("path"), arg("keys"), arg("values"), py::kw_only(),
      SIFT_TABLE_KWARGS);
  m.def(
      "write_table_packed",
      [](py::object path, py::handle keys, py::handle key_lengths,
         py::handle values, py::handle value_lengths, py::object block_size,
         py::object block_restart_interval, py::object compression,
         py::object bloom_filter_bits, py::object filter_kind) {
        return WriteTablePacked(
            path, keys, key_lengths, values, value_lengths,
            TableOptions(block_size, block_restart_interval, compression,
                         bloom_filter_bits, filter_kind));
      },
      arg("path"), arg("keys"), arg("key_lengths"), arg("values"),
      arg("value_lengths"), py::kw_only(), SIFT_TABLE_KWARGS);
  m.def("split_packed", &SplitPacked, arg("keys"), arg("values"),
        arg("bounds"));
  m.def("sample_keys", &SampleKeys, arg("keys"), arg("values"), arg("k"));
  m.def("entries_checksum", &EntriesChecksum, arg("keys"), arg("values"));
}

void DefinePrefixExtractors(py::module_& m) {
  py::class_<PrefixExtractorHandle>(m, "PrefixExtractor")
      .def_property_readonly("name",
                             [](const PrefixExtractorHandle& self) {
                               return std::string(self.rep->Name());
                             })
      .def("__repr__", [](const PrefixExtractorHandle& self) {
        return "<sift.PrefixExtractor " + std::string(self.rep->Name()) + ">";
      });
  m.def(
      "fixed_prefix",
      [](py::object length) {
        if (!py::isinstance<py::int_>(length) ||
            py::isinstance<py::bool_>(length)) {
          throw py::type_error("'length' must be an int");
        }
        const long long n = length.cast<long long>();
        if (n <= 0) throw py::value_error("'length' must be at least 1");
        return PrefixExtractorHandle{
            sift::NewFixedPrefixExtractor(static_cast<size_t>(n))};
      },
      arg("length"));
  m.def(
      "delimited_prefix",
      [](py::object delimiter) {
        if (!py::isinstance<py::bytes>(delimiter)) {
          throw py::type_error("'delimiter' must be bytes");
        }
        const std::string d = delimiter.cast<std::string>();
        if (d.size() != 1) {
          throw py::value_error("'delimiter' must be one byte");
        }
        return PrefixExtractorHandle{sift::NewDelimitedPrefixExtractor(d[0])};
      },
      arg("delimiter"));
}

void DefineFunctions(py::module_& m) {
  m.def(
      "destroy_db",
      [](py::handle name) {
        std::string path = FsPath(name);
        absl::Status s;
        {
          py::gil_scoped_release release;
          s = sift::DestroyDB(path, sift::Options());
        }
        Check(s);
      },
      arg("name"));
  m.def(
      "repair_db",
      [](py::handle name, const py::kwargs& kwargs) {
        sift::Options o = MakeOptions("repair_db", kwargs, false);
        std::string path = FsPath(name);
        absl::Status s;
        {
          ReleaseGil release;
          s = sift::RepairDB(path, o);
        }
        Check(s);
      },
      arg("name"));
  // A measurement hook for bench/python/bench.py: DB::Get of every key in
  // `keys` from C++, timed without Python in the loop, giving the baseline
  // that the Python overhead per get is measured against. Returns
  // (nanoseconds, keys found).
  m.def(
      "_cpp_get_loop",
      [](DBHandle& db, py::iterable keys) {
        DBHandle::Call call(db);
        std::vector<std::string> k;
        for (py::handle h : keys) {
          k.emplace_back(BytesArg(h, "key", false).view());
        }
        uint64_t found = 0;
        std::chrono::steady_clock::duration elapsed;
        {
          ReleaseGil release;
          sift::ReadOptions options;
          options.verify_checksums = false;
          std::string value;
          auto start = std::chrono::steady_clock::now();
          for (const std::string& key : k) {
            if (db.db()->Get(options, key, &value).ok()) ++found;
          }
          elapsed = std::chrono::steady_clock::now() - start;
        }
        return py::make_tuple(
            std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed)
                .count(),
            found);
      },
      arg("db"), arg("keys"));
  // The pieces of PrefixedDB (sift/__init__.py).
  m.def(
      "_prefixed_iterator",
      [](py::object db, std::string db_prefix, bool reverse, py::object start,
         py::object stop, bool include_start, bool include_stop,
         py::object prefix, bool include_key, bool include_value,
         bool verify_checksums, bool fill_cache) {
        return MakeRangeIterator(
            std::move(db), py::none(), std::move(db_prefix), reverse, start,
            stop, include_start, include_stop, prefix, include_key,
            include_value, verify_checksums, fill_cache);
      },
      arg("db"), arg("db_prefix"), py::kw_only(), SIFT_ITERATOR_KWARGS);
  m.def(
      "_prefixed_snapshot",
      [](py::object db, std::string prefix) {
        return new SnapshotHandle(std::move(db), std::move(prefix));
      },
      arg("db"), arg("prefix"));
  m.def(
      "_prefixed_write_batch",
      [](py::object db, std::string prefix, bool transaction, bool sync) {
        return new WriteBatchHandle(std::move(db), std::move(prefix),
                                    transaction, sync);
      },
      arg("db"), arg("prefix"), py::kw_only(), arg("transaction") = false,
      arg("sync") = false);
  m.def(
      "_prefixed_multi_get",
      [](DBHandle& db, std::string prefix, py::handle keys,
         bool verify_checksums, bool fill_cache) {
        DBHandle::Call call(db);
        return MultiGet(db,
                        MakeReadOptions(verify_checksums, fill_cache, nullptr),
                        keys, &prefix);
      },
      arg("db"), arg("prefix"), arg("keys"), py::kw_only(),
      arg("verify_checksums") = false, arg("fill_cache") = true);
}

}  // namespace
}  // namespace sift_python

PYBIND11_MODULE(_sift, m) {
  m.doc() = "sift's engine bindings; import the `sift` package instead.";
  sift_python::RegisterExceptions(m);
  sift_python::DefineDB(m);
  sift_python::DefineSnapshot(m);
  sift_python::DefineIterators(m);
  sift_python::DefineWriters(m);
  sift_python::DefinePrefixExtractors(m);
  sift_python::DefineFunctions(m);
  // DB.get/put/delete, next(Iterator), WriteBatch.put/delete
  // (python/src/fast_paths.cc).
  sift_python::InstallFastPaths(m.attr("DB"), m.attr("Iterator"),
                                m.attr("WriteBatch"));
}
