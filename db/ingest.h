#ifndef SIFT_DB_INGEST_H_
#define SIFT_DB_INGEST_H_

// DB::IngestExternalFiles (doc/engine.md, "Ingesting external tables").
//
// Steps of one call:
//   1. Each file is copied (or hard-linked) into the database directory
//      under a fresh table number, protected from obsolete-file deletion by
//      a PendingOutput, and checked (db/external_table.h). The files of the
//      call must not overlap one another.
//   2. As the front writer, alone (WritePath::RunAlone): if a memtable holds
//      keys in a file's range it is flushed first, so that everything older
//      than the ingestion is in tables. Background work is paused, so the
//      version cannot change underneath.
//   3. The call takes one sequence number above every write so far; each
//      file goes to the deepest level where nothing in that level or above
//      overlaps it; a file whose filter is smaller than a table written to
//      that level would get is rewritten; a file landing in level 0 is
//      renumbered if needed so that it is the newest there.
//   4. One VersionEdit names every file, each with the call's sequence as
//      its global sequence number (db/global_seqno.h), and is logged with
//      LogAndApply: all files or none, across crashes.
// On failure before the edit is logged, the copies are removed and the
// database is as before. If LogAndApply itself fails, the abandoned MANIFEST
// may hold the edit, so the copies stay (protected until the DB closes, then
// collected as obsolete on the next open unless a recovered MANIFEST names
// them: all or none again).

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "db/background.h"
#include "db/db_state.h"
#include "db/external_table.h"
#include "db/write_path.h"
#include "sift/options.h"

namespace sift {

// One IngestExternalFiles call. Not reusable.
//
// Thread safety: Run is called by one thread; it takes the DB mutex itself.
class ExternalFileIngestion {
 public:
  // None is owned; all must outlive this object.
  ExternalFileIngestion(DBState& state, BackgroundWork& background,
                        WritePath& write_path, const IngestOptions& options);
  ExternalFileIngestion(const ExternalFileIngestion&) = delete;
  ExternalFileIngestion& operator=(const ExternalFileIngestion&) = delete;
  ~ExternalFileIngestion();

  absl::Status Run(const std::vector<std::string>& paths)
      ABSL_LOCKS_EXCLUDED(state_.mutex);

 private:
  struct File {
    std::string source;
    PendingOutput output;  // the table number in the database
    ExternalTableFacts facts;
    int level = 0;
  };

  // Step 1 for one file. REQUIRES: mutex not held.
  absl::Status AddFile(const std::string& source)
      ABSL_LOCKS_EXCLUDED(state_.mutex);
  absl::Status CheckNoOverlap() const;
  // True if the active or the immutable memtable holds a key in the range of
  // one of the files. REQUIRES: mutex held.
  bool MemTablesOverlap() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Steps 3 and 4. REQUIRES: mutex held; front writer, background paused.
  absl::Status Commit() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // The deepest level where no file in it or above overlaps `f`.
  int PickLevel(const Version& current, const File& f) const;
  // Give `f` a new number: its table rewritten with `bits_per_key` filter
  // bits, or (bits_per_key < 0) the same file renamed. REQUIRES: mutex held;
  // released meanwhile.
  absl::Status Renumber(File* f, double bits_per_key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);
  // Remove the copies made so far. REQUIRES: mutex held.
  void RemoveCopies() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex);

  DBState& state_;
  BackgroundWork& background_;
  WritePath& write_path_;
  const IngestOptions options_;
  // Released (their PendingOutputs destroyed) only with the mutex held.
  std::vector<File> files_;
};

}  // namespace sift

#endif  // SIFT_DB_INGEST_H_
