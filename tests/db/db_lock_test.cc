// The LOCK file on disk: one open handle per database, whatever the spelling
// of its path (relative, "./", absolute, with "..", through a symlink), also
// within one process; DestroyDB refuses an open database; a failed Open does
// not release a lock another handle holds.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

// Works in a fresh temporary directory made the current directory, so that
// relative spellings can be tried; the previous one is restored afterwards.
class DBLockTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "sift_lock_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = fs::canonical(tmpl).string();
    old_cwd_ = fs::current_path();
    fs::current_path(root_);
    fs::create_directory("sub");
    options_.create_if_missing = true;
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    fs::remove_all(root_);
  }

  // Ways to name directory `name` of the current directory.
  std::vector<std::string> Spellings(const std::string& name) {
    fs::create_directory_symlink(name, "link-" + name);
    return {"./" + name,
            root_ + "/" + name,
            root_ + "//./" + name,
            "sub/../" + name,
            name + "/",
            "link-" + name,
            root_ + "/link-" + name};
  }

  // Whether another process can take the LOCK of `dbname` right now.
  static bool OtherProcessCanLock(const std::string& dbname) {
    const std::string lock_name = dbname + "/LOCK";
    const pid_t pid = ::fork();
    if (pid == 0) {  // only async-signal-safe calls from here on
      const int fd = ::open(lock_name.c_str(), O_RDWR);
      struct flock f = {};
      f.l_type = F_WRLCK;
      f.l_whence = SEEK_SET;
      _exit(fd >= 0 && ::fcntl(fd, F_SETLK, &f) == 0 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  std::string root_;
  fs::path old_cwd_;
  Options options_;
};

TEST_F(DBLockTest, EverySpellingOfAnOpenDatabaseIsLocked) {
  absl::StatusOr<std::unique_ptr<DB>> first = DB::Open(options_, "d5");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->Put(WriteOptions(), "k", "v1").ok());
  for (const std::string& spelling : Spellings("d5")) {
    SCOPED_TRACE(spelling);
    absl::StatusOr<std::unique_ptr<DB>> second = DB::Open(options_, spelling);
    ASSERT_FALSE(second.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
    EXPECT_NE(second.status().message().find("cannot lock database"),
              std::string::npos)
        << second.status();
  }
  // The first handle is unaffected; once closed, any spelling opens it.
  ASSERT_TRUE((*first)->Put(WriteOptions(), "k", "v2").ok());
  ASSERT_TRUE((*first)->Flush().ok());
  first->reset();
  absl::StatusOr<std::unique_ptr<DB>> again =
      DB::Open(options_, root_ + "/link-d5");
  ASSERT_TRUE(again.ok()) << again.status();
  std::string value;
  ASSERT_TRUE((*again)->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "v2");
}

TEST_F(DBLockTest, DestroyDBRefusesAnOpenDatabaseUnderAnySpelling) {
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "d6");
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE((*db)->Flush().ok());
  for (const std::string& spelling : Spellings("d6")) {
    SCOPED_TRACE(spelling);
    absl::Status s = DestroyDB(spelling, options_);
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
    EXPECT_TRUE(fs::exists("d6/CURRENT"));
  }
  ASSERT_TRUE((*db)->Put(WriteOptions(), "k2", "v2").ok());
  db->reset();
  db = DB::Open(options_, "d6");
  ASSERT_TRUE(db.ok()) << db.status();
  std::string value;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "v");
  ASSERT_TRUE((*db)->Get(ReadOptions(), "k2", &value).ok());
  EXPECT_EQ(value, "v2");
  db->reset();
  EXPECT_TRUE(DestroyDB("./d6", options_).ok());
  EXPECT_FALSE(fs::exists("d6"));
}

TEST_F(DBLockTest, FailedOpenKeepsTheLockOfAnotherHandle) {
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "d7");
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_FALSE(OtherProcessCanLock("d7"));

  Options exclusive = options_;
  exclusive.error_if_exists = true;
  for (const std::string& spelling :
       {std::string("d7"), std::string("./d7"), root_ + "/d7"}) {
    SCOPED_TRACE(spelling);
    EXPECT_FALSE(DB::Open(exclusive, spelling).ok());
    EXPECT_FALSE(OtherProcessCanLock("d7"));
  }
  db->reset();
  EXPECT_TRUE(OtherProcessCanLock("d7"));
}

}  // namespace
}  // namespace sift
