#include "db/filename.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"

namespace sift {
namespace {

TEST(FileNameTest, Names) {
  EXPECT_EQ(LogFileName("db", 7), "db/000007.log");
  EXPECT_EQ(TableFileName("/a/b", 123456), "/a/b/123456.sst");
  EXPECT_EQ(TableFileName("db", 1234567), "db/1234567.sst");
  EXPECT_EQ(DescriptorFileName("db", 3), "db/MANIFEST-000003");
  EXPECT_EQ(CurrentFileName("db"), "db/CURRENT");
  EXPECT_EQ(LockFileName("db"), "db/LOCK");
  EXPECT_EQ(TempFileName("db", 9), "db/000009.dbtmp");
  EXPECT_EQ(InfoLogFileName("db"), "db/LOG");
  EXPECT_EQ(OldInfoLogFileName("db"), "db/LOG.old");
}

TEST(FileNameTest, ParseRoundTrip) {
  struct Case {
    std::string path;
    uint64_t number;
    FileType type;
  };
  const uint64_t kMax = UINT64_MAX;
  const Case cases[] = {
      {LogFileName("d", 0), 0, FileType::kLogFile},
      {LogFileName("d", 100), 100, FileType::kLogFile},
      {TableFileName("d", 18446744073709551615ull), kMax, FileType::kTableFile},
      {DescriptorFileName("d", 2), 2, FileType::kDescriptorFile},
      {TempFileName("d", 77), 77, FileType::kTempFile},
      {CurrentFileName("d"), 0, FileType::kCurrentFile},
      {LockFileName("d"), 0, FileType::kDBLockFile},
      {InfoLogFileName("d"), 0, FileType::kInfoLogFile},
      {OldInfoLogFileName("d"), 0, FileType::kInfoLogFile},
  };
  for (const Case& c : cases) {
    const std::string name = c.path.substr(2);  // strip "d/"
    uint64_t number = 999;
    FileType type = FileType::kTempFile;
    ASSERT_TRUE(ParseFileName(name, &number, &type)) << name;
    EXPECT_EQ(number, c.number) << name;
    EXPECT_EQ(type, c.type) << name;
  }
  // Numbers without the zero padding are accepted too.
  uint64_t number = 0;
  FileType type;
  ASSERT_TRUE(ParseFileName("42.sst", &number, &type));
  EXPECT_EQ(number, 42u);
  ASSERT_TRUE(ParseFileName("MANIFEST-5", &number, &type));
  EXPECT_EQ(number, 5u);
}

TEST(FileNameTest, ParseRejectsForeignNames) {
  for (const char* name : {"",
                           "foo",
                           "foo-dx-100.log",
                           ".log",
                           "100",
                           "100.",
                           "100.txt",
                           "100.log.old",
                           "100.sstx",
                           "-1.log",
                           "1a.log",
                           "x100.log",
                           "MANIFEST",
                           "MANIFEST-",
                           "MANIFEST-3x",
                           "MANIFEST3",
                           "CURRENTX",
                           "LOCK.old",
                           "LOG.older",
                           "18446744073709551616.log",  // 2^64
                           "99999999999999999999999.sst",
                           " 100.log",
                           "100.log "}) {
    uint64_t number = 0;
    FileType type;
    EXPECT_FALSE(ParseFileName(name, &number, &type)) << '"' << name << '"';
  }
}

// Records directory syncs and can fail file creation and renames.
class RecordingEnv final : public EnvWrapper {
 public:
  explicit RecordingEnv(Env* target) : EnvWrapper(target) {}
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    if (fail_create) return absl::UnavailableError("no space: " + f);
    return EnvWrapper::NewWritableFile(f);
  }
  absl::Status RenameFile(const std::string& s, const std::string& t) override {
    if (fail_rename) return absl::UnavailableError("rename failed: " + t);
    return EnvWrapper::RenameFile(s, t);
  }
  absl::Status SyncDir(const std::string& d) override {
    synced_dirs.push_back(d);
    return EnvWrapper::SyncDir(d);
  }
  bool fail_create = false;
  bool fail_rename = false;
  std::vector<std::string> synced_dirs;
};

std::string ReadFile(Env* env, const std::string& fname) {
  auto file = env->NewSequentialFile(fname);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return "";
  std::string contents;
  char buf[100];
  while (true) {
    std::string_view chunk;
    EXPECT_TRUE((*file)->Read(sizeof(buf), &chunk, buf).ok());
    if (chunk.empty()) break;
    contents.append(chunk.data(), chunk.size());
  }
  return contents;
}

TEST(FileNameTest, SetCurrentFileReplacesCurrentAtomically) {
  std::unique_ptr<Env> mem = test::NewTestEnv();
  RecordingEnv env(mem.get());
  ASSERT_TRUE(env.CreateDir("/db").ok());

  ASSERT_TRUE(SetCurrentFile(&env, "/db", 5).ok());
  EXPECT_EQ(ReadFile(&env, "/db/CURRENT"), "MANIFEST-000005\n");
  EXPECT_EQ(env.synced_dirs, std::vector<std::string>{"/db"});
  EXPECT_FALSE(env.FileExists(TempFileName("/db", 5)));

  ASSERT_TRUE(SetCurrentFile(&env, "/db", 1234567).ok());
  EXPECT_EQ(ReadFile(&env, "/db/CURRENT"), "MANIFEST-1234567\n");
  auto children = env.GetChildren("/db");
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(*children, std::vector<std::string>{"CURRENT"});

  // A failed rename leaves the old CURRENT and no temp file behind.
  env.fail_rename = true;
  const absl::Status s = SetCurrentFile(&env, "/db", 9);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_EQ(ReadFile(&env, "/db/CURRENT"), "MANIFEST-1234567\n");
  EXPECT_FALSE(env.FileExists(TempFileName("/db", 9)));
}

TEST(FileNameTest, SetCurrentFileReportsCreateFailure) {
  std::unique_ptr<Env> mem = test::NewTestEnv();
  RecordingEnv env(mem.get());
  env.fail_create = true;
  const absl::Status s = SetCurrentFile(&env, "/db", 1);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_FALSE(env.FileExists("/db/CURRENT"));
  EXPECT_TRUE(env.synced_dirs.empty());
}

}  // namespace
}  // namespace sift
