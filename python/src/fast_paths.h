#ifndef SIFT_PYTHON_SRC_FAST_PATHS_H_
#define SIFT_PYTHON_SRC_FAST_PATHS_H_

#include <pybind11/pybind11.h>

namespace sift_python {

// Replaces DB.get, DB.put and DB.delete of `db_class` and next() of
// `iterator_class` (the Python types of DBHandle and RangeIterator) with
// CPython functions that skip pybind11's argument dispatch.
void InstallFastPaths(pybind11::handle db_class,
                      pybind11::handle iterator_class);

}  // namespace sift_python

#endif  // SIFT_PYTHON_SRC_FAST_PATHS_H_
