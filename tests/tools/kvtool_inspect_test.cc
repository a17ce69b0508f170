// kvtool info, sst, filter, wal and manifest on databases the engine made:
// the facts each must report, in text and in JSON.

#include <cmath>
#include <set>
#include <string>

#include "db/log_writer.h"
#include "db/write_batch_internal.h"
#include "filter/bloom_math.h"
#include "gtest/gtest.h"
#include "sift/env.h"
#include "tests/tools/kvtool_runner.h"

namespace sift::test {
namespace {

constexpr int kFlushed = 500;  // keys in the one table
constexpr int kInLog = 20;     // keys written after the flush

class KvtoolInspectTest : public ::testing::TestWithParam<FilterKind> {
 protected:
  void SetUp() override {
    db_ = dir_.Sub("db");
    Options options;
    options.filter_kind = GetParam();
    options.filter_bits_per_key = 10.0;
    std::unique_ptr<DB> db = OpenDb(db_, options);
    ASSERT_NE(db, nullptr);
    PutRange(db.get(), 0, kFlushed);
    ASSERT_TRUE(db->Flush().ok());
    PutRange(db.get(), kFlushed, kFlushed + kInLog);
    ASSERT_TRUE(db->Delete(WriteOptions(), Key(3)).ok());
    const std::vector<std::string> tables = FilesWithSuffix(db_, ".sst");
    ASSERT_EQ(tables.size(), 1u);
    table_ = db_ + "/" + tables[0];
    const std::vector<std::string> logs = FilesWithSuffix(db_, ".log");
    ASSERT_FALSE(logs.empty());
    log_ = db_ + "/" + logs.back();
  }

  TempDir dir_;
  std::string db_;
  std::string table_;
  std::string log_;
};

TEST_P(KvtoolInspectTest, InfoReportsLevelsSequencesAndLogs) {
  ToolResult r = RunKvtool({"info", db_});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("MANIFEST-"), std::string::npos);
  EXPECT_NE(r.out.find(Key(0)), std::string::npos);  // the key range

  r = RunKvtool({"info", "--json", "--tables", db_});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = ParseJson(r);
  // Every write got one sequence number.
  EXPECT_EQ(j["last_sequence"], kFlushed + kInLog + 1);
  EXPECT_EQ(j["total"]["files"], 1);
  EXPECT_EQ(j["total"]["entries"], kFlushed);
  EXPECT_GT(j["total"]["filter_memory_bytes"].get<uint64_t>(),
            kFlushed * 10 / 8);
  int level_with_table = -1;
  for (const auto& level : j["levels"]) {
    if (level["files"] == 1) level_with_table = level["level"];
  }
  ASSERT_GE(level_with_table, 0);
  EXPECT_EQ(j["levels"][level_with_table]["smallest"], Key(0));
  EXPECT_EQ(j["levels"][level_with_table]["largest"], Key(kFlushed - 1));
  ASSERT_EQ(j["tables"].size(), 1u);
  EXPECT_EQ(j["tables"][0]["entries"], kFlushed);
  EXPECT_NEAR(j["tables"][0]["filter_bits_per_key"].get<double>(), 10.0, 1.0);
  // The unflushed writes are in a live log.
  uint64_t ops = 0;
  for (const auto& log : j["live_logs"]) ops += log["ops"].get<uint64_t>();
  EXPECT_EQ(ops, kInLog + 1u);
  EXPECT_TRUE(j["problems"].empty());
}

TEST_P(KvtoolInspectTest, SstShowsPropertiesBlocksAndEntries) {
  ToolResult r = RunKvtool({"sst", "--blocks", "--entries", table_});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // Entries are internal keys shown as user key @ seq : type.
  EXPECT_NE(r.out.find(Key(0) + " @ 1 : value\t" + Value(0)), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("format version 1"), std::string::npos);

  r = RunKvtool({"sst", "--json", "--blocks", "--entries", table_});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["format_version"], 1);
  EXPECT_EQ(j["properties"]["entries"], kFlushed);
  EXPECT_EQ(j["entries_read"], kFlushed);
  EXPECT_EQ(j["entries"].size(), static_cast<size_t>(kFlushed));
  EXPECT_EQ(j["properties"]["filter_keys"], kFlushed);
  EXPECT_EQ(j["properties"]["comparator"], "sift.InternalKeyComparator");
  std::set<std::string> kinds;
  uint64_t data_blocks = 0;
  for (const auto& b : j["blocks"]) {
    kinds.insert(b["kind"]);
    EXPECT_EQ(b["checksum_ok"], true);
    EXPECT_EQ(b["status"], "ok");
    if (b["kind"] == "data") ++data_blocks;
  }
  EXPECT_EQ(kinds,
            (std::set<std::string>{"data", "filter", "properties", "index"}));
  EXPECT_EQ(data_blocks, j["properties"]["data_blocks"].get<uint64_t>());
  EXPECT_EQ(j["index"]["data_blocks"], data_blocks);
  EXPECT_GT(data_blocks, 1u);  // 500 entries do not fit one 4 KiB block

