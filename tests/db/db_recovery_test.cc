// Crash recovery and write errors, with the fault-injecting Env: after a
// simulated machine crash every acknowledged sync write is present and the
// recovered state is a prefix of the write order; a clean close loses
// nothing; failed WAL writes and syncs are sticky.

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/fault_env.h"
#include "util/random.h"

namespace sift {
namespace {

using Model = std::map<std::string, std::string>;
using OpKind = FaultInjectionEnv::OpKind;

class DBRecoveryTest : public testing::Test {
 protected:
  DBRecoveryTest()
      : base_(test::NewTestEnv()),
        env_(std::make_unique<FaultInjectionEnv>(base_.get())) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    // Small buffers and tables: flushes and compactions all the time.
    options_.write_buffer_size = 64 << 10;
    options_.max_file_size = 64 << 10;
  }
  ~DBRecoveryTest() override { db_.reset(); }

  absl::Status Open() {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, kDb);
    if (db.ok()) db_ = *std::move(db);
    return db.status();
  }

  // The machine dies: unsynced data and unsynced directory changes vanish.
  void Crash() {
    ASSERT_TRUE(env_->SimulateCrash().ok());
    db_.reset();  // its writes fail from now on
    // Discard whatever the dying DB created after the first crash.
    ASSERT_TRUE(env_->SimulateCrash().ok());
  }

  Model ReadAll() {
    Model out;
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out[std::string(it->key())] = std::string(it->value());
    }
    EXPECT_TRUE(it->status().ok()) << it->status();
    return out;
  }

  static constexpr char kDb[] = "/crashdb";
  std::unique_ptr<Env> base_;
  std::unique_ptr<FaultInjectionEnv> env_;
  Options options_;
  std::unique_ptr<DB> db_;
};

// Each write is a batch that also stores its index under "progress", so the
// recovered state names the prefix it claims to be, and the test checks that
// it is exactly that prefix.
TEST_F(DBRecoveryTest, CrashKeepsSyncedWritesAndAPrefix) {
  const bool sanitized = std::getenv("SIFT_SANITIZED") != nullptr;
  const int rounds = sanitized ? 8 : 25;
  Random rnd(2024);
  ASSERT_TRUE(Open().ok());
  Model state;  // verified state at the start of the round
  uint64_t total_writes = 0, total_synced = 0, total_lost = 0;
  for (int round = 0; round < rounds; ++round) {
    struct Write {
      std::string key;
      bool del;
      std::string value;
    };
    std::vector<Write> writes;
    int last_synced = -1;  // index of the last acknowledged sync write
    const int n = 1 + static_cast<int>(rnd.Uniform(sanitized ? 800 : 2500));
    for (int i = 0; i < n; ++i) {
      Write w{"key" + test::NumberKey(rnd.Uniform(400), 4), rnd.OneIn(6),
              test::RandomString(&rnd, static_cast<int>(rnd.Uniform(200)))};
      WriteBatch batch;
      if (w.del) {
        batch.Delete(w.key);
      } else {
        batch.Put(w.key, w.value);
      }
      batch.Put("progress", absl::StrCat(round, ":", i));
      WriteOptions wo;
      wo.sync = rnd.OneIn(8);
      ASSERT_TRUE(db_->Write(wo, &batch).ok());
      if (wo.sync) last_synced = i;
      writes.push_back(std::move(w));
    }
    ASSERT_NO_FATAL_FAILURE(Crash());
    ASSERT_TRUE(Open().ok());

    Model recovered = ReadAll();
    // Which prefix of this round's writes survived?
    int k = 0;
    auto progress = recovered.find("progress");
    const std::string prefix = absl::StrCat(round, ":");
    if (progress != recovered.end() && progress->second.rfind(prefix, 0) == 0) {
      k = std::stoi(progress->second.substr(prefix.size())) + 1;
    }
    ASSERT_GE(k, last_synced + 1)
        << "round " << round << ": acknowledged sync write lost";
    Model expected = state;
    for (int i = 0; i < k; ++i) {
      if (writes[i].del) {
        expected.erase(writes[i].key);
      } else {
        expected[writes[i].key] = writes[i].value;
      }
    }
    if (k > 0) expected["progress"] = absl::StrCat(round, ":", k - 1);
    ASSERT_EQ(recovered.size(), expected.size()) << "round " << round;
    ASSERT_TRUE(recovered == expected)
        << "round " << round << ": recovered state is not the prefix of " << k
        << " writes";
    state = std::move(recovered);
    total_writes += n;
    total_synced += last_synced + 1;
    total_lost += n - k;
  }
  std::printf(
      "%d crashes, %llu writes: all %llu up to the last sync kept, "
      "%llu unsynced lost\n",
      rounds, static_cast<unsigned long long>(total_writes),
      static_cast<unsigned long long>(total_synced),
      static_cast<unsigned long long>(total_lost));
}

