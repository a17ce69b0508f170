// DB::CreateCheckpoint: the checkpoint holds exactly the database at the
// call (model comparison, including writes only in the WAL), later writes
// stay out, checkpoints taken while writes and compactions run hold a prefix
// of the acknowledged writes, failures leave nothing behind, damage in a
// checkpoint is caught, and a checkpoint of a checkpoint works.

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/testutil.h"
#include "util/fault_env.h"
#include "util/random.h"

namespace sift {
namespace {

using Model = std::map<std::string, std::string>;
using OpKind = FaultInjectionEnv::OpKind;

// Counts LinkFile calls, and can refuse them the way a file system without
// hard links does (the checkpoint then copies).
class LinkControlEnv final : public EnvWrapper {
 public:
  explicit LinkControlEnv(Env* target) : EnvWrapper(target) {}

  absl::Status LinkFile(const std::string& src,
                        const std::string& target) override {
    links_.fetch_add(1);
    if (!allow_links_.load()) {
      return absl::UnimplementedError("link " + src + ": refused by the test");
    }
    return EnvWrapper::LinkFile(src, target);
  }

  void set_allow_links(bool allow) { allow_links_.store(allow); }
  int links() const { return links_.load(); }

 private:
  std::atomic<bool> allow_links_{true};
  std::atomic<int> links_{0};
};

class CheckpointTest : public testing::Test {
 protected:
  CheckpointTest()
      : mem_(NewMemEnv(Env::Default())),
        fault_(mem_.get()),
        env_(&fault_),
        rnd_(301) {
    options_.env = &env_;
    options_.create_if_missing = true;
    // Small buffers and tables: flushes and compactions happen within a few
    // thousand writes.
    options_.write_buffer_size = 16 << 10;
    options_.max_file_size = 16 << 10;
    options_.block_size = 1024;
  }

  std::unique_ptr<DB> OpenAt(const std::string& path) {
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, path);
    EXPECT_TRUE(db.ok()) << path << ": " << db.status();
    return db.ok() ? *std::move(db) : nullptr;
  }

  // Every entry of `db`, read with checksums verified.
  static absl::StatusOr<Model> Contents(DB* db) {
    ReadOptions ro;
    ro.verify_checksums = true;
    std::unique_ptr<Iterator> it = db->NewIterator(ro);
    Model m;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      m[std::string(it->key())] = std::string(it->value());
    }
    if (!it->status().ok()) return it->status();
    return m;
  }

  // Open the checkpoint at `dir` and compare it with `model`.
  void ExpectCheckpointHolds(const std::string& dir, const Model& model) {
    std::unique_ptr<DB> copy = OpenAt(dir);
    ASSERT_NE(copy, nullptr);
    absl::StatusOr<Model> contents = Contents(copy.get());
    ASSERT_TRUE(contents.ok()) << contents.status();
    ASSERT_EQ(contents->size(), model.size()) << dir;
    EXPECT_TRUE(*contents == model) << dir;
  }

  // A random mix of puts and deletes over a small key space, with
  // occasional explicit flushes and compactions.
  void RandomWrites(DB* db, Model* model, int ops) {
    for (int i = 0; i < ops; ++i) {
      const std::string key = "k" + test::NumberKey(rnd_.Uniform(600), 5);
      const uint32_t dice = rnd_.Uniform(100);
      if (dice < 70) {
        const std::string value = test::RandomString(&rnd_, 20 + i % 80);
        ASSERT_TRUE(db->Put(WriteOptions(), key, value).ok());
        (*model)[key] = value;
      } else if (dice < 98) {
        ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
        model->erase(key);
      } else if (dice < 99) {
        ASSERT_TRUE(db->Flush().ok());
      } else {
        ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
      }
    }
  }

  std::unique_ptr<Env> mem_;
  FaultInjectionEnv fault_;
  LinkControlEnv env_;
  Random rnd_;
  Options options_;
};

