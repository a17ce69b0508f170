// kvtool checkpoint, ingest, dump and load on real databases.

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "sift/iterator.h"
#include "sift/table_file_writer.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

using Model = std::map<std::string, std::string>;

Model Contents(const std::string& path) {
  std::unique_ptr<DB> db = OpenDb(path);
  Model m;
  if (db == nullptr) return m;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    m[std::string(it->key())] = std::string(it->value());
  }
  EXPECT_TRUE(it->status().ok()) << it->status();
  return m;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A database with binary keys and values, deletions, tables and WAL data.
Model MakeSource(const std::string& path) {
  Model model;
  std::unique_ptr<DB> db = OpenDb(path);
  for (int i = 0; i < 300; ++i) {
    EXPECT_TRUE(db->Put(WriteOptions(), Key(i), Value(i)).ok());
    model[Key(i)] = Value(i);
  }
  EXPECT_TRUE(db->Flush().ok());
  const std::string binary_key("\x00\xff\t\n\\", 5);
  const std::string binary_value("tab\there\nnul\0end", 16);
  EXPECT_TRUE(db->Put(WriteOptions(), binary_key, binary_value).ok());
  model[binary_key] = binary_value;
  for (int i = 0; i < 300; i += 7) {
    EXPECT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
    model.erase(Key(i));
  }
  return model;
}

