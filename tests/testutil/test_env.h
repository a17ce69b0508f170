#ifndef SIFT_TESTS_TESTUTIL_TEST_ENV_H_
#define SIFT_TESTS_TESTUTIL_TEST_ENV_H_

#include <memory>
#include <string>

#include "sift/env.h"

namespace sift::test {

// True when the environment variable SIFT_TEST_DIRECT_READS is "1": the
// table and DB suites then run on real files read with O_DIRECT (see
// NewTestEnv). ctest runs them once this way (tests/CMakeLists.txt).
bool DirectReadsUnderTest();

// The Env a test keeps its files in where disk is not the point. Normally
// the in-memory Env. Under DirectReadsUnderTest(), a POSIX Env confined to a
// fresh directory of its own (paths the test uses, such as "/db/000005.sst",
// are taken relative to it; missing parent directories are created as the
// in-memory Env's implicit directories would be) in which every
// random-access file is opened with RandomAccessMode::kDirect whatever mode
// is asked for, so every table read the suite makes is a direct read of a
// real file. The directory is $SIFT_TEST_DIR (ctest sets it to a directory
// of the build tree: /tmp may be a tmpfs) or ./sift_test_files, and is
// removed with the Env. WritableFile::Sync and SyncDir do not force data
// to the device (Sync flushes to the kernel): these suites test reads, and a
// thousand fdatasyncs per test would cost minutes; durability is the
// reliability suites' business. Threads and the clock are Env::Default()'s.
std::unique_ptr<Env> NewTestEnv();

}  // namespace sift::test

#endif  // SIFT_TESTS_TESTUTIL_TEST_ENV_H_