// Every write synced: a crash at any point loses nothing acknowledged, even
// with flushes and compactions in flight.
TEST_F(DBRecoveryTest, SyncWritesSurviveCrashDuringBackgroundWork) {
  const int rounds = std::getenv("SIFT_SANITIZED") != nullptr ? 3 : 8;
  Random rnd(77);
  Model model;
  ASSERT_TRUE(Open().ok());
  for (int round = 0; round < rounds; ++round) {
    const int n = 200 + static_cast<int>(rnd.Uniform(600));
    for (int i = 0; i < n; ++i) {
      const std::string key = "k" + test::NumberKey(rnd.Uniform(3000), 5);
      const std::string value = test::RandomString(&rnd, 300);
      WriteOptions wo;
      wo.sync = true;
      ASSERT_TRUE(db_->Put(wo, key, value).ok());
      model[key] = value;
    }
    ASSERT_NO_FATAL_FAILURE(Crash());
    ASSERT_TRUE(Open().ok());
    ASSERT_TRUE(ReadAll() == model) << "round " << round;
  }
}

// A clean close syncs the WAL: even a crash right after it loses nothing,
// though no write asked for sync.
TEST_F(DBRecoveryTest, CleanCloseLosesNothing) {
  Random rnd(5);
  Model model;
  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE(Open().ok());
    for (int i = 0; i < 1500; ++i) {
      const std::string key = "k" + test::NumberKey(rnd.Uniform(2000), 5);
      if (rnd.OneIn(5)) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value = test::RandomString(&rnd, 80);
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
    }
    db_.reset();  // clean close
    ASSERT_TRUE(env_->SimulateCrash().ok());
    ASSERT_TRUE(Open().ok());
    ASSERT_TRUE(ReadAll() == model) << "round " << round;
    db_.reset();
  }
}

TEST_F(DBRecoveryTest, FailedWalSyncIsSticky) {
  ASSERT_TRUE(Open().ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "before", "1").ok());
  env_->FailAfter(OpKind::kSync, 1, FaultInjectionEnv::NoSpaceError(),
                  /*persistent=*/false);
  WriteOptions sync;
  sync.sync = true;
  absl::Status s = db_->Put(sync, "failed", "2");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  env_->ClearFaults();
  // The fault is gone, but the DB stays read-only for writes, with the same
  // error.
  absl::Status later = db_->Put(WriteOptions(), "after", "3");
  EXPECT_EQ(later, s);
  EXPECT_EQ(db_->Delete(WriteOptions(), "before"), s);
  WriteBatch batch;
  batch.Put("x", "y");
  EXPECT_EQ(db_->Write(WriteOptions(), &batch), s);
  EXPECT_FALSE(db_->Flush().ok());
  // Reads still work.
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "before", &value).ok());
  EXPECT_EQ(value, "1");
  std::optional<std::string> stats = db_->GetProperty("sift.stats");
  EXPECT_NE(stats->find("Background error"), std::string::npos) << *stats;
  // After reopening, writes work again and the acknowledged one is there.
  ASSERT_TRUE(Open().ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), "before", &value).ok());
  EXPECT_TRUE(absl::IsNotFound(db_->Get(ReadOptions(), "after", &value)));
  ASSERT_TRUE(db_->Put(WriteOptions(), "after", "3").ok());
}

