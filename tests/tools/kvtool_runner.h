#ifndef SIFT_TESTS_TOOLS_KVTOOL_RUNNER_H_
#define SIFT_TESTS_TOOLS_KVTOOL_RUNNER_H_

// Helpers for tests that run the built kvtool binary (KVTOOL_PATH, set by
// tests/CMakeLists.extra.cmake) on databases and files they create.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sift/db.h"
#include "sift/options.h"
#include "tests/testutil/scratch_dir.h"

// Empty when the build has no kvtool (SIFT_BUILD_TOOLS=OFF): every test is
// then skipped rather than failed.
#ifndef KVTOOL_PATH
#define KVTOOL_PATH ""
#endif

namespace sift::test {

class KvtoolEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (std::string(KVTOOL_PATH).empty()) {
      GTEST_SKIP() << "kvtool is not built (SIFT_BUILD_TOOLS=OFF)";
    }
  }
};
inline ::testing::Environment* const kKvtoolEnvironment =
    ::testing::AddGlobalTestEnvironment(new KvtoolEnvironment);

struct ToolResult {
  int code = -1;  // exit status; -1 if kvtool did not exit normally
  std::string out;
  std::string err;
};

inline std::string ShellQuote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh directory for one kvtool test, removed at destruction.
class TempDir : public ScratchDir {
 public:
  TempDir() : ScratchDir("kvtool") {}
};

// Run kvtool with `args`; stdout and stderr are captured separately.
inline ToolResult RunKvtool(const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string err_file = ::testing::TempDir() + "kvtool_stderr_" +
                               std::to_string(getpid()) + "_" +
                               std::to_string(counter++);
  std::string command = ShellQuote(KVTOOL_PATH);
  for (const std::string& arg : args) command += " " + ShellQuote(arg);
  command += " 2>" + ShellQuote(err_file);
  ToolResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed: " << command;
    return result;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) result.out.append(buf, n);
  const int status = pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = ReadWholeFile(err_file);
  std::remove(err_file.c_str());
  return result;
}

// Parse kvtool's --json output; a parse failure fails the test.
inline nlohmann::json ParseJson(const ToolResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.out << "\n" << r.err;
  return j;
}

// The names (not paths) of files in `dir` ending in `suffix`, sorted.
inline std::vector<std::string> FilesWithSuffix(const std::string& dir,
                                                const std::string& suffix) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Key i of the databases the tests build: "key000042".
inline std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}
inline std::string Value(int i) { return "value-" + std::to_string(i); }

// Open (creating) the database at `path` with the POSIX env.
inline std::unique_ptr<DB> OpenDb(const std::string& path,
                                  Options options = Options()) {
  options.create_if_missing = true;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, path);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

// Put keys [begin, end) with their values.
inline void PutRange(DB* db, int begin, int end) {
  for (int i = begin; i < end; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), Value(i)).ok());
  }
}

// XOR one byte of `path` at `offset` with 0xff.
inline void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  ASSERT_TRUE(f.good()) << path << " has no byte at " << offset;
  c = static_cast<char>(c ^ 0xff);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

// Every file of `dir` with its contents: to check that a command changed
// nothing. LOCK is left out: opening and closing it would drop this
// process's fcntl lock on it (POSIX drops a process's locks on a file when
// it closes any descriptor of that file).
inline std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename() == "LOCK") continue;
    files[entry.path().filename().string()] =
        ReadWholeFile(entry.path().string());
  }
  return files;
}

}  // namespace sift::test

#endif  // SIFT_TESTS_TOOLS_KVTOOL_RUNNER_H_
