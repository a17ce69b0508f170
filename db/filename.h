#ifndef SIFT_DB_FILENAME_H_
#define SIFT_DB_FILENAME_H_

// Names of the files in a database directory:
//   NNNNNN.log        write-ahead log
//   NNNNNN.log.damaged  a write-ahead log recovery stopped in or before
//                     (damage), kept for inspection; never read by the engine
//   NNNNNN.sst        table
//   MANIFEST-NNNNNN   version edits
//   CURRENT           names the live MANIFEST
//   LOCK              held by the process that has the database open
//   LOG, LOG.old      informational log
//   NNNNNN.dbtmp      temporary file (CURRENT being replaced)

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sift/env.h"

namespace sift {

enum class FileType {
  kLogFile,
  kDamagedLogFile,
  kDBLockFile,
  kTableFile,
  kDescriptorFile,
  kCurrentFile,
  kTempFile,
  kInfoLogFile,
};

std::string LogFileName(std::string_view dbname, uint64_t number);
std::string DamagedLogFileName(std::string_view dbname, uint64_t number);
std::string TableFileName(std::string_view dbname, uint64_t number);
std::string DescriptorFileName(std::string_view dbname, uint64_t number);
std::string CurrentFileName(std::string_view dbname);
std::string LockFileName(std::string_view dbname);
std::string TempFileName(std::string_view dbname, uint64_t number);
std::string InfoLogFileName(std::string_view dbname);
std::string OldInfoLogFileName(std::string_view dbname);

// Recognize a file name (not a path) of the list above. False if it is not
// one of sift's.
bool ParseFileName(std::string_view filename, uint64_t* number, FileType* type);

// Whether WAL `number` still holds writes that are not in tables, given the
// MANIFEST's log number (the oldest WAL the current version needs): the one
// rule for which logs recovery replays, kvtool reads and obsolete-file
// deletion keeps.
inline bool IsLiveLog(uint64_t number, uint64_t manifest_log_number) {
  return number >= manifest_log_number;
}

// CURRENT holds one short line; a file larger than this is not a CURRENT.
inline constexpr size_t kMaxCurrentFileSize = 4096;

// The number of the MANIFEST that CURRENT names. NotFoundError if CURRENT is
// missing, DataLossError if it is not one line naming a MANIFEST (both name
// the file); a read failure as the Env reports it.
absl::StatusOr<uint64_t> ReadCurrentFile(Env* env, std::string_view dbname);

// Point CURRENT at MANIFEST-<descriptor_number> atomically: write a temp file,
// sync it, rename it over CURRENT, sync the directory.
absl::Status SetCurrentFile(Env* env, const std::string& dbname,
                            uint64_t descriptor_number);

}  // namespace sift

#endif  // SIFT_DB_FILENAME_H_
