// Behaviour every Env must share, run on the POSIX Env (in a fresh temporary
// directory) and on the in-memory Env; then POSIX-only checks.

#include "sift/env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testutil/scratch_dir.h"
#include "tests/testutil/unprivileged.h"
#include "util/mutex.h"
#include "util/random.h"

namespace sift {
namespace {

enum class EnvKind { kPosix, kMem };

std::string ReadWhole(SequentialFile* file, size_t chunk) {
  std::string out;
  std::vector<char> scratch(chunk);
  for (;;) {
    std::string_view got;
    absl::Status s = file->Read(chunk, &got, scratch.data());
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || got.empty()) break;
    out.append(got.data(), got.size());
  }
  return out;
}

std::string PatternBytes(size_t n, uint64_t seed) {
  Random r(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(r.Next());
  return s;
}

class EnvTest : public testing::TestWithParam<EnvKind> {
 protected:
  void SetUp() override {
    if (GetParam() == EnvKind::kPosix) {
      env_ = Env::Default();
      std::string tmpl = testing::TempDir() + "sift_env_XXXXXX";
      ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
      dir_ = tmpl;
    } else {
      mem_ = NewMemEnv(Env::Default());
      env_ = mem_.get();
      dir_ = "/mem/envtest";
      ASSERT_TRUE(env_->CreateDir(dir_).ok());
    }
  }

  void TearDown() override {
    auto children = env_->GetChildren(dir_);
    if (children.ok()) {
      for (const std::string& c : *children) {
        env_->RemoveFile(dir_ + "/" + c).IgnoreError();
      }
    }
    EXPECT_TRUE(env_->RemoveDir(dir_).ok());
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  void WriteFile(const std::string& name, std::string_view data) {
    auto file = env_->NewWritableFile(Path(name));
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append(data).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }

  std::string ReadFile(const std::string& name) {
    auto file = env_->NewSequentialFile(Path(name));
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return "";
    return ReadWhole(file->get(), 1000);
  }

  Env* env_ = nullptr;
  std::unique_ptr<Env> mem_;
  std::string dir_;
};

TEST_P(EnvTest, WriteThenReadSequentially) {
  // Small appends, then appends larger than the 64 KiB write buffer.
  std::string expected;
  auto file = env_->NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok()) << file.status();
  for (size_t n : {0u, 1u, 100u, 70000u, 5u, 200000u, 65536u, 3u}) {
    const std::string piece = PatternBytes(n, n);
    ASSERT_TRUE((*file)->Append(piece).ok());
    expected += piece;
  }
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(env_->GetFileSize(Path("f")).value(), expected.size());

  for (size_t chunk : {1u, 7u, 4096u, 1u << 20}) {
    if (chunk == 1 && expected.size() > 100000) {
      // Byte-by-byte only over a prefix, to stay fast.
      auto seq = env_->NewSequentialFile(Path("f"));
      ASSERT_TRUE(seq.ok());
      char c;
      for (int i = 0; i < 1000; ++i) {
        std::string_view got;
        ASSERT_TRUE((*seq)->Read(1, &got, &c).ok());
        ASSERT_EQ(got, std::string_view(&expected[i], 1));
      }
      continue;
    }
    auto seq = env_->NewSequentialFile(Path("f"));
    ASSERT_TRUE(seq.ok());
    EXPECT_EQ(ReadWhole(seq->get(), chunk), expected) << chunk;
  }
}

TEST_P(EnvTest, SequentialSkip) {
  WriteFile("f", "0123456789");
  auto seq = env_->NewSequentialFile(Path("f"));
  ASSERT_TRUE(seq.ok());
  char scratch[4];
  std::string_view got;
  ASSERT_TRUE((*seq)->Read(2, &got, scratch).ok());
  EXPECT_EQ(got, "01");
  ASSERT_TRUE((*seq)->Skip(5).ok());
  ASSERT_TRUE((*seq)->Read(4, &got, scratch).ok());
  EXPECT_EQ(got, "789");  // short read at the end
  ASSERT_TRUE((*seq)->Skip(100).ok());
  ASSERT_TRUE((*seq)->Read(4, &got, scratch).ok());
  EXPECT_TRUE(got.empty());
}

TEST_P(EnvTest, RandomAccessReads) {
  const std::string data = PatternBytes(100000, 3);
  WriteFile("r", data);
  auto file = env_->NewRandomAccessFile(Path("r"));
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<char> scratch(5000);
  std::string_view got;
  ASSERT_TRUE((*file)->Read(12345, 5000, &got, scratch.data()).ok());
  EXPECT_EQ(got, std::string_view(data).substr(12345, 5000));
  ASSERT_TRUE((*file)->Read(0, 1, &got, scratch.data()).ok());
  EXPECT_EQ(got, std::string_view(data).substr(0, 1));
  // Reads crossing the end are short; reads past it are empty.
  ASSERT_TRUE((*file)->Read(99990, 100, &got, scratch.data()).ok());
  EXPECT_EQ(got, std::string_view(data).substr(99990));
  ASSERT_TRUE((*file)->Read(200000, 100, &got, scratch.data()).ok());
  EXPECT_TRUE(got.empty());
}

TEST_P(EnvTest, FlushMakesDataVisibleToReaders) {
  auto file = env_->NewWritableFile(Path("log"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("record-1").ok());
  ASSERT_TRUE((*file)->Flush().ok());
  EXPECT_EQ(ReadFile("log"), "record-1");
  ASSERT_TRUE((*file)->Append("record-2").ok());
  ASSERT_TRUE((*file)->Flush().ok());
  EXPECT_EQ(ReadFile("log"), "record-1record-2");
  EXPECT_EQ(env_->GetFileSize(Path("log")).value(), 16u);
  ASSERT_TRUE((*file)->Close().ok());
}

TEST_P(EnvTest, WritesAfterCloseFail) {
  auto file = env_->NewWritableFile(Path("c"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("x").ok());
  ASSERT_TRUE((*file)->Close().ok());
  absl::Status s = (*file)->Append("y");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(Path("c")), std::string::npos) << s;
  EXPECT_FALSE((*file)->Sync().ok());
  EXPECT_EQ(ReadFile("c"), "x");
}

TEST_P(EnvTest, NewWritableFileTruncatesAndAppendableAppends) {
  WriteFile("t", "old contents");
  WriteFile("t", "new");
  EXPECT_EQ(ReadFile("t"), "new");

  auto app = env_->NewAppendableFile(Path("t"));
  ASSERT_TRUE(app.ok());
  ASSERT_TRUE((*app)->Append("+more").ok());
  ASSERT_TRUE((*app)->Close().ok());
  EXPECT_EQ(ReadFile("t"), "new+more");

  // Appendable creates a missing file.
  auto fresh = env_->NewAppendableFile(Path("fresh"));
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE((*fresh)->Append("a").ok());
  ASSERT_TRUE((*fresh)->Close().ok());
  EXPECT_EQ(ReadFile("fresh"), "a");
}

TEST_P(EnvTest, RenameReplacesTarget) {
  WriteFile("src", "new");
  WriteFile("dst", "old");
  ASSERT_TRUE(env_->RenameFile(Path("src"), Path("dst")).ok());
  EXPECT_FALSE(env_->FileExists(Path("src")));
  EXPECT_EQ(ReadFile("dst"), "new");
  ASSERT_TRUE(env_->SyncDir(dir_).ok());

  absl::Status s = env_->RenameFile(Path("nope"), Path("dst"));
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(Path("nope")), std::string::npos) << s;
  EXPECT_EQ(ReadFile("dst"), "new");
}

TEST_P(EnvTest, LinkGivesASecondNameToTheSameFile) {
  WriteFile("a", "shared");
  ASSERT_TRUE(env_->LinkFile(Path("a"), Path("b")).ok());
  EXPECT_EQ(ReadFile("b"), "shared");
  // Removing one name leaves the other.
  ASSERT_TRUE(env_->RemoveFile(Path("a")).ok());
  EXPECT_EQ(ReadFile("b"), "shared");
  ASSERT_TRUE(env_->SyncDir(dir_).ok());

  WriteFile("c", "other");
  absl::Status s = env_->LinkFile(Path("b"), Path("c"));
  EXPECT_FALSE(s.ok()) << "linking over an existing name";
  EXPECT_FALSE(absl::IsUnimplemented(s)) << s;
  EXPECT_EQ(ReadFile("c"), "other");
  s = env_->LinkFile(Path("nope"), Path("d"));
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(Path("nope")), std::string::npos) << s;
  EXPECT_FALSE(env_->FileExists(Path("d")));
}

TEST_P(EnvTest, ChildrenExistenceRemoval) {
  WriteFile("a", "1");
  WriteFile("b", "22");
  WriteFile("c", "");
  auto children = env_->GetChildren(dir_);
  ASSERT_TRUE(children.ok()) << children.status();
  std::sort(children->begin(), children->end());
  EXPECT_EQ(*children, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(env_->FileExists(Path("b")));
  EXPECT_EQ(env_->GetFileSize(Path("b")).value(), 2u);
  EXPECT_EQ(env_->GetFileSize(Path("c")).value(), 0u);

  ASSERT_TRUE(env_->RemoveFile(Path("b")).ok());
  EXPECT_FALSE(env_->FileExists(Path("b")));
  children = env_->GetChildren(dir_);
  ASSERT_TRUE(children.ok());
  std::sort(children->begin(), children->end());
  EXPECT_EQ(*children, (std::vector<std::string>{"a", "c"}));
}

TEST_P(EnvTest, Directories) {
  const std::string sub = Path("sub");
  ASSERT_TRUE(env_->CreateDir(sub).ok());
  ASSERT_TRUE(env_->CreateDir(sub).ok());  // already exists: fine
  EXPECT_TRUE(env_->FileExists(sub));
  auto children = env_->GetChildren(dir_);
  ASSERT_TRUE(children.ok());
  EXPECT_EQ(*children, std::vector<std::string>{"sub"});
  auto empty = env_->GetChildren(sub);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(env_->SyncDir(sub).ok());

  // A directory with a file in it cannot be removed.
  auto f = env_->NewWritableFile(sub + "/x");
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_FALSE(env_->RemoveDir(sub).ok());
  ASSERT_TRUE(env_->RemoveFile(sub + "/x").ok());
  ASSERT_TRUE(env_->RemoveDir(sub).ok());
  EXPECT_FALSE(env_->FileExists(sub));
  EXPECT_TRUE(absl::IsNotFound(env_->GetChildren(sub).status()));
}

TEST_P(EnvTest, ErrorsNameTheFile) {
  const std::string missing = Path("missing-file");
  auto expect_not_found = [&](const absl::Status& s) {
    EXPECT_TRUE(absl::IsNotFound(s)) << s;
    EXPECT_NE(s.message().find(missing), std::string::npos) << s;
  };
  expect_not_found(env_->NewSequentialFile(missing).status());
  expect_not_found(env_->NewRandomAccessFile(missing).status());
  expect_not_found(env_->GetFileSize(missing).status());
  expect_not_found(env_->RemoveFile(missing));
  expect_not_found(env_->GetChildren(missing).status());
  expect_not_found(env_->RemoveDir(missing));
  expect_not_found(env_->SyncDir(missing));
  EXPECT_FALSE(env_->FileExists(missing));
}

TEST_P(EnvTest, LockTwiceFails) {
  const std::string lock_name = Path("LOCK");
  auto lock = env_->LockFile(lock_name);
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_TRUE(env_->FileExists(lock_name));  // created if missing
  auto again = env_->LockFile(lock_name);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find(lock_name), std::string::npos)
      << again.status();
  // Another file can be locked meanwhile.
  auto other = env_->LockFile(Path("LOCK2"));
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(env_->UnlockFile(*std::move(other)).ok());

  ASSERT_TRUE(env_->UnlockFile(*std::move(lock)).ok());
  auto relock = env_->LockFile(lock_name);
  ASSERT_TRUE(relock.ok()) << relock.status();
  // A lock dropped without UnlockFile is released too.
  relock->reset();
  auto after_drop = env_->LockFile(lock_name);
  ASSERT_TRUE(after_drop.ok()) << after_drop.status();
  ASSERT_TRUE(env_->UnlockFile(*std::move(after_drop)).ok());
}

TEST_P(EnvTest, ScheduleRunsInOrderOnOneThread) {
  Mutex mu;
  CondVar cv;
  std::vector<int> order;
  std::vector<std::thread::id> thread_ids;
  constexpr int kItems = 100;
  for (int i = 0; i < kItems; ++i) {
    env_->Schedule([&, i] {
      MutexLock lock(&mu);
      order.push_back(i);
      thread_ids.push_back(std::this_thread::get_id());
      cv.SignalAll();
    });
  }
  MutexLock lock(&mu);
  while (order.size() < kItems) {
    ASSERT_FALSE(cv.WaitForMicros(&mu, 10'000'000)) << "background work stuck";
  }
  std::vector<int> expected(kItems);
  for (int i = 0; i < kItems; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
  EXPECT_NE(thread_ids[0], std::this_thread::get_id());
  EXPECT_TRUE(
      std::all_of(thread_ids.begin(), thread_ids.end(),
                  [&](std::thread::id id) { return id == thread_ids[0]; }));
}

TEST_P(EnvTest, ClockMovesForwardAndSleeps) {
  const uint64_t start = env_->NowMicros();
  env_->SleepForMicroseconds(2000);
  const uint64_t end = env_->NowMicros();
  EXPECT_GE(end - start, 2000u);
  EXPECT_LT(end - start, 2000000u);
}

INSTANTIATE_TEST_SUITE_P(Envs, EnvTest,
                         testing::Values(EnvKind::kPosix, EnvKind::kMem),
                         [](const testing::TestParamInfo<EnvKind>& info) {
                           return info.param == EnvKind::kPosix ? "Posix"
                                                                : "Mem";
                         });

// Concurrency: many readers of one file, readers racing an appender, many
// threads scheduling work.
class EnvConcurrencyTest : public EnvTest {};

TEST_P(EnvConcurrencyTest, ParallelRandomReads) {
  const std::string data = PatternBytes(100000, 3);
  WriteFile("r", data);
  auto file = env_->NewRandomAccessFile(Path("r"));
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Random r(t);
      std::vector<char> buf(1000);
      for (int i = 0; i < 500; ++i) {
        const uint64_t off = r.Uniform(data.size() - 1000);
        std::string_view v;
        if (!(*file)->Read(off, 1000, &v, buf.data()).ok() ||
            v != std::string_view(data).substr(off, 1000)) {
          mismatches.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_P(EnvConcurrencyTest, ReadersSeeAPrefixOfWhatIsAppended) {
  const std::string data = PatternBytes(64 * 1000, 5);
  auto writer = env_->NewWritableFile(Path("grow"));
  ASSERT_TRUE(writer.ok());
  auto reader = env_->NewRandomAccessFile(Path("grow"));
  ASSERT_TRUE(reader.ok());
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread read_thread([&] {
    std::vector<char> buf(data.size());
    while (!done.load()) {
      std::string_view v;
      if (!(*reader)->Read(0, buf.size(), &v, buf.data()).ok() ||
          v != std::string_view(data).substr(0, v.size())) {
        bad.fetch_add(1);
      }
    }
  });
  for (size_t off = 0; off < data.size(); off += 1000) {
    ASSERT_TRUE(
        (*writer)->Append(std::string_view(data).substr(off, 1000)).ok());
    ASSERT_TRUE((*writer)->Flush().ok());
  }
  done.store(true);
  read_thread.join();
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ReadFile("grow"), data);
}

TEST_P(EnvConcurrencyTest, ScheduleFromManyThreads) {
  Mutex mu;
  CondVar cv;
  std::vector<int> seen;
  constexpr int kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        env_->Schedule([&, t, i] {
          MutexLock lock(&mu);
          seen.push_back(t * 1000 + i);
          cv.SignalAll();
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  MutexLock lock(&mu);
  while (seen.size() < 4 * kPerThread) {
    ASSERT_FALSE(cv.WaitForMicros(&mu, 10'000'000)) << "background work stuck";
  }
  // Each thread's items ran in the order that thread scheduled them.
  for (int t = 0; t < 4; ++t) {
    int last = -1;
    for (int v : seen) {
      if (v / 1000 != t) continue;
      EXPECT_EQ(v % 1000, last + 1);
      last = v % 1000;
    }
    EXPECT_EQ(last, kPerThread - 1);
  }
}

TEST_P(EnvConcurrencyTest, LockRaceHasOneWinner) {
  std::atomic<int> winners{0};
  std::vector<std::unique_ptr<FileLock>> locks(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto lock = env_->LockFile(Path("LOCK"));
      if (lock.ok()) {
        winners.fetch_add(1);
        locks[t] = *std::move(lock);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(winners.load(), 1);
  for (auto& l : locks) {
    if (l != nullptr) {
      ASSERT_TRUE(env_->UnlockFile(std::move(l)).ok());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Envs, EnvConcurrencyTest,
                         testing::Values(EnvKind::kPosix, EnvKind::kMem),
                         [](const testing::TestParamInfo<EnvKind>& info) {
                           return info.param == EnvKind::kPosix ? "Posix"
                                                                : "Mem";
                         });

TEST(PosixEnvTest, NoSpaceIsUnavailableAndNamesTheFile) {
  Env* env = Env::Default();
  auto file = env->NewAppendableFile("/dev/full");
  if (!file.ok()) GTEST_SKIP() << "/dev/full unavailable: " << file.status();
  ASSERT_TRUE((*file)->Append("some bytes").ok());  // buffered
  absl::Status s = (*file)->Flush();
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_NE(s.message().find("/dev/full"), std::string::npos) << s;
  EXPECT_NE(s.message().find("No space left"), std::string::npos) << s;
  // Writing more than the buffer reports the error from Append itself.
  EXPECT_TRUE(absl::IsUnavailable((*file)->Append(std::string(200000, 'x'))));
}

TEST(PosixEnvTest, OtherErrorsAreInternal) {
  Env* env = Env::Default();
  // A directory cannot be opened for writing: EISDIR.
  test::ScratchDir scratch("isdir");
  const std::string& dir = scratch.path();
  absl::Status s = env->NewWritableFile(dir).status();
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_NE(s.message().find(dir), std::string::npos) << s;
  EXPECT_TRUE(env->RemoveDir(dir).ok());
}

// The POSIX Env's log files are written through a mapping of space reserved
// ahead: readers see every flushed byte and zeros after it, Close trims the
// file to what was appended, and a closed file refuses more.
TEST(PosixEnvTest, LogFileShowsFlushedBytesThenZerosAndIsTrimmedAtClose) {
  Env* env = Env::Default();
  test::ScratchDir scratch("logfile");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/000007.log";
  auto file = env->NewLogFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  Random rnd(301);
  std::string expected;
  // Past several windows (64 KiB, growing to 1 MiB), with pieces of 0-7
  // bytes (shorter than the 8-byte store) among them.
  for (int i = 0; expected.size() < (size_t{3} << 20); ++i) {
    const size_t n = i % 5 == 0 ? rnd.Uniform(8) : rnd.Uniform(32768) + 1;
    const std::string piece = PatternBytes(n, i);
    ASSERT_TRUE((*file)->Append(piece).ok());
    ASSERT_TRUE((*file)->Flush().ok());
    expected += piece;
    if (i % 97 == 0) {
      auto seq = env->NewSequentialFile(path);
      ASSERT_TRUE(seq.ok());
      const std::string now = ReadWhole(seq->get(), 1 << 16);
      ASSERT_GE(now.size(), expected.size());
      ASSERT_EQ(now.substr(0, expected.size()), expected) << i;
      ASSERT_EQ(now.find_first_not_of('\0', expected.size()), std::string::npos)
          << i;
    }
  }
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(env->GetFileSize(path).value(), expected.size());
  auto seq = env->NewSequentialFile(path);
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(ReadWhole(seq->get(), 1 << 16), expected);
  EXPECT_TRUE(absl::IsFailedPrecondition((*file)->Append("x")));
  EXPECT_TRUE(absl::IsFailedPrecondition((*file)->Flush()));
  EXPECT_TRUE(absl::IsFailedPrecondition((*file)->Sync()));
  EXPECT_TRUE(env->RemoveFile(path).ok());
  EXPECT_TRUE(env->RemoveDir(dir).ok());
}

// What a process killed while writing leaves: every flushed byte, then the
// reserved space as zeros (it was never trimmed).
TEST(PosixEnvTest, LogFileKeepsFlushedBytesWhenTheProcessIsKilled) {
  Env* env = Env::Default();
  test::ScratchDir scratch("logkill");
  const std::string& dir = scratch.path();
  const std::string path = dir + "/000009.log";
  std::string expected;
  for (int i = 0; i < 300; ++i) expected += PatternBytes(100 + i, i);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto file = Env::Default()->NewLogFile(path);
    if (!file.ok()) ::_exit(2);
    for (int i = 0; i < 300; ++i) {
      if (!(*file)->Append(PatternBytes(100 + i, i)).ok() ||
          !(*file)->Flush().ok()) {
        ::_exit(3);
      }
    }
    ::kill(::getpid(), SIGKILL);
    ::_exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  auto seq = env->NewSequentialFile(path);
  ASSERT_TRUE(seq.ok());
  const std::string got = ReadWhole(seq->get(), 1 << 16);
  ASSERT_GT(got.size(), expected.size());  // the reserved tail is still there
  EXPECT_EQ(got.substr(0, expected.size()), expected);
  EXPECT_EQ(got.find_first_not_of('\0', expected.size()), std::string::npos);
  EXPECT_TRUE(env->RemoveFile(path).ok());
  EXPECT_TRUE(env->RemoveDir(dir).ok());
}

// fcntl record locks belong to the process and drop when any descriptor of
// the file closes; the Env's locks must conflict between handles of one
// process however the path is spelled, and a refused attempt must leave the
// holder's lock in place.
TEST(PosixEnvTest, LockIsPerFileNotPerPathSpelling) {
  Env* env = Env::Default();
  test::ScratchDir scratch("lockname");
  const std::string& dir = scratch.path();
  const std::string lock_name = dir + "/LOCK";
  const std::string link_name = dir + "/LINK";
  ASSERT_EQ(::symlink("LOCK", link_name.c_str()), 0);
  auto lock = env->LockFile(lock_name);
  ASSERT_TRUE(lock.ok()) << lock.status();

  auto other_process_can_lock = [&]() -> bool {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(lock_name.c_str(), O_RDWR);
      struct flock f = {};
      f.l_type = F_WRLCK;
      f.l_whence = SEEK_SET;
      _exit(fd >= 0 && ::fcntl(fd, F_SETLK, &f) == 0 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  for (const std::string& spelling :
       {lock_name, dir + "/./LOCK", dir + "//LOCK", link_name}) {
    SCOPED_TRACE(spelling);
    auto again = env->LockFile(spelling);
    ASSERT_FALSE(again.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
    EXPECT_NE(again.status().message().find(spelling), std::string::npos)
        << again.status();
    EXPECT_FALSE(other_process_can_lock());
  }
  ASSERT_TRUE(env->UnlockFile(*std::move(lock)).ok());
  EXPECT_TRUE(other_process_can_lock());
  auto through_link = env->LockFile(link_name);
  ASSERT_TRUE(through_link.ok()) << through_link.status();
  EXPECT_FALSE(env->LockFile(lock_name).ok());
  ASSERT_TRUE(env->UnlockFile(*std::move(through_link)).ok());

  ASSERT_TRUE(env->RemoveFile(link_name).ok());
  ASSERT_TRUE(env->RemoveFile(lock_name).ok());
  ASSERT_TRUE(env->RemoveDir(dir).ok());
}

TEST(PosixEnvTest, PermissionDeniedNamesTheFile) {
  Env* env = Env::Default();
  test::ScratchDir scratch("perm");
  const std::string& dir = scratch.path();
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  const std::string fname = dir + "/private";
  {
    auto file = env->NewWritableFile(fname);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Close().ok());
  }
  ASSERT_EQ(::chmod(fname.c_str(), 0000), 0);
  const std::string subdir = dir + "/closed";
  ASSERT_TRUE(env->CreateDir(subdir).ok());
  ASSERT_EQ(::chmod(subdir.c_str(), 0000), 0);

  EXPECT_TRUE(test::RunUnprivileged([&] {
    auto denied = [](const absl::Status& s, const std::string& name) {
      const bool ok =
          absl::IsPermissionDenied(s) &&
          s.message().find(name) != std::string::npos &&
          s.message().find("Permission denied") != std::string::npos;
      if (!ok) std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return ok;
    };
    return denied(env->NewSequentialFile(fname).status(), fname) &&
           denied(env->NewWritableFile(fname).status(), fname) &&
           denied(env->GetChildren(subdir).status(), subdir) &&
           denied(env->GetFileSize(subdir + "/x").status(), subdir) &&
           denied(env->LockFile(fname).status(), fname);
  }));

  ASSERT_TRUE(env->RemoveFile(fname).ok());
  ASSERT_TRUE(env->RemoveDir(subdir).ok());
  ASSERT_TRUE(env->RemoveDir(dir).ok());
}

TEST(PosixEnvTest, LockExcludesOtherProcesses) {
  Env* env = Env::Default();
  test::ScratchDir scratch("lock");
  const std::string& dir = scratch.path();
  const std::string lock_name = dir + "/LOCK";
  auto lock = env->LockFile(lock_name);
  ASSERT_TRUE(lock.ok()) << lock.status();

  // A child process tries the same fcntl lock; exit code 0 means it failed
  // to take it (as it must). Only async-signal-safe calls after fork.
  auto child_can_lock = [&]() -> int {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(lock_name.c_str(), O_RDWR);
      struct flock f = {};
      f.l_type = F_WRLCK;
      f.l_whence = SEEK_SET;
      _exit(fd >= 0 && ::fcntl(fd, F_SETLK, &f) == 0 ? 1 : 0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(child_can_lock(), 0);
  ASSERT_TRUE(env->UnlockFile(*std::move(lock)).ok());
  EXPECT_EQ(child_can_lock(), 1);

  ASSERT_TRUE(env->RemoveFile(lock_name).ok());
  ASSERT_TRUE(env->RemoveDir(dir).ok());
}

TEST(MemEnvTest, ReaderSeesDataAppendedConcurrently) {
  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
  auto writer = env->NewWritableFile("/f");
  ASSERT_TRUE(writer.ok());
  auto reader = env->NewRandomAccessFile("/f");
  ASSERT_TRUE(reader.ok());
  char scratch[8];
  std::string_view got;
  ASSERT_TRUE((*reader)->Read(0, 8, &got, scratch).ok());
  EXPECT_TRUE(got.empty());
  ASSERT_TRUE((*writer)->Append("abc").ok());
  ASSERT_TRUE((*reader)->Read(0, 8, &got, scratch).ok());
  EXPECT_EQ(got, "abc");
  // Removing the name does not disturb open files.
  ASSERT_TRUE(env->RemoveFile("/f").ok());
  ASSERT_TRUE((*reader)->Read(1, 8, &got, scratch).ok());
  EXPECT_EQ(got, "bc");
}

TEST(MemEnvTest, ChildrenOfNestedPathsAndNormalization) {
  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
  for (const char* name : {"/d/a", "/d/sub/b", "/d/sub/c", "/dx/z"}) {
    auto f = env->NewWritableFile(name);
    ASSERT_TRUE(f.ok());
  }
  auto children = env->GetChildren("/d/");
  ASSERT_TRUE(children.ok());
  std::sort(children->begin(), children->end());
  EXPECT_EQ(*children, (std::vector<std::string>{"a", "sub"}));
  EXPECT_TRUE(env->FileExists("/d//sub/b"));
  EXPECT_EQ(env->GetFileSize("/d/sub//c").value(), 0u);
}

}  // namespace
}  // namespace sift
