// RepairDB: a database whose MANIFEST, CURRENT, tables or WALs were damaged
// opens again after repair with every record that still read back, damaged
// files set aside in lost/ and the newest version of each key winning. Each
// test first checks that the damage shows (Open or a read fails), so it fails
// if repair did nothing.

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/table_file_writer.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/random.h"

namespace sift {
namespace {

using Model = std::map<std::string, std::string>;

constexpr char kDb[] = "/repairdb";

absl::StatusOr<std::string> ReadWholeFile(Env* env, const std::string& fname) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  std::string out;
  std::string scratch(1 << 16, '\0');
  while (true) {
    std::string_view got;
    if (absl::Status s = (*file)->Read(scratch.size(), &got, scratch.data());
        !s.ok()) {
      return s;
    }
    if (got.empty()) return out;
    out.append(got);
  }
}

absl::Status WriteWholeFile(Env* env, const std::string& fname,
                            std::string_view data) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(fname);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Append(data);
  if (s.ok()) s = (*file)->Sync();
  absl::Status close = (*file)->Close();
  return s.ok() ? close : s;
}

class RepairTest : public testing::Test {
 protected:
  RepairTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    // Small memtables: several tables from a few hundred writes.
    options_.write_buffer_size = 16 << 10;
  }
  ~RepairTest() override { db_.reset(); }

  absl::Status Open() {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, kDb);
    if (db.ok()) db_ = *std::move(db);
    return db.status();
  }
  void Close() { db_.reset(); }

  void Put(const std::string& key, const std::string& value) {
    ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
    model_[key] = value;
  }
  void Delete(const std::string& key) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
    model_.erase(key);
  }

  // Every entry through an iterator; the iterator's error fails the test.
  Model ReadAll() {
    Model out;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out[std::string(it->key())] = std::string(it->value());
    }
    EXPECT_TRUE(it->status().ok()) << it->status();
    return out;
  }

  // Both read paths agree with `expected`: a full scan, and a Get of each
  // key (point reads look at level-0 tables newest file first, so they
  // catch an order that the merging iterator would hide).
  void ExpectContents(const Model& expected) {
    EXPECT_EQ(ReadAll(), expected);
    for (const auto& [key, value] : expected) {
      std::string got;
      absl::Status s = db_->Get(ReadOptions(), key, &got);
      ASSERT_TRUE(s.ok()) << key << ": " << s;
      EXPECT_EQ(got, value) << key;
    }
  }

  // Files of `type` in the database directory, by number.
  std::vector<std::string> Files(FileType type) {
    std::vector<std::string> out;
    absl::StatusOr<std::vector<std::string>> children = env_->GetChildren(kDb);
    if (!children.ok()) return out;
    std::vector<std::pair<uint64_t, std::string>> found;
    for (const std::string& name : *children) {
      uint64_t number = 0;
      FileType t;
      if (ParseFileName(name, &number, &t) && t == type) {
        found.emplace_back(number, absl::StrCat(kDb, "/", name));
      }
    }
    std::sort(found.begin(), found.end());
    for (auto& [number, name] : found) out.push_back(name);
    return out;
  }

  std::vector<std::string> Lost() {
    absl::StatusOr<std::vector<std::string>> children =
        env_->GetChildren(absl::StrCat(kDb, "/lost"));
    if (!children.ok()) return {};
    std::sort(children->begin(), children->end());
    return *children;
  }

  static std::string Base(const std::string& path) {
    return path.substr(path.rfind('/') + 1);
  }

  void RemoveManifests() {
    std::vector<std::string> manifests = Files(FileType::kDescriptorFile);
    ASSERT_FALSE(manifests.empty());
    for (const std::string& m : manifests) {
      ASSERT_TRUE(env_->RemoveFile(m).ok());
    }
  }

  // Overwrite `n` bytes of `fname` at `offset` with a pattern no checksum
  // accepts.
  void Smash(const std::string& fname, size_t offset, size_t n) {
    absl::StatusOr<std::string> data = ReadWholeFile(env_.get(), fname);
    ASSERT_TRUE(data.ok()) << data.status();
    ASSERT_LE(offset + n, data->size()) << fname;
    for (size_t i = 0; i < n; ++i) (*data)[offset + i] ^= 0x5a;
    ASSERT_TRUE(WriteWholeFile(env_.get(), fname, *data).ok());
  }

  void Truncate(const std::string& fname, size_t size) {
    absl::StatusOr<std::string> data = ReadWholeFile(env_.get(), fname);
    ASSERT_TRUE(data.ok()) << data.status();
    ASSERT_LT(size, data->size());
    ASSERT_TRUE(WriteWholeFile(env_.get(), fname, data->substr(0, size)).ok());
  }

  absl::Status Repair() { return RepairDB(kDb, options_); }

  // Fill the database: `tables` flushed tables of `per_table` keys each
  // (key i of table t is "k<t><i>"), then `wal_only` more keys left in the
  // WAL, unflushed. Closes the database.
  void Fill(int tables, int per_table, int wal_only) {
    ASSERT_TRUE(Open().ok());
    for (int t = 0; t < tables; ++t) {
      for (int i = 0; i < per_table; ++i) {
        Put(absl::StrCat("k", t, "-", test::NumberKey(i, 6)),
            absl::StrCat("v", t, "-", i));
      }
      ASSERT_TRUE(db_->Flush().ok());
    }
    for (int i = 0; i < wal_only; ++i) {
      Put(absl::StrCat("w-", test::NumberKey(i, 6)), absl::StrCat("wal", i));
    }
    Close();
  }

  std::unique_ptr<Env> env_;
  Options options_;
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_F(RepairTest, ManifestDeletedBringsBackTablesAndWal) {
  Fill(/*tables=*/3, /*per_table=*/100, /*wal_only=*/50);
  RemoveManifests();
  absl::Status before = Open();
  ASSERT_FALSE(before.ok());
  EXPECT_TRUE(absl::IsDataLoss(before)) << before;

  ASSERT_TRUE(Repair().ok());
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
  EXPECT_TRUE(Lost().empty());  // nothing was damaged

  // The repaired database takes writes and survives a reopen.
  Put("after", "repair");
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
}

