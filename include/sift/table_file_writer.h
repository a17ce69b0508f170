#ifndef SIFT_INCLUDE_SIFT_TABLE_FILE_WRITER_H_
#define SIFT_INCLUDE_SIFT_TABLE_FILE_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sift/options.h"

namespace sift {

// What TableFileWriter::Finish wrote.
struct ExternalTableInfo {
  std::string smallest_key;  // the first key added (a user key)
  std::string largest_key;   // the last key added
  uint64_t num_entries = 0;  // values and deletions
  uint64_t file_size = 0;    // bytes of the finished file
};

// Writes a table file outside any database, to be added to one later with
// DB::IngestExternalFiles (a bulk load built elsewhere, a shard moved between
// machines). The file is an ordinary sift table with its filter, laid out as
// `options` asks (block_size, block_restart_interval, compression,
// filter_bits_per_key, filter_kind; the file is written through options.env),
// so `kvtool sst` and `kvtool filter` read it. Its entries carry sequence
// number 0: the database that ingests the file gives them their sequence.
//
// Keys must be added in strictly increasing bytewise order. A key equal to or
// before the previous one is absl::InvalidArgumentError and stops the writer:
// nothing past the last accepted key is written, and every later call
// (Put, Delete, Finish) returns that error. A writer destroyed before Finish
// succeeds leaves an incomplete file behind, which the caller removes.
//
// Thread safety: not safe for concurrent use; distinct writers are
// independent.
class TableFileWriter {
 public:
  // Create (or truncate) the file at `path`. Errors: an option outside its
  // REQUIRES range (absl::InvalidArgumentError naming it), or the Env's error
  // creating the file.
  static absl::StatusOr<std::unique_ptr<TableFileWriter>> Open(
      const Options& options, const std::string& path);

  TableFileWriter(const TableFileWriter&) = delete;
  TableFileWriter& operator=(const TableFileWriter&) = delete;
  virtual ~TableFileWriter() = default;

  // Add key -> value. REQUIRES: key after every key added before; Finish not
  // yet called. The views need only live for the call.
  virtual absl::Status Put(std::string_view key, std::string_view value) = 0;

  // Add a deletion of key: once ingested it hides older values of the key.
  // REQUIRES: as Put.
  virtual absl::Status Delete(std::string_view key) = 0;

  // Write the filter, index and footer, sync and close the file. A file
  // without entries is not a valid table: absl::InvalidArgumentError if
  // nothing was added. REQUIRES: called at most once.
  virtual absl::StatusOr<ExternalTableInfo> Finish() = 0;

 protected:
  TableFileWriter() = default;
};

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_TABLE_FILE_WRITER_H_