TEST_F(CheckpointTest, HoldsTheDatabaseAtTheCall) {
  std::unique_ptr<DB> db = OpenAt("/db");
  ASSERT_NE(db, nullptr);
  Model model;
  std::vector<std::pair<std::string, Model>> taken;
  for (int round = 0; round < 4; ++round) {
    RandomWrites(db.get(), &model, 1500);
    if (round == 3) {
      // The last checkpoint: a few writes only in the memtable and WAL.
      ASSERT_TRUE(db->Flush().ok());
      for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(db->Put(WriteOptions(), "wal-only" + std::to_string(i),
                            "v" + std::to_string(i))
                        .ok());
        model["wal-only" + std::to_string(i)] = "v" + std::to_string(i);
      }
    }
    const std::string dir = "/ckpt" + std::to_string(round);
    ASSERT_TRUE(db->CreateCheckpoint(dir).ok());
    taken.emplace_back(dir, model);
  }
  EXPECT_GT(env_.links(), 0);  // tables were linked, not copied

  // Writes after a checkpoint stay out of it.
  ASSERT_TRUE(db->Put(WriteOptions(), "after", "x").ok());
  ASSERT_TRUE(db->Delete(WriteOptions(), "wal-only0").ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  for (const auto& [dir, expected] : taken) {
    ExpectCheckpointHolds(dir, expected);
  }
  // The database itself goes on unharmed, compactions deleting its obsolete
  // files though checkpoints still link some of them.
  model["after"] = "x";
  model.erase("wal-only0");
  absl::StatusOr<Model> contents = Contents(db.get());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_TRUE(*contents == model);
}

TEST_F(CheckpointTest, CopiesWhereLinksAreRefused) {
  env_.set_allow_links(false);
  std::unique_ptr<DB> db = OpenAt("/db");
  Model model;
  RandomWrites(db.get(), &model, 2000);
  ASSERT_TRUE(db->CreateCheckpoint("/ckpt").ok());
  EXPECT_GT(env_.links(), 0);  // tried, refused, copied
  ExpectCheckpointHolds("/ckpt", model);
}

TEST_F(CheckpointTest, ExistingOrEmptyDirRejected) {
  std::unique_ptr<DB> db = OpenAt("/db");
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE(env_.CreateDir("/exists").ok());
  absl::Status s = db->CreateCheckpoint("/exists");
  EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
  EXPECT_NE(s.message().find("/exists"), std::string::npos) << s;
  EXPECT_TRUE(absl::IsAlreadyExists(db->CreateCheckpoint("/db")));
  s = db->CreateCheckpoint("");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  // Nothing was written into the existing directory.
  absl::StatusOr<std::vector<std::string>> children =
      env_.GetChildren("/exists");
  ASSERT_TRUE(children.ok());
  EXPECT_TRUE(children->empty());
}

// Each operation kind the checkpoint performs is failed at each of its
// occurrences in turn: a failed checkpoint leaves no directory behind, the
// database keeps working, and once the fault lies past the checkpoint's last
// operation of that kind the checkpoint succeeds and is complete.
TEST_F(CheckpointTest, InjectedFailuresLeaveNoPartialCheckpoint) {
  std::unique_ptr<DB> db = OpenAt("/db");
  Model model;
  RandomWrites(db.get(), &model, 1500);
  ASSERT_TRUE(db->Put(WriteOptions(), "in-wal", "1").ok());
  model["in-wal"] = "1";

  int attempts = 0;
  for (const OpKind kind : {OpKind::kCreate, OpKind::kWrite, OpKind::kSync,
                            OpKind::kRename, OpKind::kRead}) {
    for (int n = 1;; ++n) {
      ASSERT_LT(n, 200) << "the checkpoint never got past the fault";
      const std::string dir = "/ckpt-" + std::to_string(attempts++);
      fault_.FailAfter(kind, n, absl::UnavailableError("injected"),
                       /*persistent=*/false);
      absl::Status s = db->CreateCheckpoint(dir);
      fault_.ClearFaults();
      if (s.ok()) {
        ExpectCheckpointHolds(dir, model);
        break;
      }
      EXPECT_TRUE(absl::IsUnavailable(s)) << s;
      EXPECT_NE(s.message().find("injected"), std::string::npos) << s;
      EXPECT_FALSE(env_.FileExists(dir)) << "partial checkpoint left: " << dir;
      // The database is unharmed and writable.
      const std::string key = "after-failure-" + std::to_string(attempts);
      ASSERT_TRUE(db->Put(WriteOptions(), key, "x").ok());
      model[key] = "x";
    }
  }
  absl::StatusOr<Model> contents = Contents(db.get());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_TRUE(*contents == model);
}