TEST_F(RepairTest, ManifestCorruptedIsSetAside) {
  Fill(3, 100, 20);
  std::vector<std::string> manifests = Files(FileType::kDescriptorFile);
  ASSERT_EQ(manifests.size(), 1u);
  absl::StatusOr<uint64_t> size = env_->GetFileSize(manifests[0]);
  ASSERT_TRUE(size.ok());
  Smash(manifests[0], 10, 20);
  ASSERT_FALSE(Open().ok());

  ASSERT_TRUE(Repair().ok());
  EXPECT_EQ(Lost(), std::vector<std::string>{Base(manifests[0])});
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
}

TEST_F(RepairTest, CurrentMissing) {
  Fill(2, 100, 20);
  ASSERT_TRUE(env_->RemoveFile(CurrentFileName(kDb)).ok());
  absl::Status before = Open();
  ASSERT_TRUE(absl::IsDataLoss(before)) << before;

  ASSERT_TRUE(Repair().ok());
  ASSERT_TRUE(env_->FileExists(CurrentFileName(kDb)));
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
}

TEST_F(RepairTest, CorruptedTableIsSetAsideAndTheRestComesBack) {
  Fill(3, 200, 0);
  std::vector<std::string> tables = Files(FileType::kTableFile);
  ASSERT_EQ(tables.size(), 3u);
  // The middle table loses a data block: its keys are "k1-...".
  Smash(tables[1], 100, 50);
  ASSERT_TRUE(Open().ok());
  {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    ASSERT_TRUE(absl::IsDataLoss(it->status())) << it->status();
  }
  Close();

  ASSERT_TRUE(Repair().ok());
  std::vector<std::string> lost = Lost();
  EXPECT_NE(std::find(lost.begin(), lost.end(), Base(tables[1])), lost.end());
  ASSERT_FALSE(env_->FileExists(tables[1]));
  ASSERT_TRUE(Open().ok());
  Model expected;
  for (const auto& [key, value] : model_) {
    if (!key.starts_with("k1-")) expected[key] = value;
  }
  ExpectContents(expected);
}