TEST(KvtoolScaleOutTest, TextDumpLoadRoundTrip) {
  TempDir dir;
  const Model model = MakeSource(dir.Sub("src"));

  ToolResult r =
      RunKvtool({"dump", "--json", dir.Sub("src"), "--out", dir.Sub("d.txt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["entries"], model.size());
  const std::string text = ReadWholeFile(dir.Sub("d.txt"));
  EXPECT_EQ(text.substr(0, 12), "sift-dump 1\n");
  EXPECT_NE(
      text.find("\\x00\\xff\\x09\\x0a\\\\\ttab\\x09here\\x0anul\\x00end\n"),
      std::string::npos)
      << text.substr(0, 200);

  // A dump written by dump is sorted: it loads as one ingested table.
  r = RunKvtool(
      {"load", "--json", "--create", dir.Sub("dst"), dir.Sub("d.txt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["method"], "ingest");
  EXPECT_EQ(Contents(dir.Sub("dst")), model);
  EXPECT_TRUE(FilesWithSuffix(dir.Sub("dst"), ".tmp").empty());

  // A key range: [from, to).
  r = RunKvtool({"dump", dir.Sub("src"), "--from", Key(100), "--to", Key(200),
                 "--out", dir.Sub("range.txt")});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(
      RunKvtool({"load", "--create", dir.Sub("range"), dir.Sub("range.txt")})
          .code,
      0);
  Model range;
  for (const auto& [k, v] : model) {
    if (k >= Key(100) && k < Key(200)) range[k] = v;
  }
  EXPECT_EQ(Contents(dir.Sub("range")), range);

  // dump never overwrites.
  r = RunKvtool({"dump", dir.Sub("src"), "--out", dir.Sub("d.txt")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
}

TEST(KvtoolScaleOutTest, SortedAndUnsortedLoads) {
  TempDir dir;
  // Unsorted, with a repeated key: written in file order, the last wins.
  WriteText(dir.Sub("unsorted.txt"),
            "sift-dump 1\nb\t2\na\t1\nb\tlast\nc\\x00\t\\\\\n");
  ToolResult r = RunKvtool(
      {"load", "--json", "--create", dir.Sub("db"), dir.Sub("unsorted.txt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["method"], "write");
  EXPECT_EQ(ParseJson(r)["entries"], 4);
  EXPECT_EQ(Contents(dir.Sub("db")),
            (Model{{"a", "1"}, {"b", "last"}, {std::string("c\0", 2), "\\"}}));

  // Sorted: one table, whose values shadow what the database held.
  WriteText(dir.Sub("sorted.txt"), "sift-dump 1\na\tnew\nd\t4\n");
  r = RunKvtool({"load", "--json", dir.Sub("db"), dir.Sub("sorted.txt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["method"], "ingest");
  EXPECT_EQ(Contents(dir.Sub("db")), (Model{{"a", "new"},
                                            {"b", "last"},
                                            {std::string("c\0", 2), "\\"},
                                            {"d", "4"}}));
}

TEST(KvtoolScaleOutTest, BadDumpsLoadNothingAndNameTheLine) {
  TempDir dir;
  ASSERT_EQ(RunKvtool({"put", "--create", dir.Sub("db"), "keep", "1"}).code, 0);
  const Model before = Contents(dir.Sub("db"));
  struct Case {
    std::string text;
    std::string expect;
  };
  for (const Case& c : {
           Case{"sift-dump 1\na\t1\nno tab here\n", ":3: no tab"},
           Case{"sift-dump 1\na\t1\tx\n", ":2: column 4: a second tab"},
           Case{"sift-dump 1\na\t1\nb\\q\t2\n", ":3: column 2"},
           Case{"sift-dump 1\na\t1\nb\\x4\t2\n", ":3: column 2"},
           Case{"sift-dump 1\na\t1\nb\t2", ":3: the last line has no newline"},
           Case{"sift-dump 1\nraw\x01\t2\n", ":2: column 4: byte 0x01"},
       }) {
    WriteText(dir.Sub("bad.txt"), c.text);
    ToolResult r = RunKvtool({"load", dir.Sub("db"), dir.Sub("bad.txt")});
    EXPECT_EQ(r.code, 1) << c.text;
    EXPECT_NE(r.err.find(dir.Sub("bad.txt") + c.expect), std::string::npos)
        << c.text << " -> " << r.err;
  }
  // Neither a dump nor a table.
  WriteText(dir.Sub("junk"), "hello, this is not a table at all........\n");
  ToolResult r = RunKvtool({"load", dir.Sub("db"), dir.Sub("junk")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is not a text dump"), std::string::npos) << r.err;
  r = RunKvtool({"load", dir.Sub("db"), dir.Sub("missing")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(dir.Sub("missing")), std::string::npos) << r.err;
  EXPECT_EQ(Contents(dir.Sub("db")), before);
}

TEST(KvtoolScaleOutTest, TableDumpAndIngest) {
  TempDir dir;
  const Model model = MakeSource(dir.Sub("src"));
  ToolResult r = RunKvtool({"dump", dir.Sub("src"), "--format", "table",
                            "--out", dir.Sub("all.sst")});
  ASSERT_EQ(r.code, 0) << r.err;
  // An ordinary table: kvtool sst reads it.
  r = RunKvtool({"sst", "--json", dir.Sub("all.sst")});
  ASSERT_EQ(r.code, 0) << r.err;

  // load of a table ingests a copy; the file stays.
  r = RunKvtool(
      {"load", "--json", "--create", dir.Sub("a"), dir.Sub("all.sst")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["method"], "ingest");
  EXPECT_EQ(Contents(dir.Sub("a")), model);
  EXPECT_FALSE(ReadWholeFile(dir.Sub("all.sst")).empty());

  // Tables built with TableFileWriter, ingested in one call with --move.
  for (int part = 0; part < 2; ++part) {
    absl::StatusOr<std::unique_ptr<TableFileWriter>> w = TableFileWriter::Open(
        Options(), dir.Sub("part" + std::to_string(part) + ".sst"));
    ASSERT_TRUE(w.ok()) << w.status();
    for (int i = part * 100; i < part * 100 + 100; ++i) {
      ASSERT_TRUE((*w)->Put("p" + Key(i), Value(i)).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  r = RunKvtool({"ingest", "--json", "--create", "--move", dir.Sub("b"),
                 dir.Sub("part0.sst"), dir.Sub("part1.sst")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["files"], 2);
  Model parts;
  for (int i = 0; i < 200; ++i) parts["p" + Key(i)] = Value(i);
  EXPECT_EQ(Contents(dir.Sub("b")), parts);
  // verify applies the ingested tables' global sequence numbers, in the
  // database and in a checkpoint of it.
  r = RunKvtool({"verify", dir.Sub("b")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_EQ(RunKvtool({"checkpoint", dir.Sub("b"), dir.Sub("b-ckpt")}).code, 0);
  r = RunKvtool({"verify", dir.Sub("b-ckpt")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(Contents(dir.Sub("b-ckpt")), parts);

  // An empty range writes no table.
  r = RunKvtool({"dump", dir.Sub("src"), "--from", "zz", "--format", "table",
                 "--out", dir.Sub("empty.sst")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no entries"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("empty.sst")));
}

TEST(KvtoolScaleOutTest, CheckpointThenVerify) {
  TempDir dir;
  const Model model = MakeSource(dir.Sub("db"));  // data in tables and WAL
  ToolResult r = RunKvtool({"checkpoint", dir.Sub("db"), dir.Sub("ckpt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(dir.Sub("ckpt")), std::string::npos) << r.out;
  r = RunKvtool({"verify", dir.Sub("ckpt")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(Contents(dir.Sub("ckpt")), model);
  // The source is unchanged and keeps working.
  EXPECT_EQ(Contents(dir.Sub("db")), model);

  r = RunKvtool({"checkpoint", "--json", dir.Sub("db"), dir.Sub("ckpt")});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(ParseJson(r)["code"], "ALREADY_EXISTS");
  r = RunKvtool({"checkpoint", dir.Sub("nodb"), dir.Sub("ckpt2")});
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("ckpt2")));
}

}  // namespace
}  // namespace sift::test
