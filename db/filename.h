#ifndef SIFT_DB_FILENAME_H_
#define SIFT_DB_FILENAME_H_

// Names of the files in a database directory:
//   NNNNNN.log        write-ahead log
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
#include "sift/env.h"

namespace sift {

enum class FileType {
  kLogFile,
  kDBLockFile,
  kTableFile,
  kDescriptorFile,
  kCurrentFile,
  kTempFile,
  kInfoLogFile,
};

std::string LogFileName(std::string_view dbname, uint64_t number);
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

// Point CURRENT at MANIFEST-<descriptor_number> atomically: write a temp file,
// sync it, rename it over CURRENT, sync the directory.
absl::Status SetCurrentFile(Env* env, const std::string& dbname,
                            uint64_t descriptor_number);

}  // namespace sift

#endif  // SIFT_DB_FILENAME_H_
