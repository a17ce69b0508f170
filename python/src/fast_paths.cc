// The calls made once per key (DB.get, put and delete, WriteBatch.put and
// delete, and next() on an Iterator) as plain CPython functions: METH_FASTCALL
// methods and the type's tp_iternext slot. pybind11's generic dispatcher costs
// more than the engine's own memtable lookup; these skip it (doc/python.md
// measures it). They behave exactly as the pybind11 definitions they replace in
// module.cc.
#include "fast_paths.h"

#include <cstring>
#include <string>

#include "handles.h"

namespace sift_python {
namespace {

// Converts a C++ exception escaping a fast path into the Python error
// pybind11 would have set.
template <typename F>
PyObject* Guarded(F&& f) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

template <typename T>
T& Self(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  T* p = inst->get_value_and_holder().template value_ptr<T>();
  if (p == nullptr) throw py::type_error("object is not initialized");
  return *p;
}

// Binds positional and keyword arguments to `names` (the first `positional`
// may be given by position; the rest are keyword-only). out[i] is the
// object for names[i], or nullptr when absent. The first `required` names
// must be given.
template <size_t N>
void ParseArgs(const char* fname, const char* const (&names)[N],
               size_t positional, size_t required, PyObject* const* args,
               Py_ssize_t nargs, PyObject* kwnames, PyObject* (&out)[N]) {
  if (static_cast<size_t>(nargs) > positional) {
    throw py::type_error(std::string(fname) + "() takes at most " +
                         std::to_string(positional) + " positional arguments");
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  if (kwnames != nullptr) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t j = 0; j < nkw; ++j) {
      PyObject* kw = PyTuple_GET_ITEM(kwnames, j);
      const char* name = PyUnicode_AsUTF8(kw);
      if (name == nullptr) throw py::error_already_set();
      size_t i = 0;
      while (i < N && std::strcmp(names[i], name) != 0) ++i;
      if (i == N) {
        throw py::type_error(std::string(fname) +
                             "() got an unexpected keyword argument '" + name +
                             "'");
      }
      if (out[i] != nullptr) {
        throw py::type_error(std::string(fname) +
                             "() got multiple values for argument '" + name +
                             "'");
      }
      out[i] = args[nargs + j];
    }
  }
  for (size_t i = 0; i < required; ++i) {
    if (out[i] == nullptr) {
      throw py::type_error(std::string(fname) +
                           "() missing required argument '" + names[i] + "'");
    }
  }
}

bool Truth(PyObject* o, bool absent) {
  if (o == nullptr) return absent;
  int t = PyObject_IsTrue(o);
  if (t < 0) throw py::error_already_set();
  return t != 0;
}

constexpr const char* kGetNames[] = {"key", "default", "verify_checksums",
                                     "fill_cache"};

PyObject* DBGet(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                PyObject* kwnames) {
  return Guarded([&]() -> PyObject* {
    PyObject* a[4] = {};
    ParseArgs("get", kGetNames, 2, 1, args, nargs, kwnames, a);
    DBHandle& h = Self<DBHandle>(self);
    DBHandle::Call call(h);
    BytesArg key(a[0], "key", false);
    sift::ReadOptions options;
    options.verify_checksums = Truth(a[2], false);
    options.fill_cache = Truth(a[3], true);
    std::string value;
    absl::Status s;
    {
      ReleaseGil release(ReleaseGil::kPointRead);
      s = h.db()->Get(options, key.view(), &value);
    }
    if (absl::IsNotFound(s)) {
      PyObject* d = a[1] != nullptr ? a[1] : Py_None;
      Py_INCREF(d);
      return d;
    }
    Check(s);
    return PyBytes_FromStringAndSize(value.data(),
                                     static_cast<Py_ssize_t>(value.size()));
  });
}

constexpr const char* kPutNames[] = {"key", "value", "sync"};

PyObject* DBPut(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                PyObject* kwnames) {
  return Guarded([&]() -> PyObject* {
    PyObject* a[3] = {};
    ParseArgs("put", kPutNames, 2, 2, args, nargs, kwnames, a);
    DBHandle& h = Self<DBHandle>(self);
    DBHandle::Call call(h);
    BytesArg key(a[0], "key", false);
    BytesArg value(a[1], "value", true);
    sift::WriteOptions options;
    options.sync = Truth(a[2], false);
    absl::Status s;
    {
      ReleaseGil release;
      s = h.db()->Put(options, key.view(), value.view());
    }
    Check(s);
    Py_RETURN_NONE;
  });
}

constexpr const char* kDeleteNames[] = {"key", "sync"};

PyObject* DBDelete(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                   PyObject* kwnames) {
  return Guarded([&]() -> PyObject* {
    PyObject* a[2] = {};
    ParseArgs("delete", kDeleteNames, 1, 1, args, nargs, kwnames, a);
    DBHandle& h = Self<DBHandle>(self);
    DBHandle::Call call(h);
    BytesArg key(a[0], "key", false);
    sift::WriteOptions options;
    options.sync = Truth(a[1], false);
    absl::Status s;
    {
      ReleaseGil release;
      s = h.db()->Delete(options, key.view());
    }
    Check(s);
    Py_RETURN_NONE;
  });
}

constexpr const char* kBatchPutNames[] = {"key", "value"};

PyObject* BatchPut(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                   PyObject* kwnames) {
  return Guarded([&]() -> PyObject* {
    PyObject* a[2] = {};
    ParseArgs("put", kBatchPutNames, 2, 2, args, nargs, kwnames, a);
    Self<WriteBatchHandle>(self).Put(a[0], a[1]);
    Py_RETURN_NONE;
  });
}

constexpr const char* kBatchDeleteNames[] = {"key"};

PyObject* BatchDelete(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                      PyObject* kwnames) {
  return Guarded([&]() -> PyObject* {
    PyObject* a[1] = {};
    ParseArgs("delete", kBatchDeleteNames, 1, 1, args, nargs, kwnames, a);
    Self<WriteBatchHandle>(self).Delete(a[0]);
    Py_RETURN_NONE;
  });
}

PyObject* IteratorNext(PyObject* self) {
  return Guarded([&]() -> PyObject* {
    std::optional<py::object> v = Self<RangeIterator>(self).Next();
    if (!v) return nullptr;  // exhausted: NULL with no error set
    return v->release().ptr();
  });
}

PyMethodDef kGetDef = {
    "get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(DBGet)),
    METH_FASTCALL | METH_KEYWORDS,
    "get(key, default=None, *, verify_checksums=False, "
    "fill_cache=True)\n\nThe value of key, or default if "
    "it is absent."};
PyMethodDef kPutDef = {
    "put", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(DBPut)),
    METH_FASTCALL | METH_KEYWORDS,
    "put(key, value, *, sync=False)\n\nSet key to value."};
