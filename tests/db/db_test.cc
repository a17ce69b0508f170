// Basic behaviour of the DB: open/create/reopen, reads and writes, flush,
// compaction, snapshots, properties, LOCK, DestroyDB.

#include "sift/db.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/random.h"

namespace sift {
namespace {

class DBTest : public testing::Test {
 protected:
  DBTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
  }
  ~DBTest() override { db_.reset(); }

  void Open() { ASSERT_TRUE(TryOpen().ok()); }
  absl::Status TryOpen() {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, dbname_);
    if (db.ok()) db_ = *std::move(db);
    return db.status();
  }
  void Reopen() {
    db_.reset();
    Open();
  }

  std::string Get(const std::string& key, const Snapshot* snapshot = nullptr) {
    ReadOptions ro;
    ro.snapshot = snapshot;
    std::string value;
    absl::Status s = db_->Get(ro, key, &value);
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    if (!s.ok()) return "ERROR: " + s.ToString();
    return value;
  }

  // Every key=value visible to a fresh iterator, in order.
  std::string Contents() {
    std::string out;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += std::string(it->key()) + "=" + std::string(it->value()) + ";";
    }
    EXPECT_TRUE(it->status().ok()) << it->status();
    return out;
  }

  int FilesAtLevel(int level) {
    std::optional<std::string> p =
        db_->GetProperty("sift.num-files-at-level" + std::to_string(level));
    EXPECT_TRUE(p.has_value());
    return p ? std::stoi(*p) : -1;
  }
  int TotalFiles() {
    int n = 0;
    for (int level = 0; level < 7; ++level) n += FilesAtLevel(level);
    return n;
  }

  std::unique_ptr<Env> env_;
  Options options_;
  const std::string dbname_ = "/db";
  std::unique_ptr<DB> db_;
};

TEST_F(DBTest, PutGetDelete) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "b", "2").ok());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("c"), "NOT_FOUND");
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "3").ok());
  EXPECT_EQ(Get("a"), "3");
  ASSERT_TRUE(db_->Delete(WriteOptions(), "a").ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  ASSERT_TRUE(db_->Delete(WriteOptions(), "never-there").ok());
  EXPECT_EQ(Contents(), "b=2;");
}

TEST_F(DBTest, EmptyKeyAndValue) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "", "empty-key").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "").ok());
  EXPECT_EQ(Get(""), "empty-key");
  EXPECT_EQ(Get("k"), "");
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(Get(""), "empty-key");
  EXPECT_EQ(Get("k"), "");
}

TEST_F(DBTest, FlushAndReopen) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "foo", "v1").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "bar", "v2").ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(TotalFiles(), 1);
  EXPECT_EQ(Get("foo"), "v1");
  ASSERT_TRUE(db_->Put(WriteOptions(), "foo", "v3").ok());  // only in the WAL
  Reopen();
  EXPECT_EQ(Get("foo"), "v3");
  EXPECT_EQ(Get("bar"), "v2");
  Reopen();
  EXPECT_EQ(Get("foo"), "v3");
  EXPECT_EQ(Contents(), "bar=v2;foo=v3;");
}

TEST_F(DBTest, FlushOfEmptyMemtableIsNoOp) {
  Open();
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(TotalFiles(), 0);
}

TEST_F(DBTest, WriteBatchIsAtomicAndOrdered) {
  Open();
  WriteBatch batch;
  batch.Put("x", "1");
  batch.Put("y", "2");
  batch.Delete("x");
  batch.Put("z", "3");
  batch.Put("z", "4");
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(batch.Count(), 5u);  // not modified
  EXPECT_EQ(Contents(), "y=2;z=4;");
  Reopen();
  EXPECT_EQ(Contents(), "y=2;z=4;");
}

TEST_F(DBTest, MissingDatabaseWithoutCreate) {
  options_.create_if_missing = false;
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("create_if_missing"), std::string::npos) << s;
}

TEST_F(DBTest, ErrorIfExists) {
  Open();
  db_.reset();
  options_.error_if_exists = true;
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
}

TEST_F(DBTest, SecondOpenFailsOnLock) {
  Open();
  absl::StatusOr<std::unique_ptr<DB>> second = DB::Open(options_, dbname_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot lock database /db"),
            std::string::npos)
      << second.status();
  // The first one is unaffected, and the lock is released on close.
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  db_.reset();
  Open();
  EXPECT_EQ(Get("k"), "v");
}