TEST_F(DBRecoveryTest, FailedWalAppendIsSticky) {
  ASSERT_TRUE(Open().ok());
  env_->FailAfter(OpKind::kWrite, 1, FaultInjectionEnv::NoSpaceError(),
                  /*persistent=*/false);
  absl::Status s = db_->Put(WriteOptions(), "k", "v");
  ASSERT_FALSE(s.ok());
  env_->ClearFaults();
  EXPECT_EQ(db_->Put(WriteOptions(), "k2", "v2"), s);
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(db_->Get(ReadOptions(), "k", &value)));
}

TEST_F(DBRecoveryTest, FailedFlushIsStickyAndLosesNothing) {
  ASSERT_TRUE(Open().ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  // The flush cannot create its table.
  env_->FailAfter(OpKind::kCreate, 1, FaultInjectionEnv::NoSpaceError(),
                  /*persistent=*/true);
  absl::Status s = db_->Flush();
  ASSERT_FALSE(s.ok());
  env_->ClearFaults();
  EXPECT_FALSE(db_->Put(WriteOptions(), "b", "2").ok());
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "a", &value).ok());
  EXPECT_EQ(value, "1");
  ASSERT_TRUE(Open().ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), "a", &value).ok());
  EXPECT_EQ(value, "1");
  ASSERT_TRUE(db_->Flush().ok());
}

TEST_F(DBRecoveryTest, FailedManifestWriteLosesNothing) {
  ASSERT_TRUE(Open().ok());
  Random rnd(11);
  Model model;
  for (int i = 0; i < 300; ++i) {
    const std::string key = test::NumberKey(i);
    model[key] = test::RandomString(&rnd, 50);
    ASSERT_TRUE(db_->Put(WriteOptions(), key, model[key]).ok());
  }
  // Fail every sync from now on: the table's, the directory's or the
  // MANIFEST's — the flush cannot complete.
  env_->FailAfter(OpKind::kSync, 1, FaultInjectionEnv::NoSpaceError(),
                  /*persistent=*/true);
  EXPECT_FALSE(db_->Flush().ok());
  env_->ClearFaults();
  ASSERT_NO_FATAL_FAILURE(Crash());
  ASSERT_TRUE(Open().ok());
  // The writes were never synced, so any prefix is allowed; what is there is
  // correct. A clean close now keeps it.
  Model recovered = ReadAll();
  for (const auto& [k, v] : recovered) EXPECT_EQ(model[k], v) << k;
  db_.reset();
  ASSERT_TRUE(Open().ok());
  EXPECT_TRUE(ReadAll() == recovered);
}

TEST_F(DBRecoveryTest, ReopenAfterCrashDuringOpen) {
  ASSERT_TRUE(Open().ok());
  WriteOptions sync;
  sync.sync = true;
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(db_->Put(sync, test::NumberKey(i), "v").ok());
  }
  ASSERT_NO_FATAL_FAILURE(Crash());
  // Crash repeatedly in the middle of recovery: after the n-th sync.
  for (int n = 1; n <= 6; ++n) {
    env_->FailAfter(OpKind::kSync, n, absl::UnavailableError("crash point"),
                    /*persistent=*/true);
    absl::Status s = Open();
    env_->ClearFaults();
    ASSERT_NO_FATAL_FAILURE(Crash());
    (void)s;  // may or may not have succeeded before the crash point
  }
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 500; ++i) {
    std::string value;
    ASSERT_TRUE(db_->Get(ReadOptions(), test::NumberKey(i), &value).ok()) << i;
  }
}

}  // namespace
}  // namespace sift
