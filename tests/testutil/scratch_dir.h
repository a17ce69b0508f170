#ifndef SIFT_TESTS_TESTUTIL_SCRATCH_DIR_H_
#define SIFT_TESTS_TESTUTIL_SCRATCH_DIR_H_

#include <string>
#include <string_view>

namespace sift::test {

// A fresh directory on disk, <parent>/sift-<tag>-XXXXXX, removed with
// everything in it on destruction (also when the test failed half way).
// `parent` is made if missing; empty means $TEST_TMPDIR, else the system
// temporary directory. Aborts if the directory cannot be made: nothing that
// needs it can run. Tests that need no real files use the in-memory Env.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view tag, std::string_view parent = {});
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/name.
  std::string Sub(std::string_view name) const;

 private:
  std::string path_;
};

}  // namespace sift::test

#endif  // SIFT_TESTS_TESTUTIL_SCRATCH_DIR_H_
