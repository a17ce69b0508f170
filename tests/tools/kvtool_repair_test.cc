// kvtool repair: a database whose MANIFEST is damaged opens again afterwards,
// the damaged MANIFEST is listed as set aside, and failures exit 1 with one
// line naming the database.

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sift/db.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

constexpr int kDataError = 1;

TEST(KvtoolRepairTest, DamagedManifestIsRepaired) {
  TempDir dir;
  const std::string db_path = dir.Sub("db");
  {
    std::unique_ptr<DB> db = OpenDb(db_path);
    ASSERT_NE(db, nullptr);
    PutRange(db.get(), 0, 500);
    ASSERT_TRUE(db->Flush().ok());
    PutRange(db.get(), 500, 600);  // WAL only
  }
  const std::vector<std::string> manifests =
      FilesWithSuffix(db_path, "");  // every file; MANIFEST picked below
  std::string manifest;
  for (const std::string& name : manifests) {
    if (name.starts_with("MANIFEST-")) manifest = name;
  }
  ASSERT_FALSE(manifest.empty());
  for (uint64_t offset = 8; offset < 40; ++offset) {
    FlipByte(db_path + "/" + manifest, offset);
  }
  ASSERT_FALSE(DB::Open(Options(), db_path).ok());

  ToolResult r = RunKvtool({"repair", db_path});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("repaired " + db_path), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(manifest), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(db_path + "/lost/" + manifest));

  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(Options(), db_path);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 600; ++i) {
    std::string value;
    ASSERT_TRUE((*db)->Get(ReadOptions(), Key(i), &value).ok()) << Key(i);
    EXPECT_EQ(value, Value(i));
  }
}

TEST(KvtoolRepairTest, JsonListsWhatWasSetAside) {
  TempDir dir;
  const std::string db_path = dir.Sub("db");
  {
    std::unique_ptr<DB> db = OpenDb(db_path);
    ASSERT_NE(db, nullptr);
    PutRange(db.get(), 0, 10);
  }
  ToolResult r = RunKvtool({"repair", "--json", db_path});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["ok"], true);
  // A healthy database: only its old MANIFEST is set aside.
  ASSERT_EQ(j["set_aside"].size(), 1u) << r.out;
  EXPECT_TRUE(j["set_aside"][0].get<std::string>().starts_with("MANIFEST-"));

  // A second run lists only what it set aside itself.
  r = RunKvtool({"repair", "--json", db_path});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  j = ParseJson(r);
  ASSERT_EQ(j["set_aside"].size(), 1u) << r.out;
}

TEST(KvtoolRepairTest, FailuresExitOneNamingTheDatabase) {
  TempDir dir;
  const std::string missing = dir.Sub("nothing-here");
  ToolResult r = RunKvtool({"repair", missing});
  EXPECT_EQ(r.code, kDataError) << r.out << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;

  // An open database is refused, and left as it was.
  const std::string db_path = dir.Sub("db");
  std::unique_ptr<DB> db = OpenDb(db_path);
  ASSERT_NE(db, nullptr);
  PutRange(db.get(), 0, 10);
  r = RunKvtool({"repair", db_path});
  EXPECT_EQ(r.code, kDataError) << r.out << r.err;
  EXPECT_NE(r.err.find("lock"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_path + "/lost"));
}

}  // namespace
}  // namespace sift::test