PyMethodDef kDeleteDef = {
    "delete",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(DBDelete)),
    METH_FASTCALL | METH_KEYWORDS,
    "delete(key, *, sync=False)\n\nRemove key (not an error if absent)."};

PyMethodDef kBatchPutDef = {
    "put",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(BatchPut)),
    METH_FASTCALL | METH_KEYWORDS,
    "put(key, value)\n\nAdd key -> value to the batch."};
PyMethodDef kBatchDeleteDef = {
    "delete",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(BatchDelete)),
    METH_FASTCALL | METH_KEYWORDS,
    "delete(key)\n\nAdd a deletion of key to the batch."};

void AddMethod(py::handle cls, PyMethodDef* def) {
  PyObject* descr =
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def);
  if (descr == nullptr) throw py::error_already_set();
  py::setattr(cls, def->ml_name, py::reinterpret_steal<py::object>(descr));
}

}  // namespace

void InstallFastPaths(py::handle db_class, py::handle iterator_class,
                      py::handle batch_class) {
  AddMethod(db_class, &kGetDef);
  AddMethod(db_class, &kPutDef);
  AddMethod(db_class, &kDeleteDef);
  AddMethod(batch_class, &kBatchPutDef);
  AddMethod(batch_class, &kBatchDeleteDef);
  auto* it_type = reinterpret_cast<PyTypeObject*>(iterator_class.ptr());
  it_type->tp_iternext = IteratorNext;
  PyType_Modified(it_type);
}

}  // namespace sift_python
