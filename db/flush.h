#ifndef SIFT_DB_FLUSH_H_
#define SIFT_DB_FLUSH_H_

// Turning a memtable into a table: used by the background thread for the
// immutable memtable and by recovery for memtables rebuilt from the WAL.

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "db/db_state.h"
#include "db/memtable.h"
#include "db/version.h"
#include "db/version_edit.h"

namespace sift {

// Write the entries of `mem` to a new table and add it to *edit: at the level
// base->PickLevelForMemTableOutput chooses, or level 0 when base is nullptr
// (recovery, where several tables in a row must keep their order). An empty
// memtable adds nothing. Counts the table in state.level_stats. The table's
// pending-output guard is appended to *tables: the caller keeps it until the
// edit is applied.
//
// REQUIRES: state.mutex held; released while the table is written, held on
// return. Only the background thread (or Open, before it starts) calls this.
absl::Status WriteMemTableToTable(DBState& state, MemTable* mem,
                                  VersionEdit* edit, const Version* base,
                                  std::vector<PendingOutput>* tables)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mutex);

// Flush state.imm(): write it to a table, record the table and the new WAL
// number in the MANIFEST (the WAL that held imm's writes becomes obsolete),
// drop imm and delete obsolete files. On error the error becomes the sticky
// background error and imm stays.
//
// `pick_level`: place the table as deep as the current version allows
// (Version::PickLevelForMemTableOutput); false keeps it at level 0. A flush
// that runs while a compaction is in progress must stay at level 0: the
// compaction's outputs may span gaps between its inputs that the current
// version does not show, so a deeper placement could overlap them.
//
// REQUIRES: state.mutex held; state.imm() != nullptr; called from the
// background thread.
absl::Status FlushImmutableMemTable(DBState& state, bool pick_level)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mutex);

}  // namespace sift

#endif  // SIFT_DB_FLUSH_H_