// A checkpoint is durable once CreateCheckpoint returns: a machine crash
// right after it loses nothing of it.
TEST_F(CheckpointTest, SurvivesACrashAfterReturning) {
  std::unique_ptr<DB> db = OpenAt("/db");
  Model model;
  RandomWrites(db.get(), &model, 1500);
  ASSERT_TRUE(db->Put(WriteOptions(), "in-wal", "1").ok());
  model["in-wal"] = "1";
  ASSERT_TRUE(db->CreateCheckpoint("/ckpt").ok());
  ASSERT_TRUE(fault_.SimulateCrash().ok());
  db.reset();
  ASSERT_TRUE(fault_.SimulateCrash().ok());
  ExpectCheckpointHolds("/ckpt", model);
}

// The machine stops at each operation of a checkpoint in turn (every
// operation from the n-th on fails, then a crash): afterwards the directory
// either holds the complete checkpoint or is not a database at all, and the
// database itself is intact.
TEST_F(CheckpointTest, CrashDuringCheckpointLeavesNoFalseCheckpoint) {
  Model model;
  {
    std::unique_ptr<DB> db = OpenAt("/db");
    RandomWrites(db.get(), &model, 1500);
    ASSERT_TRUE(db->Flush().ok());
    WriteOptions synced;
    synced.sync = true;
    ASSERT_TRUE(db->Put(synced, "in-wal", "1").ok());
    model["in-wal"] = "1";
  }
  for (int n = 1;; ++n) {
    ASSERT_LT(n, 1000) << "the checkpoint never got past the fault";
    std::unique_ptr<DB> db = OpenAt("/db");
    ASSERT_NE(db, nullptr);
    const std::string dir = "/crash" + std::to_string(n);
    fault_.FailAfter(OpKind::kAny, n, absl::UnavailableError("machine stopped"),
                     /*persistent=*/true);
    const absl::Status s = db->CreateCheckpoint(dir);
    ASSERT_TRUE(fault_.SimulateCrash().ok());
    db.reset();
    ASSERT_TRUE(fault_.SimulateCrash().ok());
    fault_.ClearFaults();

    if (s.ok() || env_.FileExists(dir + "/CURRENT")) {
      ExpectCheckpointHolds(dir, model);
    } else {
      Options no_create = options_;
      no_create.create_if_missing = false;
      EXPECT_FALSE(DB::Open(no_create, dir).ok()) << dir;
    }
    ExpectCheckpointHolds("/db", model);
    if (s.ok()) break;
  }
}

// Damage to a table of a checkpoint is found when the checkpoint is read.
// The tables are copied here: a linked table shares its bytes with the
// database's.
TEST_F(CheckpointTest, DamagedCheckpointTableIsDetected) {
  env_.set_allow_links(false);
  std::unique_ptr<DB> db = OpenAt("/db");
  Model model;
  RandomWrites(db.get(), &model, 1500);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db->CreateCheckpoint("/ckpt").ok());

  absl::StatusOr<std::vector<std::string>> children = env_.GetChildren("/ckpt");
  ASSERT_TRUE(children.ok());
  std::string table;
  for (const std::string& name : *children) {
    if (name.ends_with(".sst")) table = "/ckpt/" + name;
  }
  ASSERT_FALSE(table.empty());
  // Rewrite the table with one byte of its first data block flipped.
  std::string bytes;
  {
    auto in = env_.NewSequentialFile(table);
    ASSERT_TRUE(in.ok());
    std::vector<char> scratch(1 << 16);
    for (;;) {
      std::string_view got;
      ASSERT_TRUE((*in)->Read(scratch.size(), &got, scratch.data()).ok());
      if (got.empty()) break;
      bytes.append(got);
    }
  }
  bytes[10] = static_cast<char>(bytes[10] ^ 0x40);
  {
    auto out = env_.NewWritableFile(table);
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE((*out)->Append(bytes).ok());
    ASSERT_TRUE((*out)->Close().ok());
  }

  std::unique_ptr<DB> copy = OpenAt("/ckpt");
  ASSERT_NE(copy, nullptr);
  absl::StatusOr<Model> contents = Contents(copy.get());
  EXPECT_TRUE(absl::IsDataLoss(contents.status())) << contents.status();
  // The database's own table is intact.
  contents = Contents(db.get());
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_TRUE(*contents == model);
}

