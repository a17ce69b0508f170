// kvtool's command line: usage errors, help, and files that are missing, not
// sift's, or cut short.

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

constexpr int kUsage = 2;
constexpr int kDataError = 1;

TEST(KvtoolCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunKvtool({}).code, kUsage);
  EXPECT_EQ(RunKvtool({"no-such-command"}).code, kUsage);
  EXPECT_EQ(RunKvtool({"get"}).code, kUsage);  // DB and KEY missing
  EXPECT_EQ(RunKvtool({"put", "/tmp/x", "k"}).code, kUsage);  // VALUE missing
  EXPECT_EQ(RunKvtool({"scan", "/tmp/x", "--bogus"}).code, kUsage);
  EXPECT_EQ(RunKvtool({"scan", "/tmp/x", "--limit", "many"}).code, kUsage);
  // An odd number of hex digits is a usage error too, reported in one line.
  ToolResult r = RunKvtool({"get", "--hex", "/tmp/x", "abc"});
  EXPECT_EQ(r.code, kUsage);
  EXPECT_NE(r.err.find("odd number"), std::string::npos) << r.err;
}

TEST(KvtoolCliTest, EveryCommandHasHelp) {
  for (const char* command :
       {"get", "put", "delete", "scan", "compact", "info", "sst", "filter",
        "wal", "manifest", "verify", "repair"}) {
    ToolResult r = RunKvtool({command, "--help"});
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_NE(r.out.find("--json"), std::string::npos) << command << r.out;
  }
  ToolResult r = RunKvtool({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("verify"), std::string::npos);
}

// One line on stderr naming the path, exit 1, never a crash.
void ExpectCleanFailure(const ToolResult& r, const std::string& path) {
  EXPECT_EQ(r.code, kDataError) << r.out << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(KvtoolCliTest, MissingPathsFailCleanly) {
  TempDir dir;
  const std::string missing = dir.Sub("nothing-here");
  for (const char* command : {"info", "manifest", "verify", "scan"}) {
    SCOPED_TRACE(command);
    ExpectCleanFailure(RunKvtool({command, missing}), missing);
  }
  ExpectCleanFailure(RunKvtool({"get", missing, "k"}), missing);
  for (const char* command : {"sst", "filter", "wal"}) {
    SCOPED_TRACE(command);
    ExpectCleanFailure(RunKvtool({command, missing + "/000001.sst"}),
                       missing + "/000001.sst");
  }
  // A directory that is not a database.
  ExpectCleanFailure(RunKvtool({"info", dir.path()}), dir.path());
  // JSON mode still says what went wrong, as JSON.
  ToolResult r = RunKvtool({"info", "--json", missing});
  EXPECT_EQ(r.code, kDataError);
  nlohmann::json j = ParseJson(r);
  EXPECT_TRUE(j.contains("error"));
  EXPECT_EQ(j["code"], "NOT_FOUND");
}

TEST(KvtoolCliTest, ForeignAndTruncatedFilesFailCleanly) {
  TempDir dir;
  const std::string text = dir.Sub("notes.txt");
  {
    std::ofstream out(text);
    for (int i = 0; i < 200; ++i)
      out << "this is not a sift file, line " << i << "\n";
  }
  ExpectCleanFailure(RunKvtool({"sst", text}), text);
  ExpectCleanFailure(RunKvtool({"filter", text}), text);
  ToolResult wal = RunKvtool({"wal", text});
  EXPECT_EQ(wal.code, kDataError);
  EXPECT_NE(wal.out.find("not a sift log"), std::string::npos) << wal.out;

  // A real table cut short, and one cut to less than a footer.
  const std::string db_path = dir.Sub("db");
  {
    std::unique_ptr<DB> db = OpenDb(db_path);
    PutRange(db.get(), 0, 100);
    ASSERT_TRUE(db->Flush().ok());
  }
  const std::vector<std::string> tables = FilesWithSuffix(db_path, ".sst");
  ASSERT_EQ(tables.size(), 1u);
  const std::string table = db_path + "/" + tables[0];
  const auto size = std::filesystem::file_size(table);
  std::filesystem::resize_file(table, size - 10);
  ExpectCleanFailure(RunKvtool({"sst", table}), table);
  std::filesystem::resize_file(table, 20);
  ExpectCleanFailure(RunKvtool({"sst", table}), table);
  ExpectCleanFailure(RunKvtool({"filter", table, "--probe", "x"}), table);
  std::filesystem::resize_file(table, 0);
  ExpectCleanFailure(RunKvtool({"sst", table}), table);
}

}  // namespace
}  // namespace sift::test
