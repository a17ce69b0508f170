#ifndef SIFT_DB_EXTERNAL_TABLE_H_
#define SIFT_DB_EXTERNAL_TABLE_H_

// File-level steps of DB::IngestExternalFiles (db/ingest.h): checking that a
// file is a table TableFileWriter wrote, copying it, and rewriting it with
// another filter size. None of them touches the database's state.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/dbformat.h"
#include "sift/env.h"
#include "table/table_options.h"

namespace sift {

// What ingestion needs to know of a table written by TableFileWriter.
struct ExternalTableFacts {
  uint64_t file_size = 0;
  uint64_t num_entries = 0;
  std::string smallest_user_key;
  std::string largest_user_key;
  ValueType smallest_type = kTypeValue;
  ValueType largest_type = kTypeValue;
  // From the properties block: the filter the table was written with
  // (filter_kind 0: none).
  uint8_t filter_kind = 0;
  double filter_bits_per_key = 0.0;
};

// Open table `fname` with `options` (a database's TableOptions: internal
// keys) and check that it is an ingestible table: it opens (footer, index,
// filter, properties; DataLossError if damaged, InvalidArgumentError if
// ordered by another comparator), holds at least one entry, and its first and
// last keys are stored at sequence 0. With `verify_checksums` every entry is
// read as well, checking every block's checksum and that each key is at
// sequence 0 with a user key after the previous one (InvalidArgumentError
// otherwise).
absl::StatusOr<ExternalTableFacts> InspectExternalTable(
    Env* env, const TableOptions& options, const std::string& fname,
    bool verify_checksums);

// Copy `src` to a new file `dst`, synced and closed. On failure `dst` is
// removed.
absl::Status CopyTableFile(Env* env, const std::string& src,
                           const std::string& dst);

// Write the entries of table `src` (read with `read_options`) to a new table
// `dst` built with `write_options` (a different filter size, say), synced
// and closed; its size goes to *file_size. On failure `dst` is removed.
absl::Status RewriteTable(Env* env, const TableOptions& read_options,
                          const std::string& src,
                          const TableOptions& write_options,
                          const std::string& dst, uint64_t* file_size);

}  // namespace sift

#endif  // SIFT_DB_EXTERNAL_TABLE_H_
