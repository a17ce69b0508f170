// kvtool verify: 0 on a healthy database; 1, naming the file (and offset),
// once a byte of a table or a log is flipped or the MANIFEST and the files
// disagree.

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "db/log_writer.h"
#include "db/wal_link.h"
#include "gtest/gtest.h"
#include "sift/env.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

class KvtoolVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.Sub("db");
    std::unique_ptr<DB> db = OpenDb(db_);
    ASSERT_NE(db, nullptr);
    PutRange(db.get(), 0, 300);
    ASSERT_TRUE(db->Flush().ok());
    PutRange(db.get(), 300, 320);  // left in the log
  }

  // Writes the log after the database's only one, holding `records` (link
  // records, say), as a memtable switch would have started it. Returns its
  // path.
  std::string WriteLaterLog(const std::vector<std::string>& records) {
    const uint64_t number = OnlyLogNumber();
    char later[32];
    std::snprintf(later, sizeof(later), "/%06llu.log",
                  static_cast<unsigned long long>(number + 1));
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        Env::Default()->NewWritableFile(db_ + later);
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return "";
    log::Writer writer(file->get());
    for (const std::string& record : records) {
      EXPECT_TRUE(writer.AddRecord(record).ok());
    }
    EXPECT_TRUE((*file)->Close().ok());
    return db_ + later;
  }

  // The number of the database's only log.
  uint64_t OnlyLogNumber() {
    return std::stoull(
        std::filesystem::path(OnlyFile(".log")).filename().string());
  }

  std::string OnlyFile(const std::string& suffix) {
    const std::vector<std::string> files = FilesWithSuffix(db_, suffix);
    EXPECT_EQ(files.size(), 1u) << suffix;
    return files.empty() ? "" : db_ + "/" + files[0];
  }

  TempDir dir_;
  std::string db_;
};

TEST_F(KvtoolVerifyTest, HealthyDatabasePasses) {
  ToolResult r = RunKvtool({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("OK: 0 error(s)"), std::string::npos) << r.out;

  r = RunKvtool({"verify", "--json", db_});
  EXPECT_EQ(r.code, 0);
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["ok"], true);
  EXPECT_TRUE(j["errors"].empty());
  EXPECT_EQ(j["checked"]["tables"], 1);
  EXPECT_EQ(j["checked"]["entries"], 300);
  // 20 batches after the link record that starts a log after a flush.
  EXPECT_EQ(j["checked"]["log_records"], 21);
  EXPECT_GE(j["checked"]["blocks"].get<int>(), 4);
}

TEST_F(KvtoolVerifyTest, FlippedTableByteIsFoundWithFileAndOffset) {
  const std::string table = OnlyFile(".sst");
  FlipByte(table, 10);  // inside the first data block, which starts at 0
  ToolResult r = RunKvtool({"verify", db_});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("ERROR: " + table + " at offset 0: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("checksum mismatch"), std::string::npos) << r.out;

  r = RunKvtool({"verify", "--json", db_});
  EXPECT_EQ(r.code, 1);
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["ok"], false);
  ASSERT_FALSE(j["errors"].empty());
  EXPECT_EQ(j["errors"][0]["file"], table);
  EXPECT_EQ(j["errors"][0]["offset"], 0);

  // sst on the same file agrees.
  r = RunKvtool({"sst", "--blocks", table});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("BAD"), std::string::npos) << r.out;
}

TEST_F(KvtoolVerifyTest, FlippedFooterByteIsFound) {
  const std::string table = OnlyFile(".sst");
  FlipByte(table, std::filesystem::file_size(table) - 20);
  ToolResult r = RunKvtool({"verify", db_});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("ERROR: " + table), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("footer"), std::string::npos) << r.out;
}

TEST_F(KvtoolVerifyTest, FlippedLogByteIsFoundWithFileAndOffset) {
  const std::string log = OnlyFile(".log");
  FlipByte(log, 12);  // inside the payload of the first record
  ToolResult r = RunKvtool({"verify", db_});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("ERROR: " + log + " at offset 0: checksum mismatch"),
            std::string::npos)
      << r.out;
}

TEST_F(KvtoolVerifyTest, TornLogTailIsAWarningOnly) {
  const std::string log = OnlyFile(".log");
  std::filesystem::resize_file(log, std::filesystem::file_size(log) - 3);
  ToolResult r = RunKvtool({"verify", "--json", db_});
  EXPECT_EQ(r.code, 0) << r.out;
  nlohmann::json j = ParseJson(r);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["file"], log);
  EXPECT_EQ(j["checked"]["log_records"], 20);  // the link and 19 batches
}

// A later log whose link says the log before it held more records than are
// there: a machine crash lost that log's unsynced tail. Open stops before the
// later log; verify warns (it is a crash, not damage) and exits 0.
TEST_F(KvtoolVerifyTest, UnsatisfiedLinkIsAWarningOnly) {
  std::string link;
  WalLink(OnlyLogNumber(), 30).EncodeTo(&link);  // the log holds 21
  const std::string later = WriteLaterLog({link});
  ASSERT_FALSE(later.empty());
  ToolResult r = RunKvtool({"verify", "--json", db_});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_TRUE(j["errors"].empty()) << r.out;
  ASSERT_EQ(j["warnings"].size(), 1u) << r.out;
  EXPECT_EQ(j["warnings"][0]["file"], later);
  EXPECT_NE(j["warnings"][0]["message"].get<std::string>().find(
                "which held 30 records when this log was started; only 21 "
                "are intact"),
            std::string::npos)
      << r.out;
}

// Only a memtable switch writes a link, as a log's first record: one anywhere
// else is damage, as Open's replay treats it.
TEST_F(KvtoolVerifyTest, LinkAfterTheStartOfALogIsAnError) {
  std::string link;
  WalLink(OnlyLogNumber(), 21).EncodeTo(&link);  // satisfied: the log holds 21
  const std::string later = WriteLaterLog({link, link});  // not a second time
  ASSERT_FALSE(later.empty());
  ToolResult r = RunKvtool({"verify", "--json", db_});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_TRUE(j["warnings"].empty()) << r.out;
  ASSERT_EQ(j["errors"].size(), 1u) << r.out;
  EXPECT_EQ(j["errors"][0]["file"], later);
  EXPECT_NE(j["errors"][0]["message"].get<std::string>().find(
                "WAL link record after the start of the log"),
            std::string::npos)
      << r.out;
}

TEST_F(KvtoolVerifyTest, MissingAndResizedTablesAreCrossChecked) {
  const std::string table = OnlyFile(".sst");
  std::filesystem::resize_file(table, std::filesystem::file_size(table) + 1);
  ToolResult r = RunKvtool({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(table + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("but the MANIFEST says"), std::string::npos) << r.out;

  std::filesystem::remove(table);
  r = RunKvtool({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(table + ": missing"), std::string::npos) << r.out;
}

TEST_F(KvtoolVerifyTest, DamagedManifestIsFound) {
  std::string name;
  for (const auto& entry : std::filesystem::directory_iterator(db_)) {
    const std::string n = entry.path().filename().string();
    if (n.rfind("MANIFEST-", 0) == 0) name = n;
  }
  ASSERT_FALSE(name.empty());
  FlipByte(db_ + "/" + name, 9);
  ToolResult r = RunKvtool({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("ERROR: " + db_ + "/" + name + " at offset 0"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace sift::test
