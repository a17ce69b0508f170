#ifndef SIFT_DB_BUILDER_H_
#define SIFT_DB_BUILDER_H_

#include <string>

#include "absl/status/status.h"
#include "db/table_cache.h"
#include "db/version_edit.h"
#include "sift/env.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "table/table_builder.h"

namespace sift {

// Complete a table written through `builder` to `file` (the table file
// meta->number): Finish it if `status` is OK, else Abandon it; sync and close
// the file; then check that the table opens through `table_cache` (under
// options.paranoid_checks, read every entry too). Sets meta->file_size.
// Returns `status` if it is an error, else the first error of these steps.
// Leaves the file in place either way: removing it is the caller's call.
absl::Status FinishTable(const Options& options, TableCache* table_cache,
                         const absl::Status& status, TableBuilder* builder,
                         WritableFile* file, FileMetaData* meta);

// Write the entries of *iter (internal keys in order, e.g. a memtable) to the
// table file meta->number, with `table_options` (table_cache->table_options()
// with this table's filter size, see filter_allocation.h). Fills
// meta->file_size, smallest and largest; syncs and closes the file, then
// checks that the table opens through `table_cache`. If *iter is empty, no
// file is left behind and meta->file_size is 0. On any error (including an
// error status of *iter) the file is removed and the error returned.
absl::Status BuildTable(const std::string& dbname, Env* env,
                        const Options& options,
                        const TableOptions& table_options,
                        TableCache* table_cache, Iterator* iter,
                        FileMetaData* meta);

// As above, with table_cache->table_options().
absl::Status BuildTable(const std::string& dbname, Env* env,
                        const Options& options, TableCache* table_cache,
                        Iterator* iter, FileMetaData* meta);

}  // namespace sift

#endif  // SIFT_DB_BUILDER_H_
