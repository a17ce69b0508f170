// kvtool get, put, delete, scan and compact on real databases, including
// reads of a database another DB object has open.

#include <string>

#include "gtest/gtest.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

TEST(KvtoolDataTest, PutGetDeleteRoundTrip) {
  TempDir dir;
  const std::string db = dir.Sub("db");
  EXPECT_EQ(RunKvtool({"put", db, "k", "v"}).code, 1);  // no database yet
  EXPECT_EQ(RunKvtool({"put", "--create", db, "apple", "red"}).code, 0);
  EXPECT_EQ(RunKvtool({"put", db, "banana", "yellow"}).code, 0);

  ToolResult r = RunKvtool({"get", db, "apple"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "red\n");

  EXPECT_EQ(RunKvtool({"delete", db, "apple"}).code, 0);
  r = RunKvtool({"get", db, "apple"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
  r = RunKvtool({"get", "--json", db, "apple"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(ParseJson(r)["found"], false);

  r = RunKvtool({"get", "--json", db, "banana"});
  EXPECT_EQ(r.code, 0);
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["found"], true);
  EXPECT_EQ(j["value"], "yellow");

  // And the engine sees what kvtool wrote.
  std::unique_ptr<DB> opened = OpenDb(db);
  std::string value;
  EXPECT_TRUE(opened->Get(ReadOptions(), "banana", &value).ok());
  EXPECT_EQ(value, "yellow");
  EXPECT_TRUE(absl::IsNotFound(opened->Get(ReadOptions(), "apple", &value)));
}

TEST(KvtoolDataTest, BinaryKeysAndValuesPrintSafely) {
  TempDir dir;
  const std::string db = dir.Sub("db");
  // "\x00\xff" -> "tab\there\n" given in hex.
  EXPECT_EQ(RunKvtool({"put", "--create", "--hex", db, "00ff",
                       "7461620968657265"
                       "0a"})
                .code,
            0);
  ToolResult r = RunKvtool({"get", "--hex", db, "00ff"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "74616209686572650a\n");
  // Without --hex, unprintable bytes are escaped, the line stays one line.
  r = RunKvtool({"scan", db});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "\\x00\\xff\ttab\\x09here\\x0a\n");
}

TEST(KvtoolDataTest, ScanRangesLimitsAndReverse) {
  TempDir dir;
  const std::string db = dir.Sub("db");
  {
    std::unique_ptr<DB> opened = OpenDb(db);
    PutRange(opened.get(), 0, 50);
    ASSERT_TRUE(opened->Flush().ok());
    PutRange(opened.get(), 50, 100);  // these stay in the log
    ASSERT_TRUE(opened->Delete(WriteOptions(), Key(10)).ok());
  }
  ToolResult r = RunKvtool({"scan", "--json", db});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["count"], 99);
  EXPECT_EQ(j["entries"][0]["key"], Key(0));
  EXPECT_EQ(j["entries"][0]["value"], Value(0));
  EXPECT_EQ(j["entries"][10]["key"], Key(11));  // Key(10) was deleted

  r = RunKvtool({"scan", db, "--from", Key(20), "--to", Key(25)});
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(r.out, Key(20) + "\t" + Value(20) + "\n" + Key(21) + "\t" +
                       Value(21) + "\n" + Key(22) + "\t" + Value(22) + "\n" +
                       Key(23) + "\t" + Value(23) + "\n" + Key(24) + "\t" +
                       Value(24) + "\n");

  r = RunKvtool(
      {"scan", "--json", db, "--reverse", "--to", Key(60), "--limit", "3"});
  ASSERT_EQ(r.code, 0);
  j = ParseJson(r);
  ASSERT_EQ(j["count"], 3);
  EXPECT_EQ(j["truncated"], true);
  EXPECT_EQ(j["entries"][0]["key"], Key(59));
  EXPECT_EQ(j["entries"][2]["key"], Key(57));

  r = RunKvtool({"scan", "--json", db, "--reverse", "--from", Key(98)});
  j = ParseJson(r);
  ASSERT_EQ(j["count"], 2);
  EXPECT_EQ(j["entries"][0]["key"], Key(99));
}

// get and scan read the files without opening the database: they work while
// a DB object holds it (and its LOCK), see its unflushed writes through the
// log, and change nothing.
TEST(KvtoolDataTest, ReadsWorkWhileTheDatabaseIsOpen) {
  TempDir dir;
  const std::string db = dir.Sub("db");
  std::unique_ptr<DB> opened = OpenDb(db);
  PutRange(opened.get(), 0, 30);
  ASSERT_TRUE(opened->Flush().ok());
  PutRange(opened.get(), 30, 40);
  ASSERT_TRUE(opened->Put(WriteOptions(), Key(5), "new").ok());

  const auto before = Snapshot(db);
  ToolResult r = RunKvtool({"get", db, Key(35)});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, Value(35) + "\n");
  r = RunKvtool({"get", db, Key(5)});
  EXPECT_EQ(r.out, "new\n");
  r = RunKvtool({"scan", "--json", db});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["count"], 40);
  for (const char* command : {"info", "manifest", "verify"}) {
    r = RunKvtool({command, db});
    EXPECT_EQ(r.code, 0) << command << "\n" << r.out << r.err;
  }
  EXPECT_EQ(Snapshot(db), before);

  // Writing needs the LOCK, which the open DB holds.
  r = RunKvtool({"put", db, "k", "v"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("LOCK"), std::string::npos) << r.err;
}

TEST(KvtoolDataTest, CompactMovesTablesDown) {
  TempDir dir;
  const std::string db = dir.Sub("db");
  {
    std::unique_ptr<DB> opened = OpenDb(db);
    for (int round = 0; round < 3; ++round) {
      PutRange(opened.get(), round * 10, round * 10 + 20);
      ASSERT_TRUE(opened->Flush().ok());
    }
  }
  ToolResult r = RunKvtool({"compact", "--json", db});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["files_per_level_after"][0], 0);
  int below = 0;
  for (int level = 1; level < 7; ++level) {
    below += j["files_per_level_after"][level].get<int>();
  }
  EXPECT_GE(below, 1);
  r = RunKvtool({"scan", "--json", db});
  EXPECT_EQ(ParseJson(r)["count"], 40);
}

}  // namespace
}  // namespace sift::test
