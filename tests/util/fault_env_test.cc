#include "util/fault_env.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sift/env.h"
#include "tests/testutil/scratch_dir.h"

namespace sift {
namespace {

using OpKind = FaultInjectionEnv::OpKind;

class FaultEnvTest : public testing::Test {
 protected:
  FaultEnvTest() : mem_(NewMemEnv(Env::Default())), env_(mem_.get()) {
    EXPECT_TRUE(env_.CreateDir("/db").ok());
  }

  // Write `data` to a new file, syncing it if asked.
  void Write(const std::string& fname, std::string_view data, bool sync) {
    auto f = env_.NewWritableFile(fname);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Append(data).ok());
    if (sync) {
      ASSERT_TRUE((*f)->Sync().ok());
    }
    ASSERT_TRUE((*f)->Close().ok());
  }

  // Contents through the underlying env, or "<missing>".
  std::string Contents(const std::string& fname) {
    auto f = mem_->NewSequentialFile(fname);
    if (!f.ok()) return "<missing>";
    std::string out;
    char buf[256];
    for (;;) {
      std::string_view got;
      EXPECT_TRUE((*f)->Read(sizeof(buf), &got, buf).ok());
      if (got.empty()) return out;
      out.append(got.data(), got.size());
    }
  }

  std::vector<std::string> Children() {
    auto c = mem_->GetChildren("/db");
    EXPECT_TRUE(c.ok());
    std::sort(c->begin(), c->end());
    return *c;
  }

  std::unique_ptr<Env> mem_;
  FaultInjectionEnv env_;
};

TEST_F(FaultEnvTest, UnsyncedDataIsLostSyncedDataKept) {
  auto f = env_.NewWritableFile("/db/log");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("durable-").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Append("volatile").ok());
  ASSERT_TRUE((*f)->Flush().ok());
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  EXPECT_EQ(Contents("/db/log"), "durable-volatile");

  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/log"), "durable-");
  // The crashed writer is dead: it can neither write nor sync.
  EXPECT_FALSE((*f)->Append("more").ok());
  EXPECT_FALSE((*f)->Sync().ok());
  EXPECT_FALSE((*f)->Close().ok());
  f->reset();
  EXPECT_EQ(Contents("/db/log"), "durable-");
}

TEST_F(FaultEnvTest, FileNeverSyncedLosesEverything) {
  Write("/db/a", "abc", /*sync=*/false);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/a"), "");  // the name survived, the data did not
}

TEST_F(FaultEnvTest, FileWithoutDirSyncIsGone) {
  Write("/db/synced-dir", "1", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  Write("/db/unsynced-dir", "2", /*sync=*/true);
  EXPECT_EQ(Children(),
            (std::vector<std::string>{"synced-dir", "unsynced-dir"}));
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Children(), std::vector<std::string>{"synced-dir"});
  EXPECT_EQ(Contents("/db/synced-dir"), "1");
}

