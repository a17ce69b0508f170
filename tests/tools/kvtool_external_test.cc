// kvtool on tables written by TableFileWriter: `sst` and `filter` read them
// like any table, and `verify` accepts a database that ingested them (their
// keys stored at sequence 0, the MANIFEST giving the global sequence).

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/table_file_writer.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

TEST(KvtoolExternalTest, SstFilterAndVerifyReadIngestedTables) {
  TempDir dir;
  const std::string path = dir.Sub("external.sst");
  Options options;
  {
    auto w = TableFileWriter::Open(options, path);
    ASSERT_TRUE(w.ok()) << w.status();
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE((*w)->Put(Key(i), "value").ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }
  ToolResult r = RunKvtool({"sst", path});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(Key(0)), std::string::npos);
  r = RunKvtool({"filter", path, "--probe", Key(7)});
  ASSERT_EQ(r.code, 0) << r.out << r.err;

  const std::string db_path = dir.Sub("db");
  std::unique_ptr<DB> db = OpenDb(db_path, options);
  ASSERT_NE(db, nullptr);
  PutRange(db.get(), 0, 100);
  ASSERT_TRUE(db->Flush().ok());
  ASSERT_TRUE(db->IngestExternalFiles({path}, IngestOptions()).ok());
  db.reset();
  r = RunKvtool({"verify", db_path});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace sift::test
