#include "tests/testutil/scratch_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace sift::test {

ScratchDir::ScratchDir(std::string_view tag, std::string_view parent) {
  std::string base(parent);
  if (base.empty()) {
    const char* root = std::getenv("TEST_TMPDIR");
    base = root != nullptr && *root != '\0'
               ? std::string(root)
               : std::filesystem::temp_directory_path().string();
  } else {
    std::error_code ignored;  // mkdtemp reports what matters
    std::filesystem::create_directories(base, ignored);
  }
  std::string pattern = base + "/sift-" + std::string(tag) + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    std::abort();
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::Sub(std::string_view name) const {
  return path_ + "/" + std::string(name);
}

}  // namespace sift::test