  r = RunKvtool({"sst", "--json", "--entries", "--limit", "7", table_});
  j = ParseJson(r);
  EXPECT_EQ(j["entries"].size(), 7u);
  EXPECT_EQ(j["entries_truncated"], true);
}

TEST_P(KvtoolInspectTest, FilterParametersMatchTheOptions) {
  const FilterKind kind = GetParam();
  ToolResult r = RunKvtool({"filter", "--json", table_, "--probe", Key(7),
                            Key(123), "absent-1", "absent-2", "absent-3"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["known"], true);
  EXPECT_EQ(j["kind"], static_cast<int>(kind));
  EXPECT_EQ(j["num_keys"], kFlushed);
  EXPECT_EQ(j["num_probes"], NumProbesFor(kind, 10.0));
  EXPECT_GE(j["bits_per_key"].get<double>(), 10.0);
  EXPECT_LT(j["bits_per_key"].get<double>(), 12.0);
  EXPECT_EQ(j["configured_bits_per_key"], 10.0);
  const uint64_t bits = j["num_bits"];
  EXPECT_DOUBLE_EQ(j["theoretical_fpr"].get<double>(),
                   TheoreticalFpr(kind, bits, kFlushed, j["num_probes"]));
  EXPECT_GT(j["theoretical_fpr"].get<double>(), 0.001);
  EXPECT_LT(j["theoretical_fpr"].get<double>(), 0.03);
  EXPECT_GT(j["fill_ratio"].get<double>(), 0.3);
  EXPECT_LT(j["fill_ratio"].get<double>(), 0.7);
  EXPECT_GE(j["memory_bytes"].get<uint64_t>(), bits / 8);

  ASSERT_EQ(j["probes"].size(), 5u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(j["probes"][i]["may_match"], true);  // never a false negative
    EXPECT_EQ(j["probes"][i]["in_table"], true);
    EXPECT_EQ(j["probes"][i]["answer"], "possibly present");
  }
  for (int i = 2; i < 5; ++i) {
    EXPECT_EQ(j["probes"][i]["in_table"], false);
    if (j["probes"][i]["may_match"] == false) {
      EXPECT_EQ(j["probes"][i]["answer"], "definitely not present");
    }
  }

  r = RunKvtool({"filter", table_, "--probe", Key(7)});
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"" + Key(7) + "\": possibly present (in table: yes"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(kind == FilterKind::kBlockedBloom ? "blocked bloom"
                                                         : "standard bloom"),
            std::string::npos);
}

TEST_P(KvtoolInspectTest, FilterOfATableWithoutOne) {
  const std::string db = dir_.Sub("nofilter");
  Options options;
  options.filter_bits_per_key = 0;
  {
    std::unique_ptr<DB> opened = OpenDb(db, options);
    PutRange(opened.get(), 0, 10);
    ASSERT_TRUE(opened->Flush().ok());
  }
  const std::string table = db + "/" + FilesWithSuffix(db, ".sst")[0];
  ToolResult r = RunKvtool({"filter", "--json", table});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(ParseJson(r)["filter"].is_null());
}