TEST_F(DBTest, SecondOpenFailsOnLockOnDisk) {
  const std::string dir = testing::TempDir() + "sift_db_lock_test";
  Options options;
  options.create_if_missing = true;
  ASSERT_TRUE(DestroyDB(dir, options).ok());
  absl::StatusOr<std::unique_ptr<DB>> first = DB::Open(options, dir);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<DB>> second = DB::Open(options, dir);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot lock database"),
            std::string::npos)
      << second.status();
  first->reset();
  EXPECT_TRUE(DestroyDB(dir, options).ok());
}

TEST_F(DBTest, WorksOnDisk) {
  const std::string dir = testing::TempDir() + "sift_db_disk_test";
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  ASSERT_TRUE(DestroyDB(dir, options).ok());
  Random rnd(9);
  std::vector<std::string> values;
  {
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dir);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 3000; ++i) {
      values.push_back(test::RandomString(&rnd, 40));
      WriteOptions wo;
      wo.sync = (i % 1000 == 0);
      ASSERT_TRUE((*db)->Put(wo, test::NumberKey(i), values.back()).ok());
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE((*db)->Put(WriteOptions(), "tail", "in the WAL").ok());
  }
  {
    options.create_if_missing = false;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dir);
    ASSERT_TRUE(db.ok()) << db.status();
    std::string value;
    for (int i = 0; i < 3000; i += 7) {
      ASSERT_TRUE((*db)->Get(ReadOptions(), test::NumberKey(i), &value).ok());
      EXPECT_EQ(value, values[i]);
    }
    ASSERT_TRUE((*db)->Get(ReadOptions(), "tail", &value).ok());
    EXPECT_EQ(value, "in the WAL");
  }
  EXPECT_TRUE(DestroyDB(dir, options).ok());
  EXPECT_FALSE(Env::Default()->FileExists(dir + "/CURRENT"));
}

TEST_F(DBTest, SnapshotSeesOldState) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v1").ok());
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v2").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "k").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "j", "new").ok());
  EXPECT_EQ(Get("k", s1), "v1");
  EXPECT_EQ(Get("j", s1), "NOT_FOUND");
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  // Survives flush and compaction.
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Get("k", s1), "v1");
  ReadOptions ro;
  ro.snapshot = s1;
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "k");
  EXPECT_EQ(it->value(), "v1");
  it->Next();
  EXPECT_FALSE(it->Valid());
  it.reset();
  db_->ReleaseSnapshot(s1);
}

TEST_F(DBTest, CompactRangeDropsDeletedData) {
  options_.write_buffer_size = 64 << 10;
  Open();
  Random rnd(301);
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), test::NumberKey(i),
                         test::RandomString(&rnd, 100))
                    .ok());
  }
  for (int i = 0; i < 2000; i += 2) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), test::NumberKey(i)).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(FilesAtLevel(0), 0);
  for (int i = 0; i < 2000; ++i) {
    EXPECT_EQ(Get(test::NumberKey(i)) == "NOT_FOUND", i % 2 == 0) << i;
  }
  int count = 0;
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
  EXPECT_EQ(count, 1000);
}

TEST_F(DBTest, ManyFlushesAndCompactionsKeepData) {
  options_.write_buffer_size = 32 << 10;
  options_.max_file_size = 32 << 10;
  Open();
  Random rnd(7);
  std::vector<std::string> values(3000);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 3000; ++i) {
      values[i] = test::RandomString(&rnd, 50);
      ASSERT_TRUE(db_->Put(WriteOptions(), test::NumberKey(i), values[i]).ok());
    }
  }
  for (int i = 0; i < 3000; i += 37) {
    EXPECT_EQ(Get(test::NumberKey(i)), values[i]);
  }
  Reopen();
  for (int i = 0; i < 3000; ++i) {
    ASSERT_EQ(Get(test::NumberKey(i)), values[i]) << i;
  }
  EXPECT_GT(TotalFiles(), 1);
}