TEST_F(RepairTest, TruncatedTableIsSetAside) {
  Fill(2, 200, 10);
  std::vector<std::string> tables = Files(FileType::kTableFile);
  ASSERT_EQ(tables.size(), 2u);
  absl::StatusOr<uint64_t> size = env_->GetFileSize(tables[0]);
  ASSERT_TRUE(size.ok());
  Truncate(tables[0], *size / 2);
  RemoveManifests();
  ASSERT_FALSE(Open().ok());

  ASSERT_TRUE(Repair().ok());
  std::vector<std::string> lost = Lost();
  EXPECT_NE(std::find(lost.begin(), lost.end(), Base(tables[0])), lost.end());
  // What was kept and set aside is in the LOG.
  absl::StatusOr<std::string> log =
      ReadWholeFile(env_.get(), InfoLogFileName(kDb));
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("2 tables found, 1 kept"), std::string::npos) << *log;
  EXPECT_NE(log->find(absl::StrCat("set damaged table ", Base(tables[0]))),
            std::string::npos)
      << *log;

  ASSERT_TRUE(Open().ok());
  Model expected;
  for (const auto& [key, value] : model_) {
    if (!key.starts_with("k0-")) expected[key] = value;
  }
  ExpectContents(expected);
}

TEST_F(RepairTest, DamagedWalKeepsTheRecordsBeforeTheDamage) {
  constexpr int kRecords = 400;
  // Each write its own WAL record; far below the memtable size, so all of
  // them stay in the WAL.
  options_.write_buffer_size = 4 << 20;
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < kRecords; ++i) {
    Put(test::NumberKey(i, 6), std::string(40, 'a' + i % 26));
  }
  Close();
  std::vector<std::string> logs = Files(FileType::kLogFile);
  ASSERT_EQ(logs.size(), 1u);
  absl::StatusOr<uint64_t> size = env_->GetFileSize(logs[0]);
  ASSERT_TRUE(size.ok());
  // Damage the last fifth.
  Smash(logs[0], *size * 4 / 5, 8);
  RemoveManifests();
  ASSERT_FALSE(Open().ok());

  ASSERT_TRUE(Repair().ok());
  EXPECT_EQ(Lost(), std::vector<std::string>{Base(logs[0])});
  ASSERT_TRUE(Open().ok());
  const Model got = ReadAll();
  // A prefix of the writes, with the right values, ending near the damage.
  ASSERT_GT(got.size(), kRecords * 3 / 4);
  ASSERT_LT(got.size(), kRecords);
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string key = test::NumberKey(i, 6);
    ASSERT_TRUE(got.contains(key)) << key;
    EXPECT_EQ(got.at(key), model_.at(key));
  }
}

TEST_F(RepairTest, HealthyDatabaseKeepsEverything) {
  Fill(3, 100, 30);
  ASSERT_TRUE(Open().ok());
  Delete(absl::StrCat("k1-", test::NumberKey(5, 6)));
  Put(absl::StrCat("k2-", test::NumberKey(7, 6)), "rewritten");
  Close();
  std::vector<std::string> manifests = Files(FileType::kDescriptorFile);
  ASSERT_EQ(manifests.size(), 1u);

  ASSERT_TRUE(Repair().ok());
  // A new MANIFEST replaced the old one, which was set aside.
  std::vector<std::string> after = Files(FileType::kDescriptorFile);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0], manifests[0]);
  EXPECT_EQ(Lost(), std::vector<std::string>{Base(manifests[0])});
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(db_->Get(
      ReadOptions(), absl::StrCat("k1-", test::NumberKey(5, 6)), &value)));
  Close();

  // Repairing again changes nothing either; lost/ gains the second old
  // MANIFEST.
  ASSERT_TRUE(Repair().ok());
  EXPECT_EQ(Lost().size(), 2u);
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
}

TEST_F(RepairTest, MissingDirectoryIsAnError) {
  absl::Status s = RepairDB("/no/such/db", options_);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find("/no/such/db"), std::string_view::npos) << s;

  ASSERT_TRUE(env_->CreateDir("/empty").ok());
  s = RepairDB("/empty", options_);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_FALSE(env_->FileExists(CurrentFileName("/empty")));
}