TEST_F(CheckpointTest, CheckpointOfACheckpoint) {
  Model model;
  {
    std::unique_ptr<DB> db = OpenAt("/db");
    RandomWrites(db.get(), &model, 1500);
    ASSERT_TRUE(db->CreateCheckpoint("/first").ok());
  }
  Model second = model;
  {
    std::unique_ptr<DB> first = OpenAt("/first");
    ASSERT_NE(first, nullptr);
    RandomWrites(first.get(), &second, 800);
    ASSERT_TRUE(first->CreateCheckpoint("/second").ok());
    ASSERT_TRUE(first->Put(WriteOptions(), "late", "x").ok());
  }
  ExpectCheckpointHolds("/second", second);
  ExpectCheckpointHolds("/first", [&] {
    Model m = second;
    m["late"] = "x";
    return m;
  }());
  // The original database never saw the checkpoint's writes.
  std::unique_ptr<DB> db = OpenAt("/db");
  absl::StatusOr<Model> contents = Contents(db.get());
  ASSERT_TRUE(contents.ok());
  EXPECT_TRUE(*contents == model);
}

// Checkpoints taken while one thread writes sequential keys and another
// compacts: each holds keys 0..m-1 exactly (a prefix of the writes, no
// holes), with m at least the number of writes acknowledged before the call
// and at most the number acknowledged after it.
TEST_F(CheckpointTest, ConsistentWhileWritesAndCompactionsRun) {
  std::unique_ptr<DB> db = OpenAt("/db");
  constexpr int kWrites = 12000;
  constexpr int kCheckpoints = 6;
  std::atomic<int> acknowledged{0};
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    for (int i = 0; i < kWrites; ++i) {
      const std::string value = "value-" + std::to_string(i);
      if (!db->Put(WriteOptions(), test::NumberKey(i, 8), value).ok()) break;
      acknowledged.store(i + 1);
    }
    writer_done.store(true);
  });
  std::thread compactor([&] {
    while (!writer_done.load()) {
      if (!db->CompactRange(nullptr, nullptr).ok()) break;
    }
  });

  struct Taken {
    std::string dir;
    int before;
    int after;
  };
  std::vector<Taken> taken;
  for (int c = 0; c < kCheckpoints; ++c) {
    // Spread the checkpoints over the run, by the writer's progress.
    const int due = (c + 1) * kWrites / (kCheckpoints + 1);
    while (acknowledged.load() < due && !writer_done.load()) {
      std::this_thread::yield();
    }
    Taken t;
    t.dir = "/ckpt" + std::to_string(c);
    t.before = acknowledged.load();
    ASSERT_TRUE(db->CreateCheckpoint(t.dir).ok());
    t.after = acknowledged.load();
    taken.push_back(t);
  }
  writer.join();
  compactor.join();
  ASSERT_EQ(acknowledged.load(), kWrites);

  for (const Taken& t : taken) {
    std::unique_ptr<DB> copy = OpenAt(t.dir);
    ASSERT_NE(copy, nullptr);
    absl::StatusOr<Model> contents = Contents(copy.get());
    ASSERT_TRUE(contents.ok()) << contents.status();
    const int m = static_cast<int>(contents->size());
    EXPECT_GE(m, t.before) << t.dir;
    EXPECT_LE(m, t.after + 1) << t.dir;  // a write may finish unobserved
    int i = 0;
    for (const auto& [key, value] : *contents) {
      ASSERT_EQ(key, test::NumberKey(i, 8)) << t.dir << ": a hole";
      ASSERT_EQ(value, "value-" + std::to_string(i));
      ++i;
    }
  }
}

}  // namespace
}  // namespace sift