TEST_F(FaultEnvTest, RenameWithoutDirSyncIsUndone) {
  // The CURRENT protocol: write a temp file, sync it, rename it over CURRENT.
  Write("/db/CURRENT", "MANIFEST-1", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  Write("/db/tmp", "MANIFEST-2", /*sync=*/true);
  ASSERT_TRUE(env_.RenameFile("/db/tmp", "/db/CURRENT").ok());
  EXPECT_EQ(Contents("/db/CURRENT"), "MANIFEST-2");
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/CURRENT"), "MANIFEST-1");
  EXPECT_EQ(Children(), std::vector<std::string>{"CURRENT"});

  // With the directory synced the rename sticks.
  Write("/db/tmp", "MANIFEST-3", /*sync=*/true);
  ASSERT_TRUE(env_.RenameFile("/db/tmp", "/db/CURRENT").ok());
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/CURRENT"), "MANIFEST-3");
  EXPECT_EQ(Children(), std::vector<std::string>{"CURRENT"});
}

TEST_F(FaultEnvTest, RenameOfDurableFileIsMovedBack) {
  Write("/db/a", "data", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.RenameFile("/db/a", "/db/b").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Children(), std::vector<std::string>{"a"});
  EXPECT_EQ(Contents("/db/a"), "data");
}

TEST_F(FaultEnvTest, LinkWithoutDirSyncIsUndone) {
  ASSERT_TRUE(env_.CreateDir("/ckpt").ok());
  Write("/db/t", "table", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.LinkFile("/db/t", "/ckpt/t").ok());
  EXPECT_EQ(Contents("/ckpt/t"), "table");
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/ckpt/t"), "<missing>");
  EXPECT_EQ(Contents("/db/t"), "table");

  // Synced, the link survives, also once the first name is removed.
  ASSERT_TRUE(env_.LinkFile("/db/t", "/ckpt/t").ok());
  ASSERT_TRUE(env_.SyncDir("/ckpt").ok());
  ASSERT_TRUE(env_.RemoveFile("/db/t").ok());
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/ckpt/t"), "table");
  EXPECT_EQ(Contents("/db/t"), "<missing>");
}

TEST_F(FaultEnvTest, LinkCountsAsCreate) {
  Write("/db/t", "table", /*sync=*/true);
  env_.ResetCounters();
  env_.FailAfter(OpKind::kCreate, 1, absl::InternalError("injected"),
                 /*persistent=*/false);
  absl::Status s = env_.LinkFile("/db/t", "/db/u");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/db/u"), std::string::npos) << s;
  EXPECT_EQ(Contents("/db/u"), "<missing>");
  EXPECT_EQ(env_.OpCount(OpKind::kCreate), 1u);
  EXPECT_TRUE(env_.LinkFile("/db/t", "/db/u").ok());
  EXPECT_EQ(Contents("/db/u"), "table");
}

TEST_F(FaultEnvTest, RemovalWithoutDirSyncIsUndone) {
  Write("/db/old", "keep me", /*sync=*/true);
  Write("/db/gone", "bye", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.RemoveFile("/db/old").ok());
  ASSERT_TRUE(env_.RemoveFile("/db/gone").ok());
  ASSERT_TRUE(env_.SyncDir("/db").ok());  // makes both removals durable...
  Write("/db/old", "replacement", /*sync=*/true);
  ASSERT_TRUE(env_.SimulateCrash().ok());  // ...and the new "old" is not
  EXPECT_TRUE(Children().empty());

  Write("/db/x", "v1", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.RemoveFile("/db/x").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/x"), "v1");
}

TEST_F(FaultEnvTest, OverwriteWithoutDirSyncRestoresOldContents) {
  Write("/db/f", "original", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  Write("/db/f", "overwritten", /*sync=*/true);
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/f"), "original");
}

TEST_F(FaultEnvTest, AppendableFileKeepsDurablePrefix) {
  Write("/db/log", "head", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  auto f = env_.NewAppendableFile("/db/log");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("+synced").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Append("+lost").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/log"), "head+synced");
}

TEST_F(FaultEnvTest, FilesPresentBeforeWrappingAreDurable) {
  auto raw = mem_->NewWritableFile("/db/pre");
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE((*raw)->Append("existing").ok());
  raw->reset();
  ASSERT_TRUE(env_.RemoveFile("/db/pre").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/pre"), "existing");
}

TEST_F(FaultEnvTest, StateAfterCrashIsTheNewBaseline) {
  Write("/db/a", "abc", /*sync=*/true);
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  // A second crash with nothing new changes nothing.
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/a"), "abc");
  // New writers after the crash work normally.
  auto f = env_.NewAppendableFile("/db/a");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("def").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/a"), "abcdef");
}

TEST_F(FaultEnvTest, NthWriteFailsOnce) {
  const absl::Status error = absl::InternalError("boom");
  env_.FailAfter(OpKind::kWrite, 3, error, /*persistent=*/false);
  auto f = env_.NewWritableFile("/db/f");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)->Append("1").ok());
  EXPECT_TRUE((*f)->Append("2").ok());
  absl::Status s = (*f)->Append("3");
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_NE(s.message().find("/db/f"), std::string::npos) << s;
  EXPECT_NE(s.message().find("boom"), std::string::npos) << s;
  EXPECT_TRUE((*f)->Append("4").ok());
  EXPECT_TRUE((*f)->Close().ok());
  EXPECT_EQ(Contents("/db/f"), "124");  // the failed append wrote nothing
  EXPECT_EQ(env_.OpCount(OpKind::kWrite), 4u);
  EXPECT_EQ(env_.OpCount(OpKind::kCreate), 1u);
  EXPECT_EQ(env_.OpCount(OpKind::kAny), 5u);
}

TEST_F(FaultEnvTest, PersistentFaultUntilCleared) {
  env_.FailAfter(OpKind::kSync, 2, absl::InternalError("io"),
                 /*persistent=*/true);
  auto f = env_.NewWritableFile("/db/f");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("a").ok());
  EXPECT_TRUE((*f)->Sync().ok());
  for (int i = 0; i < 5; ++i) EXPECT_FALSE((*f)->Sync().ok()) << i;
  EXPECT_FALSE(env_.SyncDir("/db").ok());  // SyncDir counts as a sync
  EXPECT_TRUE((*f)->Append("b").ok());     // other kinds are unaffected
  env_.ClearFaults();
  EXPECT_TRUE((*f)->Sync().ok());
  EXPECT_TRUE(env_.SyncDir("/db").ok());
  EXPECT_EQ(env_.OpCount(OpKind::kSync), 9u);
  ASSERT_TRUE((*f)->Close().ok());
}

TEST_F(FaultEnvTest, FailedSyncMakesNothingDurable) {
  auto f = env_.NewWritableFile("/db/f");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("one").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE(env_.SyncDir("/db").ok());
  ASSERT_TRUE((*f)->Append("two").ok());
  env_.FailAfter(OpKind::kSync, 1, FaultInjectionEnv::NoSpaceError(), false);
  EXPECT_TRUE(absl::IsUnavailable((*f)->Sync()));
  ASSERT_TRUE(env_.SimulateCrash().ok());
  EXPECT_EQ(Contents("/db/f"), "one");
}

TEST_F(FaultEnvTest, NoSpaceError) {
  const absl::Status no_space = FaultInjectionEnv::NoSpaceError();
  EXPECT_TRUE(absl::IsUnavailable(no_space));
  EXPECT_NE(no_space.message().find("No space left on device"),
            std::string::npos);
  env_.FailAfter(OpKind::kWrite, 1, no_space, /*persistent=*/true);
  auto f = env_.NewWritableFile("/db/full");
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 3; ++i) {
    absl::Status s = (*f)->Append("x");
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_NE(s.message().find("No space left on device"), std::string::npos);
    EXPECT_NE(s.message().find("/db/full"), std::string::npos);
  }
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(Contents("/db/full"), "");
}

TEST_F(FaultEnvTest, ReadRenameCreateRemoveFaults) {
  Write("/db/r", "readable", /*sync=*/true);
  auto seq = env_.NewSequentialFile("/db/r");
  auto rnd = env_.NewRandomAccessFile("/db/r");
  ASSERT_TRUE(seq.ok() && rnd.ok());
  char buf[16];
  std::string_view got;
  env_.FailAfter(OpKind::kRead, 2, absl::DataLossError("bad sector"), false);
  EXPECT_TRUE((*rnd)->Read(0, 4, &got, buf).ok());
  EXPECT_EQ(got, "read");
  EXPECT_TRUE(absl::IsDataLoss((*seq)->Read(4, &got, buf)));
  EXPECT_TRUE((*seq)->Read(4, &got, buf).ok());
  EXPECT_EQ(env_.OpCount(OpKind::kRead), 3u);

  env_.FailAfter(OpKind::kRename, 1, absl::InternalError("rename"), false);
  EXPECT_FALSE(env_.RenameFile("/db/r", "/db/s").ok());
  EXPECT_EQ(Contents("/db/r"), "readable");  // the rename did not happen
  EXPECT_TRUE(env_.RenameFile("/db/r", "/db/s").ok());

  env_.FailAfter(OpKind::kCreate, 1, absl::InternalError("create"), false);
  EXPECT_FALSE(env_.NewWritableFile("/db/new").ok());
  EXPECT_FALSE(mem_->FileExists("/db/new"));
  EXPECT_TRUE(env_.NewAppendableFile("/db/new").ok());

  env_.FailAfter(OpKind::kRemove, 1, absl::InternalError("remove"), false);
  EXPECT_FALSE(env_.RemoveFile("/db/new").ok());
  EXPECT_TRUE(mem_->FileExists("/db/new"));
  EXPECT_TRUE(env_.RemoveFile("/db/new").ok());
}

TEST_F(FaultEnvTest, AnyKindCountsEveryOperation) {
  env_.FailAfter(OpKind::kAny, 3, absl::InternalError("any"), false);
  auto f = env_.NewWritableFile("/db/f");  // 1: create
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)->Append("a").ok());  // 2: write
  EXPECT_FALSE((*f)->Sync().ok());      // 3: sync fails
  EXPECT_TRUE((*f)->Sync().ok());
  env_.ResetCounters();
  EXPECT_EQ(env_.OpCount(OpKind::kAny), 0u);
  ASSERT_TRUE((*f)->Close().ok());
}

