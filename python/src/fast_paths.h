#ifndef SIFT_PYTHON_SRC_FAST_PATHS_H_
#define SIFT_PYTHON_SRC_FAST_PATHS_H_

#include <pybind11/pybind11.h>

namespace sift_python {

// Replaces DB.get, DB.put and DB.delete of `db_class`, next() of
// `iterator_class` and WriteBatch.put/delete of `batch_class` (the Python
// types of DBHandle, RangeIterator and WriteBatchHandle) with CPython
// functions that skip pybind11's argument dispatch.
void InstallFastPaths(pybind11::handle db_class,
                      pybind11::handle iterator_class,
                      pybind11::handle batch_class);

}  // namespace sift_python

#endif  // SIFT_PYTHON_SRC_FAST_PATHS_H_
