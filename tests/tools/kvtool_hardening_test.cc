// Regression tests for kvtool defects a new user found (issue 14): damage
// answered as "not found", an empty MANIFEST passing, a negative count of
// stray bytes, logs torn inside a header, and help/--version.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "db/log_format.h"
#include "gtest/gtest.h"
#include "table/format.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

constexpr int kDataError = 1;

// A database whose keys 0..99 are in one table.
class KvtoolDamageTest : public testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.Sub("db");
    std::unique_ptr<DB> db = OpenDb(db_);
    ASSERT_NE(db, nullptr);
    PutRange(db.get(), 0, 100);
    ASSERT_TRUE(db->Flush().ok());
  }

  std::string OnlyFile(const std::string& suffix) {
    std::vector<std::string> names = FilesWithSuffix(db_, suffix);
    EXPECT_EQ(names.size(), 1u) << suffix;
    return names.empty() ? "" : db_ + "/" + names[0];
  }

  TempDir dir_;
  std::string db_;
};

// Open refuses the database with DataLoss; get must not answer "not found".
TEST_F(KvtoolDamageTest, GetReportsAMissingTableAsDamage) {
  const std::string table = OnlyFile(".sst");
  ASSERT_EQ(RunKvtool({"get", db_, Key(5)}).out, Value(5) + "\n");
  std::filesystem::remove(table);
  ToolResult r = RunKvtool({"get", db_, Key(5)});
  EXPECT_EQ(r.code, kDataError) << r.out << r.err;
  EXPECT_EQ(r.err.find("not found"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::filesystem::path(table).filename().string()),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
  // scan says the same.
  r = RunKvtool({"scan", db_});
  EXPECT_EQ(r.code, kDataError) << r.out << r.err;
}

// An empty MANIFEST is not a database: info and manifest fail like verify
// and Open.
TEST_F(KvtoolDamageTest, EmptyManifestIsAnError) {
  std::vector<std::string> manifests;
  for (const auto& e : std::filesystem::directory_iterator(db_)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("MANIFEST-", 0) == 0) manifests.push_back(e.path());
  }
  ASSERT_EQ(manifests.size(), 1u);
  std::filesystem::resize_file(manifests[0], 0);
  for (const char* command : {"info", "manifest", "verify"}) {
    ToolResult r = RunKvtool({command, db_});
    EXPECT_EQ(r.code, kDataError) << command << ": " << r.out << r.err;
  }
  ToolResult r = RunKvtool({"manifest", db_});
  EXPECT_NE(r.out.find("no edit sets the comparator"), std::string::npos)
      << r.out;
  const std::string empty = dir_.Sub("empty");
  std::ofstream(empty).close();
  r = RunKvtool({"manifest", db_, "--file", empty});
  EXPECT_EQ(r.code, kDataError) << r.out << r.err;
}

// A table with bytes cut out before its footer: its blocks end past the
// footer. Reported as such, never as a negative count of stray bytes.
TEST_F(KvtoolDamageTest, TruncatedTableHasNoNegativeStrayBytes) {
  const std::string table = OnlyFile(".sst");
  std::string bytes = ReadWholeFile(table);
  constexpr size_t kFooter = Footer::kEncodedLength;
  ASSERT_GT(bytes.size(), kFooter + 200);
  bytes.erase(bytes.size() - kFooter - 100, 100);
  std::ofstream(table, std::ios::binary | std::ios::trunc) << bytes;
  ToolResult r = RunKvtool({"sst", "--blocks", table});
  EXPECT_EQ(r.code, kDataError) << r.out << r.err;
  EXPECT_EQ(r.out.find("-100 stray"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100 bytes past the footer"), std::string::npos)
      << r.out;
}

// A WAL cut inside the 7-byte header of its last record is the same torn
// tail as one cut after it: a warning at the record's offset, exit 0.
TEST_F(KvtoolDamageTest, LogCutInsideAHeaderIsATornTail) {
  {
    std::unique_ptr<DB> db = OpenDb(db_);
    ASSERT_NE(db, nullptr);
    PutRange(db.get(), 100, 103);
  }
  const std::string log = OnlyFile(".log");
  const std::string whole = ReadWholeFile(log);
  ASSERT_FALSE(whole.empty());
  // Offsets of the records (single fragments in one block).
  std::vector<size_t> starts;
  for (size_t p = 0; p + log::kHeaderSize <= whole.size();) {
    starts.push_back(p);
    p += log::kHeaderSize +
         (static_cast<uint8_t>(whole[p + 4]) |
          static_cast<size_t>(static_cast<uint8_t>(whole[p + 5])) << 8);
  }
  ASSERT_EQ(starts.size(), 3u);
  for (size_t keep : {size_t{1}, size_t{6}, size_t{7}, size_t{12}}) {
    SCOPED_TRACE(keep);
    std::ofstream(log, std::ios::binary | std::ios::trunc)
        << whole.substr(0, starts[2] + keep);
    ToolResult r = RunKvtool({"wal", "--json", log});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    nlohmann::json j = ParseJson(r);
    EXPECT_EQ(j["num_records"], 2);
    ASSERT_EQ(j["problems"].size(), 1u) << r.out;
    EXPECT_EQ(j["problems"][0]["torn_tail"], true);
    EXPECT_EQ(j["problems"][0]["offset"], starts[2]);
    r = RunKvtool({"verify", "--json", db_});
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    j = ParseJson(r);
    EXPECT_EQ(j["warnings"].size(), 1u) << r.out;
  }
}

TEST(KvtoolHelpTest, HelpAndVersion) {
  ToolResult r = RunKvtool({"help"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("verify"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("required"), std::string::npos) << r.err;
  r = RunKvtool({"help", "wal"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--summary"), std::string::npos) << r.out;
  EXPECT_EQ(RunKvtool({"help", "no-such-command"}).code, 2);
  r = RunKvtool({"--version"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kvtool (sift) "), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("required"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sift::test
