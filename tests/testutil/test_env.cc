#include "tests/testutil/test_env.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sift::test {
namespace {

// A file whose Sync only hands the data to the kernel (see NewTestEnv).
class UnsyncedFile final : public WritableFile {
 public:
  explicit UnsyncedFile(std::unique_ptr<WritableFile> target)
      : target_(std::move(target)) {}
  absl::Status Append(std::string_view data) override {
    return target_->Append(data);
  }
  absl::Status Flush() override { return target_->Flush(); }
  absl::Status Sync() override { return target_->Flush(); }
  absl::Status Close() override { return target_->Close(); }

 private:
  std::unique_ptr<WritableFile> target_;
};

absl::StatusOr<std::unique_ptr<WritableFile>> Unsynced(
    absl::StatusOr<std::unique_ptr<WritableFile>> file) {
  if (!file.ok()) return file;
  return std::make_unique<UnsyncedFile>(*std::move(file));
}

// A POSIX Env rooted at one directory, with every table read direct.
class DirectReadTestEnv final : public EnvWrapper {
 public:
  explicit DirectReadTestEnv(std::string root)
      : EnvWrapper(Env::Default()), root_(std::move(root)) {}
  ~DirectReadTestEnv() override {
    std::error_code ignored;  // a leftover directory only costs disk space
    std::filesystem::remove_all(root_, ignored);
  }

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& f) override {
    return target()->NewSequentialFile(Map(f));
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f) override {
    return target()->NewRandomAccessFile(Map(f), RandomAccessMode::kDirect);
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f, RandomAccessMode /*mode*/) override {
    return NewRandomAccessFile(f);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    MakeParent(f);
    return Unsynced(target()->NewWritableFile(Map(f)));
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& f) override {
    MakeParent(f);
    return Unsynced(target()->NewAppendableFile(Map(f)));
  }
  bool FileExists(const std::string& f) override {
    return target()->FileExists(Map(f));
  }
  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) override {
    return target()->GetChildren(Map(dir));
  }
  absl::Status RemoveFile(const std::string& f) override {
    return target()->RemoveFile(Map(f));
  }
  absl::Status CreateDir(const std::string& d) override {
    MakeParent(d);
    return target()->CreateDir(Map(d));
  }
  absl::Status RemoveDir(const std::string& d) override {
    return target()->RemoveDir(Map(d));
  }
  absl::StatusOr<uint64_t> GetFileSize(const std::string& f) override {
    return target()->GetFileSize(Map(f));
  }
  absl::Status RenameFile(const std::string& s, const std::string& t) override {
    MakeParent(t);
    return target()->RenameFile(Map(s), Map(t));
  }
  absl::Status SyncDir(const std::string& d) override {
    // As Sync: the directory must exist, nothing is forced to the device.
    return target()->FileExists(Map(d))
               ? absl::OkStatus()
               : absl::NotFoundError(Map(d) + ": no such directory");
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& f) override {
    MakeParent(f);
    return target()->LockFile(Map(f));
  }

 private:
  std::string Map(std::string_view path) const {
    return absl::StrCat(root_, path.empty() || path[0] != '/' ? "/" : "",
                        absl::string_view(path.data(), path.size()));
  }

  // The in-memory Env has implicit directories: a file may be created in a
  // directory nobody created.
  void MakeParent(const std::string& path) const {
    std::error_code ignored;  // the open that follows reports what matters
    std::filesystem::create_directories(
        std::filesystem::path(Map(path)).parent_path(), ignored);
  }

  const std::string root_;
};

}  // namespace

bool DirectReadsUnderTest() {
  const char* v = std::getenv("SIFT_TEST_DIRECT_READS");
  return v != nullptr && std::string_view(v) == "1";
}

std::unique_ptr<Env> NewTestEnv() {
  if (!DirectReadsUnderTest()) return NewMemEnv(Env::Default());
  static std::atomic<int> next_id{0};
  const char* dir = std::getenv("SIFT_TEST_DIR");
  std::string root = absl::StrCat(
      dir != nullptr && *dir != '\0' ? dir : "sift_test_files", "/env-",
      ::getpid(), "-", next_id.fetch_add(1, std::memory_order_relaxed));
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);  // left by an earlier crash
  std::filesystem::create_directories(root, ignored);
  return std::make_unique<DirectReadTestEnv>(std::move(root));
}

}  // namespace sift::test