TEST_F(DBTest, Properties) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("zzz"), "NOT_FOUND");
  std::optional<std::string> stats = db_->GetProperty("sift.stats");
  ASSERT_TRUE(stats.has_value());
  EXPECT_NE(stats->find("Level"), std::string::npos) << *stats;
  EXPECT_NE(stats->find("gets 2"), std::string::npos) << *stats;
  EXPECT_NE(stats->find("block reads per Get"), std::string::npos) << *stats;
  EXPECT_TRUE(db_->GetProperty("sift.sstables").has_value());
  EXPECT_TRUE(db_->GetProperty("sift.approximate-memory-usage").has_value());
  std::optional<std::string> filter =
      db_->GetProperty("sift.filter-memory-bytes");
  ASSERT_TRUE(filter.has_value());
  EXPECT_GT(std::stoll(*filter), 0);
  EXPECT_FALSE(db_->GetProperty("sift.num-files-at-level7").has_value());
  EXPECT_FALSE(db_->GetProperty("sift.num-files-at-levelx").has_value());
  EXPECT_FALSE(db_->GetProperty("sift.nonsense").has_value());
  EXPECT_FALSE(db_->GetProperty("leveldb.stats").has_value());
}

TEST_F(DBTest, ReadStatsCountGetsAndMemtableHits) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "m", "1").ok());
  EXPECT_EQ(Get("m"), "1");
  EXPECT_EQ(Get("n"), "NOT_FOUND");
  ReadStats rs = db_->GetReadStats();
  EXPECT_EQ(rs.gets, 2u);
  EXPECT_EQ(rs.memtable_hits, 1u);
  EXPECT_EQ(rs.tables_probed, 0u);
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(Get("m"), "1");
  rs = db_->GetReadStats();
  EXPECT_EQ(rs.gets, 3u);
  EXPECT_EQ(rs.memtable_hits, 1u);
  EXPECT_EQ(rs.tables_probed, 1u);
  EXPECT_EQ(rs.filter_positives, 1u);
  EXPECT_EQ(rs.filter_false_positives, 0u);
}

TEST_F(DBTest, DestroyDBRemovesEverything) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE(db_->Flush().ok());
  // Refused while open.
  EXPECT_FALSE(DestroyDB(dbname_, options_).ok());
  db_.reset();
  ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  absl::StatusOr<std::vector<std::string>> children =
      env_->GetChildren(dbname_);
  EXPECT_TRUE(!children.ok() || children->empty());
  options_.create_if_missing = false;
  EXPECT_FALSE(TryOpen().ok());
  // Destroying what does not exist is fine.
  EXPECT_TRUE(DestroyDB("/nothing-here", options_).ok());
}

TEST_F(DBTest, MissingCurrentWithDataIsDataLoss) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE(db_->Flush().ok());
  db_.reset();
  ASSERT_TRUE(env_->RemoveFile(dbname_ + "/CURRENT").ok());
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  options_.create_if_missing = false;
  s = TryOpen();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
}

TEST_F(DBTest, MissingManifestIsDataLoss) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  db_.reset();
  absl::StatusOr<std::vector<std::string>> children =
      env_->GetChildren(dbname_);
  ASSERT_TRUE(children.ok());
  int removed = 0;
  for (const std::string& name : *children) {
    if (name.rfind("MANIFEST-", 0) == 0) {
      ASSERT_TRUE(env_->RemoveFile(dbname_ + "/" + name).ok());
      ++removed;
    }
  }
  ASSERT_EQ(removed, 1);
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
}

TEST_F(DBTest, MissingTableIsDataLoss) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE(db_->Flush().ok());
  db_.reset();
  absl::StatusOr<std::vector<std::string>> children =
      env_->GetChildren(dbname_);
  ASSERT_TRUE(children.ok());
  for (const std::string& name : *children) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".sst") {
      ASSERT_TRUE(env_->RemoveFile(dbname_ + "/" + name).ok());
    }
  }
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find(".sst"), std::string::npos) << s;
}

TEST_F(DBTest, ObsoleteFilesAreDeleted) {
  options_.write_buffer_size = 32 << 10;
  Open();
  Random rnd(3);
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), test::NumberKey(i % 500),
                         test::RandomString(&rnd, 60))
                    .ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  Reopen();
  absl::StatusOr<std::vector<std::string>> children =
      env_->GetChildren(dbname_);
  ASSERT_TRUE(children.ok());
  int tables = 0, logs = 0, manifests = 0;
  for (const std::string& name : *children) {
    if (name.find(".sst") != std::string::npos) ++tables;
    if (name.find(".log") != std::string::npos) ++logs;
    if (name.rfind("MANIFEST-", 0) == 0) ++manifests;
  }
  EXPECT_EQ(tables, TotalFiles());
  EXPECT_EQ(logs, 1);
  EXPECT_EQ(manifests, 1);
}

}  // namespace
}  // namespace sift
