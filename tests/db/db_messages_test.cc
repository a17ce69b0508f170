// What DB::Open and the write entry points say when they refuse: a
// permission problem is PermissionDenied with the file and the OS message
// (not "no database here" or "CURRENT missing"), a held lock is
// FailedPrecondition, a null batch is InvalidArgument.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/unprivileged.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

// A database on disk, closed, in a directory others may search.
class DBPermissionTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "sift_perm_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
    dbname_ = root_ + "/db";
    Options options;
    options.create_if_missing = true;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dbname_);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "v").ok());
    ASSERT_TRUE((*db)->Flush().ok());
  }
  void TearDown() override {
    ::chmod(dbname_.c_str(), 0755);
    fs::remove_all(root_);
  }

  // Opens the database as a user without access and checks the refusal:
  // PermissionDenied, naming `file` and carrying the OS message.
  bool RefusedForPermission(bool create_if_missing, const std::string& file) {
    return test::RunUnprivileged([&] {
      Options options;
      options.create_if_missing = create_if_missing;
      absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dbname_);
      const absl::Status& s = db.status();
      const bool ok =
          absl::IsPermissionDenied(s) &&
          s.message().find(file) != std::string::npos &&
          s.message().find("Permission denied") != std::string::npos;
      if (!ok) std::fprintf(stderr, "Open: %s\n", s.ToString().c_str());
      return ok;
    });
  }

  std::string root_;
  std::string dbname_;
};

TEST_F(DBPermissionTest, UnreadableDirectoryIsNotNoDatabase) {
  ASSERT_EQ(::chmod(dbname_.c_str(), 0000), 0);
  EXPECT_TRUE(RefusedForPermission(/*create_if_missing=*/false, dbname_));
}

TEST_F(DBPermissionTest, UnsearchableDirectoryIsNotMissingCurrent) {
  // The directory may be listed (showing the tables) but CURRENT not reached.
  ASSERT_EQ(::chmod(dbname_.c_str(), 0444), 0);
  EXPECT_TRUE(
      RefusedForPermission(/*create_if_missing=*/false, dbname_ + "/CURRENT"));
}

TEST_F(DBPermissionTest, UnwritableLockIsPermissionDenied) {
  ASSERT_EQ(::chmod((dbname_ + "/LOCK").c_str(), 0444), 0);
  EXPECT_TRUE(
      RefusedForPermission(/*create_if_missing=*/true, dbname_ + "/LOCK"));
  EXPECT_TRUE(
      RefusedForPermission(/*create_if_missing=*/false, dbname_ + "/LOCK"));
}

class DBMessagesTest : public testing::Test {
 protected:
  DBMessagesTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
  }

  static int Tables(DB* db) {
    int n = 0;
    for (int level = 0; level < 7; ++level) {
      n += std::stoi(
          db->GetProperty(absl::StrCat("sift.num-files-at-level", level))
              .value_or("-100"));
    }
    return n;
  }

  std::unique_ptr<Env> env_;
  Options options_;
};

TEST_F(DBMessagesTest, HeldLockIsFailedPrecondition) {
  absl::StatusOr<std::unique_ptr<DB>> first = DB::Open(options_, "/db");
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<DB>> second = DB::Open(options_, "/db");
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  absl::Status destroy = DestroyDB("/db", options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(destroy)) << destroy;
}

TEST_F(DBMessagesTest, WriteOfNullBatchIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/db");
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "v").ok());
  absl::Status s = (*db)->Write(WriteOptions(), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("updates"), std::string::npos) << s;
  // Nothing happened: the memtable was not switched, writes still work, and
  // Flush (which uses the write path's own null-batch request) does too.
  EXPECT_EQ(Tables(db->get()), 0);
  ASSERT_TRUE((*db)->Put(WriteOptions(), "k2", "v2").ok());
  ASSERT_TRUE((*db)->Flush().ok());
  EXPECT_EQ(Tables(db->get()), 1);
  std::string value;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "v");
}

}  // namespace
}  // namespace sift
