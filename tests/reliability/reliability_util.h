#ifndef SIFT_TESTS_RELIABILITY_RELIABILITY_UTIL_H_
#define SIFT_TESTS_RELIABILITY_RELIABILITY_UTIL_H_

// Helpers shared by the reliability campaigns: run-length knobs from the
// environment, scratch directories on disk, whole-database reads and model
// comparisons.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/scratch_dir.h"

namespace sift::reliability {

using KvMap = std::map<std::string, std::string>;

// SIFT_SANITIZED is set: the build is instrumented and slow, scale down.
bool Sanitized();
// SIFT_LONG is set: run the long version of a campaign.
bool LongMode();
// The integer value of environment variable `name`, or `fallback`.
int64_t IntFromEnv(const char* name, int64_t fallback);

// Scratch directories on disk (tests/testutil/scratch_dir.h).
using test::ScratchDir;

// Every key/value of `db` through one iterator, in order. An iterator error
// is returned as such.
absl::StatusOr<KvMap> ReadAll(DB* db, const ReadOptions& options = {});

// A short description of how `actual` differs from `expected` (first few
// differences), for failure messages.
std::string DescribeDiff(const KvMap& expected, const KvMap& actual);

// Order-independent fingerprint of a key/value map, updated one entry at a
// time: Fingerprint(map) is the sum of EntryHash over its entries.
uint64_t EntryHash(const std::string& key, const std::string& value);
uint64_t Fingerprint(const KvMap& map);

// Run program argv[0] with arguments argv[1..], its stdout and stderr going
// to `output_path`; wait for it. The raw wait status, or -1 if it could not
// be started.
int RunProgram(const std::vector<std::string>& argv,
               const std::string& output_path);
// The contents of file `path` on disk ("" if unreadable).
std::string ReadDiskFile(const std::string& path);

// Whole-file copies through Envs (e.g. from a MemEnv to disk).
absl::StatusOr<std::string> ReadEnvFile(Env* env, const std::string& fname);
absl::Status WriteEnvFile(Env* env, const std::string& fname,
                          const std::string& contents);
// name -> contents of every file in directory `dir` of `env`.
absl::StatusOr<std::map<std::string, std::string>> ReadEnvDir(
    Env* env, const std::string& dir);
// Create directory `dir` in `env` holding exactly `files` (name -> contents).
absl::Status WriteEnvDir(Env* env, const std::string& dir,
                         const std::map<std::string, std::string>& files);

}  // namespace sift::reliability

#endif  // SIFT_TESTS_RELIABILITY_RELIABILITY_UTIL_H_