TEST_F(RepairTest, OpenDatabaseIsRefused) {
  Fill(1, 10, 0);
  ASSERT_TRUE(Open().ok());
  absl::Status s = Repair();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  ExpectContents(model_);
}

// Newer versions of a key in a level-0 table numbered below a deeper table
// that holds an older version: with every table in level 0, the higher
// number would be read first. Repair must still return the newest version,
// and deletions must stay deleted.
TEST_F(RepairTest, NewestVersionWinsAcrossTables) {
  ASSERT_TRUE(Open().ok());
  Put("a", "1");
  Put("m", "1");
  Put("z", "1");
  Put("gone", "1");
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  Put("a", "2");
  Delete("gone");
  ASSERT_TRUE(db_->Flush().ok());
  Put("m", "2");
  ASSERT_TRUE(db_->Flush().ok());
  // Rewrites the deeper table, with a=1 in it, under a higher number than
  // the level-0 table holding a=2.
  const std::string m = "m";
  ASSERT_TRUE(db_->CompactRange(&m, &m).ok());
  // Table [a, gone] (a=2) above, table [a, z] (a=1, numbered higher) below.
  ASSERT_EQ(db_->GetProperty("sift.num-files-at-level1"), "1");
  ASSERT_EQ(db_->GetProperty("sift.num-files-at-level2"), "1");
  Put("z", "3");  // in the WAL only
  Close();
  RemoveManifests();
  ASSERT_FALSE(Open().ok());

  ASSERT_TRUE(Repair().ok());
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(db_->Get(ReadOptions(), "gone", &value)));
}

// An ingested table stores its entries at sequence 0; the sequence it was
// ingested at lived only in the MANIFEST. After repair it still hides the
// older values it was ingested over, and later writes still hide it.
TEST_F(RepairTest, IngestedTableKeepsItsPlaceInTheOrder) {
  ASSERT_TRUE(Open().ok());
  Put("x", "old");
  Put("y", "old");
  ASSERT_TRUE(db_->Flush().ok());
  {
    const std::string path = "/ingest.sst";
    absl::StatusOr<std::unique_ptr<TableFileWriter>> writer =
        TableFileWriter::Open(options_, path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Put("x", "ingested").ok());
    ASSERT_TRUE((*writer)->Put("y", "ingested").ok());
    ASSERT_TRUE((*writer)->Put("z", "ingested").ok());
    ASSERT_TRUE((*writer)->Finish().ok());
    ASSERT_TRUE(db_->IngestExternalFiles({path}, IngestOptions()).ok());
    model_["y"] = "ingested";
    model_["z"] = "ingested";
  }
  Put("x", "new");
  ASSERT_TRUE(db_->Flush().ok());
  Delete("z");  // in the WAL only
  ExpectContents(model_);
  Close();
  RemoveManifests();
  ASSERT_FALSE(Open().ok());

  ASSERT_TRUE(Repair().ok());
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(db_->Get(ReadOptions(), "z", &value)));
  // New writes are numbered above everything recovered.
  Put("y", "newest");
  ExpectContents(model_);
}

TEST_F(RepairTest, ManyOverwritesAndDeletesResolveToTheNewest) {
  ASSERT_TRUE(Open().ok());
  Random rnd(301);
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 300; ++i) {
      const std::string key = test::NumberKey(rnd.Uniform(150), 4);
      if (rnd.OneIn(4)) {
        Delete(key);
      } else {
        Put(key,
            absl::StrCat(round, "-", i, "-", test::RandomString(&rnd, 20)));
      }
    }
    ASSERT_TRUE(db_->Flush().ok());
    if (round == 2) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
  }
  for (int i = 0; i < 50; ++i) Put(test::NumberKey(i, 4), "wal");
  Close();
  RemoveManifests();
  ASSERT_FALSE(Open().ok());

  ASSERT_TRUE(Repair().ok());
  ASSERT_TRUE(Open().ok());
  ExpectContents(model_);
  for (int i = 0; i < 150; ++i) {
    const std::string key = test::NumberKey(i, 4);
    if (model_.contains(key)) continue;
    std::string value;
    EXPECT_TRUE(absl::IsNotFound(db_->Get(ReadOptions(), key, &value))) << key;
  }
}

}  // namespace
}  // namespace sift
