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
// names. Does nothing while a FileDeletionPause lives; the files stay until
// the next call after it.
//
// REQUIRES: state.mutex held; released while listing and deleting files.
// Called only by Open and the background thread (never concurrently).
void DeleteObsoleteFiles(DBState& state)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mutex);

// While an object of this class lives, DeleteObsoleteFiles deletes nothing,
// so that a file named by the state read under the mutex (a version's
// tables, the MANIFEST, the live WALs) is still there when it is read
// without the mutex, however far flushes and compactions move on meanwhile.
// The constructor waits for a deletion pass already under way to end, so
// from its return to the destructor no file of the database is deleted.
//
// Thread safety: the constructor and the destructor take state.mutex
// themselves (REQUIRES: not held by the caller). Pauses may overlap.
class FileDeletionPause {
 public:
  explicit FileDeletionPause(DBState& state) ABSL_LOCKS_EXCLUDED(state.mutex);
  FileDeletionPause(const FileDeletionPause&) = delete;
  FileDeletionPause& operator=(const FileDeletionPause&) = delete;
  ~FileDeletionPause();

 private:
  DBState& state_;
};

}  // namespace sift

#endif  // SIFT_DB_OBSOLETE_FILES_H_