// Writers append and sync on four threads while the main thread crashes the
// env: each file must end up holding exactly what was synced before the
// crash (a prefix of what was written), and every writer must die.
TEST(FaultEnvConcurrencyTest, CrashWhileWritersRun) {
  std::unique_ptr<Env> mem = NewMemEnv(Env::Default());
  FaultInjectionEnv env(mem.get());
  ASSERT_TRUE(env.CreateDir("/db").ok());
  constexpr int kThreads = 4;
  constexpr size_t kRecord = 100;
  constexpr int kRecordsPerSync = 10;
  std::vector<std::unique_ptr<WritableFile>> files;
  for (int t = 0; t < kThreads; ++t) {
    auto f = env.NewWritableFile("/db/f" + std::to_string(t));
    ASSERT_TRUE(f.ok());
    files.push_back(*std::move(f));
  }
  ASSERT_TRUE(env.SyncDir("/db").ok());

  std::atomic<int> syncing_threads{0};
  std::vector<std::atomic<uint64_t>> synced(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string record(kRecord, static_cast<char>('a' + t));
      bool counted = false;
      for (uint64_t written = 0;;) {
        if (!files[t]->Append(record).ok()) break;
        written += kRecord;
        if (written % (kRecord * kRecordsPerSync) == 0) {
          if (!files[t]->Sync().ok()) break;
          synced[t].store(written);
          if (!counted) {
            counted = true;
            syncing_threads.fetch_add(1);
          }
        }
      }
      files[t].reset();
    });
  }
  while (syncing_threads.load() < kThreads) std::this_thread::yield();
  ASSERT_TRUE(env.SimulateCrash().ok());
  for (auto& th : threads) th.join();

  for (int t = 0; t < kThreads; ++t) {
    const std::string name = "/db/f" + std::to_string(t);
    const uint64_t size = mem->GetFileSize(name).value();
    // The thread may not have recorded its last successful sync.
    const uint64_t recorded = synced[t].load();
    EXPECT_TRUE(size == recorded ||
                size == recorded + kRecord * kRecordsPerSync)
        << name << " size " << size << " recorded " << recorded;
    auto f = mem->NewSequentialFile(name);
    ASSERT_TRUE(f.ok());
    std::string buf(size, '\0');
    std::string_view got;
    ASSERT_TRUE((*f)->Read(size, &got, buf.data()).ok());
    EXPECT_EQ(got, std::string(size, static_cast<char>('a' + t)));
  }
  EXPECT_GT(env.OpCount(OpKind::kWrite), 0u);
}

TEST(FaultEnvPosixTest, CrashOnTopOfPosixEnv) {
  test::ScratchDir scratch("fault");
  const std::string& dir = scratch.path();
  Env* posix = Env::Default();
  {
    FaultInjectionEnv env(posix);
    ASSERT_TRUE(env.SyncDir(dir).ok());
    auto f = env.NewWritableFile(dir + "/log");
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("synced").ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE(env.SyncDir(dir).ok());
    // Still in the user-space buffer when the crash comes: must not leak
    // into the file when the dead writer is destroyed.
    ASSERT_TRUE((*f)->Append("buffered").ok());
    auto g = env.NewWritableFile(dir + "/unsynced-name");
    ASSERT_TRUE(g.ok());
    ASSERT_TRUE((*g)->Sync().ok());
    ASSERT_TRUE(env.SimulateCrash().ok());
    f->reset();
    g->reset();
    EXPECT_EQ(posix->GetFileSize(dir + "/log").value(), 6u);
    EXPECT_FALSE(posix->FileExists(dir + "/unsynced-name"));
  }
  ASSERT_TRUE(posix->RemoveFile(dir + "/log").ok());
  ASSERT_TRUE(posix->RemoveDir(dir).ok());
}

}  // namespace
}  // namespace sift
