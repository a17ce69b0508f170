// Options::use_direct_reads (table reads with O_DIRECT on real files, bulk
// reads buffered) and the bounded-memory policy of the table cache (tables
// above the last level stay open when the tree outgrows max_open_files).

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"

namespace sift {
namespace {

// The POSIX Env, recording the mode of every table open.
class ModeRecordingEnv final : public EnvWrapper {
 public:
  ModeRecordingEnv() : EnvWrapper(Env::Default()) {}

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f, RandomAccessMode mode) override {
    {
      absl::MutexLock lock(&mu_);
      modes_.push_back(mode);
    }
    return target()->NewRandomAccessFile(f, mode);
  }

  int Count(RandomAccessMode mode) {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (RandomAccessMode m : modes_) n += m == mode ? 1 : 0;
    return n;
  }
  void Clear() {
    absl::MutexLock lock(&mu_);
    modes_.clear();
  }

 private:
  absl::Mutex mu_;
  std::vector<RandomAccessMode> modes_;
};

// A database on a real file system: under $SIFT_TEST_DIR or the working
// directory (the build tree under ctest), as /tmp may be a tmpfs.
class DBDirectReadsTest : public testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("SIFT_TEST_DIR");
    std::string parent = base != nullptr && *base != '\0' ? base : ".";
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    std::string tmpl = parent + "/sift_dbdirect_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    dbname_ = dir_ + "/db";
    options_.env = &env_;
    options_.create_if_missing = true;
    options_.use_direct_reads = true;
    options_.allow_mmap_reads = true;  // overridden by use_direct_reads
    options_.write_buffer_size = 64 << 10;
    options_.max_file_size = 32 << 10;
    options_.block_cache_capacity = 1 << 20;
  }
  void TearDown() override {
    db_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  void Open() {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, dbname_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  std::string Value(int i) { return "value-" + test::NumberKey(i, 8) + "-pad"; }

  ModeRecordingEnv env_;
  Options options_;
  std::string dir_;
  std::string dbname_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBDirectReadsTest, ReadsDirectCompactsBufferedAndAnswersRight) {
  Open();
  constexpr int kKeys = 6000;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), test::NumberKey(i, 8), Value(i)).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  // Compaction read its inputs through buffered tables of their own.
  EXPECT_GT(env_.Count(RandomAccessMode::kBuffered), 0);
  EXPECT_EQ(env_.Count(RandomAccessMode::kMemoryMapped), 0);

  options_.block_cache_capacity = 0;  // every block read is a file read
  Open();
  env_.Clear();
  for (int i = 0; i < kKeys; i += 7) {
    std::string value;
    ASSERT_TRUE(db_->Get(ReadOptions(), test::NumberKey(i, 8), &value).ok());
    EXPECT_EQ(value, Value(i));
  }
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(
      db_->Get(ReadOptions(), test::NumberKey(kKeys + 1, 8), &value)));
  EXPECT_GT(env_.Count(RandomAccessMode::kDirect), 0);
  EXPECT_EQ(env_.Count(RandomAccessMode::kBuffered), 0);
  EXPECT_EQ(env_.Count(RandomAccessMode::kMemoryMapped), 0);
  const ReadStats stats = db_->GetReadStats();
  EXPECT_EQ(stats.block_reads, stats.gets - 1 + stats.filter_false_positives);

  // A full scan (filling the cache) reads direct too, and sees every key.
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  ASSERT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ(n, kKeys);
  EXPECT_EQ(env_.Count(RandomAccessMode::kBuffered), 0);
}

// The bounded-memory policy: with more tables than max_open_files keeps
// open, last-level tables are loaded again and again (counted as
// table_loads) while the tables above the last level stay open.
class BoundedTableMemoryTest : public testing::Test {
 protected:
  BoundedTableMemoryTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    options_.write_buffer_size = 16 << 10;
    options_.max_file_size = 16 << 10;
    options_.max_open_files = 20;               // 10 places for tables
    options_.compression = Compression::kNone;  // tables of the size asked
    options_.block_cache_capacity = 0;
  }
  ~BoundedTableMemoryTest() override { db_.reset(); }

  uint64_t LoadsForGets(int first, int last, const std::string& suffix) {
    const uint64_t before = db_->GetReadStats().table_loads;
    for (int i = first; i < last; ++i) {
      std::string value;
      absl::Status s =
          db_->Get(ReadOptions(), test::NumberKey(i, 8) + suffix, &value);
      EXPECT_TRUE(s.ok()) << s;
    }
    return db_->GetReadStats().table_loads - before;
  }

  std::unique_ptr<Env> env_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(BoundedTableMemoryTest, UpperLevelTablesStayOpenLastLevelReloads) {
  auto db = DB::Open(options_, "/db");
  ASSERT_TRUE(db.ok()) << db.status();
  db_ = *std::move(db);
  constexpr int kKeys = 12000;
  const std::string pad(60, 'v');
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), test::NumberKey(i, 8), pad).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  int last = 0;
  for (int level = 0; level < 7; ++level) {
    if (*db_->GetProperty("sift.num-files-at-level" + std::to_string(level)) !=
        "0") {
      last = level;
    }
  }
  const int last_files = std::stoi(
      *db_->GetProperty("sift.num-files-at-level" + std::to_string(last)));
  ASSERT_GT(last_files, 30) << "the last level must outgrow the table cache\n"
                            << *db_->GetProperty("sift.sstables");
  // Two small tables above the last level, overlapping the end of its key
  // range.
  constexpr int kUpperFirst = kKeys - 200;
  for (int part = 0; part < 2; ++part) {
    for (int i = kUpperFirst + part * 100; i < kUpperFirst + part * 100 + 100;
         ++i) {
      ASSERT_TRUE(
          db_->Put(WriteOptions(), test::NumberKey(i, 8) + "u", "u").ok());
    }
    ASSERT_TRUE(db_->Flush().ok());
  }
  ASSERT_EQ(*db_->GetProperty("sift.num-files-at-level" + std::to_string(last)),
            std::to_string(last_files));

  // Touch last-level tables first (keys below the upper tables' range), so
  // that under a first-come policy they would take every place.
  EXPECT_GT(LoadsForGets(0, kUpperFirst, ""), 0u);
  // Keys held by the upper tables are answered there: those tables were
  // pinned on first use despite the last level's churn, and are never
  // loaded again.
  LoadsForGets(kUpperFirst, kKeys, "u");  // first use opens them
  EXPECT_EQ(LoadsForGets(kUpperFirst, kKeys, "u"), 0u);
  LoadsForGets(0, kUpperFirst, "");  // more churn of the last level
  EXPECT_EQ(LoadsForGets(kUpperFirst, kKeys, "u"), 0u);
  // The last level does not fit: its tables keep being loaded.
  EXPECT_GT(LoadsForGets(0, kUpperFirst, ""), 0u);
}

TEST_F(BoundedTableMemoryTest, NoLoadsWhenEveryTableFits) {
  options_.max_open_files = 1000;
  auto db = DB::Open(options_, "/db");
  ASSERT_TRUE(db.ok()) << db.status();
  db_ = *std::move(db);
  const std::string pad(60, 'v');
  for (int i = 0; i < 4000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), test::NumberKey(i, 8), pad).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  LoadsForGets(0, 4000, "");  // opens each table once
  EXPECT_EQ(LoadsForGets(0, 4000, ""), 0u);
}

}  // namespace
}  // namespace sift