TEST_P(KvtoolInspectTest, WalShowsBatchesWithSequences) {
  ToolResult r = RunKvtool({"wal", "--json", log_});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["ok"], true);
  // The flush started this log: a link record to the log before it, then
  // one batch per Put/Delete.
  EXPECT_EQ(j["num_records"], kInLog + 2);
  EXPECT_EQ(j["num_ops"], kInLog + 1);
  EXPECT_EQ(j["first_sequence"], kFlushed + 1);
  EXPECT_EQ(j["last_sequence"], kFlushed + kInLog + 1);
  const auto& link = j["records"][0];
  EXPECT_EQ(link["offset"], 0);
  EXPECT_GT(link["link"]["previous_log"].get<uint64_t>(), 0u);
  EXPECT_EQ(link["link"]["previous_records"], kFlushed);
  const auto& first = j["records"][1];
  EXPECT_GT(first["offset"].get<uint64_t>(), 0u);
  EXPECT_EQ(first["ops"][0]["op"], "put");
  EXPECT_EQ(first["ops"][0]["key"], Key(kFlushed));
  EXPECT_EQ(first["ops"][0]["value"], Value(kFlushed));
  const auto& last = j["records"][kInLog + 1];
  EXPECT_EQ(last["ops"][0]["op"], "delete");
  EXPECT_EQ(last["ops"][0]["key"], Key(3));

  r = RunKvtool({"wal", log_});
  EXPECT_NE(r.out.find("delete \"" + Key(3) + "\""), std::string::npos);
  EXPECT_NE(r.out.find("offset 0: link to log "), std::string::npos) << r.out;
}

TEST_P(KvtoolInspectTest, ManifestDecodesEdits) {
  ToolResult r = RunKvtool({"manifest", "--json", db_});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["ok"], true);
  EXPECT_GE(j["num_edits"].get<int>(), 1);
  EXPECT_EQ(j["edits"].size(), j["num_edits"].get<size_t>());
  EXPECT_EQ(j["final"]["comparator"], "sift.BytewiseComparator");
  int tables = 0;
  for (const auto& level : j["final"]["levels"]) {
    for (const auto& f : level) {
      ++tables;
      EXPECT_EQ(f["smallest"], Key(0) + " @ 1 : value");
    }
  }
  EXPECT_EQ(tables, 1);
  r = RunKvtool({"manifest", db_});
  EXPECT_NE(r.out.find("add table"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Layouts, KvtoolInspectTest,
                         ::testing::Values(FilterKind::kBlockedBloom,
                                           FilterKind::kStandardBloom));

// Logs written record by record: a torn tail is reported but is not damage;
// a bad checksum in the middle is damage, at its offset.
TEST(KvtoolWalTest, TornTailAndDamageAtTheirOffsets) {
  TempDir dir;
  const std::string path = dir.Sub("000001.log");
  std::vector<uint64_t> offsets;
  {
    auto file = Env::Default()->NewWritableFile(path);
    ASSERT_TRUE(file.ok());
    log::Writer writer(file->get());
    uint64_t offset = 0;
    for (int i = 0; i < 5; ++i) {
      WriteBatch batch;
      batch.Put(Key(i), std::string(100, 'x'));
      WriteBatchInternal::SetSequence(&batch, 10 * i + 1);
      offsets.push_back(offset);
      ASSERT_TRUE(writer.AddRecord(WriteBatchInternal::Contents(&batch)).ok());
      offset += log::kHeaderSize + WriteBatchInternal::ByteSize(&batch);
    }
    ASSERT_TRUE((*file)->Close().ok());
  }
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 30);
  ToolResult r = RunKvtool({"wal", "--json", path});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = ParseJson(r);
  EXPECT_EQ(j["num_records"], 4);
  ASSERT_EQ(j["problems"].size(), 1u);
  EXPECT_EQ(j["problems"][0]["torn_tail"], true);
  EXPECT_EQ(j["problems"][0]["offset"], offsets[4]);

  FlipByte(path, offsets[2] + log::kHeaderSize + 20);
  r = RunKvtool({"wal", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("DAMAGE at offset " + std::to_string(offsets[2]) +
                       ": checksum mismatch"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find(path), std::string::npos);
  // The records around the damage are still shown.
  EXPECT_NE(r.out.find("batch seq 31..31"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sift::test
