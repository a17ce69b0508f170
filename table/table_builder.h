#ifndef SIFT_TABLE_TABLE_BUILDER_H_
#define SIFT_TABLE_TABLE_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "sift/env.h"
#include "table/table_options.h"
#include "table/table_properties.h"

namespace sift {

// Writes one table (doc/table_format.md) through a WritableFile.
//
// Thread safety: not safe for concurrent use.
class TableBuilder {
 public:
  // `file` is not owned and must stay open until Finish or Abandon returns;
  // the caller syncs and closes it afterwards.
  TableBuilder(const TableOptions& options, WritableFile* file);
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;
  // REQUIRES: Finish or Abandon was called.
  ~TableBuilder();

  // REQUIRES: key is after every key added before (options.comparator);
  // Finish/Abandon not called; key and value each shorter than 4 GiB. A key
  // out of order sets status() to absl::InvalidArgumentError and is dropped.
  void Add(std::string_view key, std::string_view value);

  // The first error met, if any (sticky).
  absl::Status status() const;

  // Write the filter, properties and index blocks and the footer.
  absl::Status Finish();
  // Stop; the file's contents are left undefined.
  void Abandon();

  uint64_t NumEntries() const;
  // Bytes written so far (the final file size after Finish).
  uint64_t FileSize() const;
  // The table's properties block. Complete once Finish returned OK (the
  // filter fields are set by Finish); lives as long as the builder.
  const TableProperties& properties() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace sift

#endif  // SIFT_TABLE_TABLE_BUILDER_H_
