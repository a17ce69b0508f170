#ifndef SIFT_DB_OBSOLETE_FILES_H_
#define SIFT_DB_OBSOLETE_FILES_H_

#include "absl/base/thread_annotations.h"
#include "db/db_state.h"

namespace sift {

// Delete the files of the database directory that nothing needs any more:
// tables no version references and no flush or compaction is writing, WALs
// older than the version set's log number, and MANIFESTs older than the
// current one. Tables are evicted from the table
// cache first. Does nothing once a background error is recorded: after a
// failed MANIFEST write it is unknown which files an abandoned MANIFEST
// names.
//
// REQUIRES: state.mutex held; released while listing and deleting files.
// Called only by Open and the background thread (never concurrently).
void DeleteObsoleteFiles(DBState& state)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mutex);

}  // namespace sift

#endif  // SIFT_DB_OBSOLETE_FILES_H_
