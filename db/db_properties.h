#ifndef SIFT_DB_DB_PROPERTIES_H_
#define SIFT_DB_DB_PROPERTIES_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "db/db_state.h"

namespace sift {

// The value of DB property `name` (see DB::GetProperty), or nullopt if the
// name is unknown:
//   sift.stats                     per-level table (files, bytes, filter
//                                  memory, flush/compaction work), per-level
//                                  filters (bits/key as built, theoretical
//                                  FPR, expected false positives per
//                                  absent-key Get; open tables only) and the
//                                  read stats with measured FPR and block
//                                  reads per Get
//   sift.num-files-at-level<N>     tables at level N
//   sift.filter-memory-bytes       filter bytes held by open tables
//   sift.sstables                  every live table by level
//   sift.approximate-memory-usage  memtables + block cache, in bytes
//   sift.recovery                  what Open's WAL replay did: logs and
//                                  records replayed; if damage stopped it, the
//                                  first error, the records and bytes left out
//                                  and the files they were kept aside as
//
// Thread safety: takes state.mutex briefly.
std::optional<std::string> GetDBProperty(DBState& state, std::string_view name)
    ABSL_LOCKS_EXCLUDED(state.mutex);

}  // namespace sift

#endif  // SIFT_DB_DB_PROPERTIES_H_
