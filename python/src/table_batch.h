// The table writer's batch call: a whole partition of keys and values in, one
// sorted table file out, with the sorting done in C++ with the GIL released.
// sift.dask builds its tables on Dask workers through it, so that a
// partition costs one Python call instead of one per row.
#ifndef SIFT_PYTHON_SRC_TABLE_BATCH_H_
#define SIFT_PYTHON_SRC_TABLE_BATCH_H_

#include <pybind11/pybind11.h>

#include "sift/options.h"

namespace sift_python {

namespace py = pybind11;

// Writes the entries keys[i] -> values[i] to a new table file at `path`
// (created or truncated), laid out as `options` says (block size, restart
// interval, compression, filter). `keys` and `values` are sequences of equal
// length (lists, tuples, numpy object arrays...); every key must be `bytes`,
// every value `bytes` or an object with the buffer protocol (TypeError naming
// the position otherwise). The entries are sorted bytewise; of several
// entries with one key the one that comes last in the input is kept (as
// repeated puts would leave it). Returns a dict: path, smallest_key,
// largest_key, num_entries, file_size, checksum (EntriesChecksum of the
// entries written) and duplicates (entries dropped as overwritten); or None,
// and no file, when the input is empty. On an error no file is left at
// `path`.
py::object WriteTableBatch(py::handle path, py::handle keys, py::handle values,
                           const sift::Options& options);

// As WriteTableBatch, for entries packed without a Python object per entry:
// `keys` and `values` are bytes-like objects holding the keys (values) back
// to back (or lists or tuples of such objects, read as their concatenation
// without joining them; no entry may span two of them), and `key_lengths` /
// `value_lengths` contiguous buffers of int64 (numpy arrays) with the length of
// each, in input order. ValueError if the lengths do not cut the buffers
// exactly; TypeError for other argument types.
py::object WriteTablePacked(py::handle path, py::handle keys,
                            py::handle key_lengths, py::handle values,
                            py::handle value_lengths,
                            const sift::Options& options);

// Cuts a partition into pieces by key range for a range-partitioning
// shuffle: entry i (same argument rules as WriteTableBatch) goes to piece j
// where bounds[j-1] <= keys[i] < bounds[j] (`bounds`: increasing bytes).
// Returns a list of (j, keys, key_lengths, values, value_lengths) for each
// non-empty piece in increasing j: the piece's keys and values packed back
// to back in key order (entries of one key in input order), the lengths as
// bytes of native int64, ready for WriteTablePacked, which merges input made
// of such sorted runs (up to 256 of them) instead of sorting it. The GIL is
// released while entries are placed and copied.
py::list SplitPacked(py::handle keys, py::handle values, py::handle bounds);

// A bottom-k sample of a partition's distinct keys: the k distinct keys with
// the smallest XXH3-64 hashes (all of them when there are fewer). Returns
// (hashes, keys, sizes): the hashes in increasing order as bytes of native
// uint64, the key of each (bytes), and the size of the first row of each
// key (key + value bytes) as bytes of native int64. Same argument rules as
// WriteTableBatch; the hashing and selection run with the GIL released.
py::tuple SampleKeys(py::handle keys, py::handle values, size_t k);

// An order-independent checksum of distinct entries: the sum, modulo 2^64,
// over the entries of XXH3-64(value, seed = XXH3-64(key)). Sums of disjoint
// sets of entries add up, so the checksums of the tables of a load add up to
// the checksum of the entries a full scan of the loaded database returns.
// Same argument rules as WriteTableBatch; duplicates are not removed.
uint64_t EntriesChecksum(py::handle keys, py::handle values);

}  // namespace sift_python

#endif  // SIFT_PYTHON_SRC_TABLE_BATCH_H_
