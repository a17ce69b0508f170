// The process-kill campaign: run crash_writer (random puts, deletes and
// batches on a database on disk, with flushes and compactions; one writer
// thread or three, whose writes then commit in groups), SIGKILL it at a
// random moment, reopen the database with paranoid_checks and check it
// against the writer's journal. A process kill loses nothing the operating
// system has been handed, so every acknowledged operation must be there,
// sync or not; each writer thread's one operation in flight may be there
// or not, atomically.
// Then start the writer again on the same database, and again.
//
// 50 kills per run; SIFT_LONG=1 runs SIFT_KILLS (default 2000).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "tests/reliability/journal.h"
#include "tests/reliability/reliability_util.h"
#include "util/random.h"

extern char** environ;

namespace sift::reliability {
namespace {

// Start crash_writer with its stderr going to `err_path`.
pid_t SpawnWriter(const std::vector<std::string>& args,
                  const std::string& err_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(SIFT_CRASH_WRITER_PATH));
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, SIFT_CRASH_WRITER_PATH, &actions, nullptr,
                             argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

constexpr int kWriterThreads = 3;

struct CampaignStats {
  uint64_t kills = 0;
  uint64_t kills_before_first_op = 0;  // landed in Open (recovery)
  uint64_t acked_ops = 0;
  uint64_t acked_sync_ops = 0;
  uint64_t in_flight_applied = 0;
  uint64_t in_flight_absent = 0;
  uint64_t keys_checked = 0;
  uint64_t kvtool_verified = 0;
};

// Options as the writer uses them (any would do for reading), with every
// check on: a killed process must leave nothing damaged behind.
Options CheckOptions() {
  Options options;
  options.paranoid_checks = true;
  options.write_buffer_size = 32 << 10;
  options.max_file_size = 64 << 10;
  options.block_size = 1024;
  return options;
}

// The writer thread that owns `key` ("<thread>:key<n>").
int OwnerOf(const std::string& key) { return std::atoi(key.c_str()); }

// The entries of `map` owned by writer thread `thread`.
KvMap Part(const KvMap& map, int thread) {
  const std::string prefix = absl::StrCat(thread, ":");
  KvMap out;
  for (auto it = map.lower_bound(prefix);
       it != map.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    out.insert(*it);
  }
  return out;
}

// Check the database at `dbname` against `*model` (the state verified after
// the previous kill) plus the journals of the run just killed, one per writer
// thread (journals[t]); on success *model becomes the state found. Writer
// threads own disjoint keys, so each thread's one operation in flight is
// judged on its own: present or absent, atomically.
void VerifyAfterKill(const std::string& dbname,
                     const std::vector<std::vector<JournalOp>>& journals,
                     KvMap* model, CampaignStats* stats) {
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(CheckOptions(), dbname);
  ASSERT_TRUE(db.ok()) << "reopen after kill " << stats->kills << ": "
                       << db.status();
  absl::StatusOr<KvMap> actual = ReadAll(db->get());
  ASSERT_TRUE(actual.ok()) << actual.status();
  for (const auto& [k, v] : *actual) {
    ASSERT_TRUE(OwnerOf(k) >= 0 &&
                OwnerOf(k) < static_cast<int>(journals.size()))
        << "a key no writer owns: " << k;
  }

  KvMap found_all;
  std::vector<std::string> probes = {"0:key99999"};  // never written
  for (int t = 0; t < static_cast<int>(journals.size()); ++t) {
    KvMap without = Part(*model, t);  // acknowledged ops, not the in-flight one
    const JournalOp* in_flight = nullptr;
    for (const JournalOp& op : journals[t]) {
      if (op.acked) {
        ApplyOp(op, &without);
        ++stats->acked_ops;
        stats->acked_sync_ops += op.sync ? 1 : 0;
      } else {
        in_flight = &op;  // ParseJournal guarantees it is the last one
      }
    }
    const KvMap part = Part(*actual, t);
    if (part == without) {
      if (in_flight != nullptr) ++stats->in_flight_absent;
    } else {
      KvMap with = without;
      if (in_flight != nullptr) ApplyOp(*in_flight, &with);
      ASSERT_TRUE(in_flight != nullptr && part == with)
          << "after kill " << stats->kills << ", writer thread " << t << " ("
          << journals[t].size()
          << " ops journaled, one in flight: " << (in_flight != nullptr)
          << "): " << DescribeDiff(without, part);
      ++stats->in_flight_applied;
    }
    found_all.insert(part.begin(), part.end());
    for (const auto& [k, v] : without) probes.push_back(k);
    if (in_flight != nullptr) {
      for (const JournalUpdate& u : in_flight->updates) probes.push_back(u.key);
    }
  }

  // Point reads must agree with the scan, for present and absent keys.
  for (const std::string& key : probes) {
    std::string value;
    absl::Status s = (*db)->Get(ReadOptions(), key, &value);
    auto it = found_all.find(key);
    if (it == found_all.end()) {
      ASSERT_TRUE(absl::IsNotFound(s)) << key << ": " << s;
    } else {
      ASSERT_TRUE(s.ok()) << key << ": " << s;
      ASSERT_EQ(value, it->second) << key;
    }
    ++stats->keys_checked;
  }
  *model = std::move(found_all);
}

// The journals of writer threads 0..threads-1 under `prefix`.
std::vector<std::vector<JournalOp>> ReadJournals(const std::string& prefix,
                                                 int threads) {
  std::vector<std::vector<JournalOp>> journals;
  for (int t = 0; t < threads; ++t) {
    absl::StatusOr<std::vector<JournalOp>> ops =
        ParseJournal(ReadDiskFile(absl::StrCat(prefix, ".", t)));
    EXPECT_TRUE(ops.ok()) << ops.status();
    journals.push_back(ops.ok() ? *std::move(ops) : std::vector<JournalOp>());
  }
  return journals;
}

// A writer that runs to completion and exits cleanly leaves exactly what it
// journaled: the harness itself is sound.
TEST(ProcessKillTest, CleanExitKeepsEverything) {
  ScratchDir dir("cleanexit");
  const std::string dbname = dir.path() + "/db";
  const std::string journal = dir.path() + "/journal";
  const pid_t pid =
      SpawnWriter({dbname, journal, "7", "--threads=3", "--max-ops=500"},
                  dir.path() + "/writer.err");
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status << ": "
      << ReadDiskFile(dir.path() + "/writer.err");
  const std::vector<std::vector<JournalOp>> journals = ReadJournals(journal, 3);
  for (const auto& ops : journals) ASSERT_EQ(ops.size(), 500u);
  KvMap model;
  CampaignStats stats;
  VerifyAfterKill(dbname, journals, &model, &stats);
  EXPECT_EQ(stats.acked_ops, 1500u);
  EXPECT_EQ(stats.in_flight_absent + stats.in_flight_applied, 0u);
  EXPECT_GT(model.size(), 500u);
}

TEST(ProcessKillTest, RandomKillsLoseNothingAcknowledged) {
  const int kills =
      LongMode() ? static_cast<int>(IntFromEnv("SIFT_KILLS", 2000)) : 50;
  const uint64_t seed = static_cast<uint64_t>(IntFromEnv("SIFT_SEED", 4242));
  // Instrumented writers are several times slower: give them longer.
  const uint64_t max_delay_ms = Sanitized() ? 500 : 300;
  ScratchDir dir("kill");
  const std::string dbname = dir.path() + "/db";
  const std::string journal = dir.path() + "/journal";
  const std::string err = dir.path() + "/writer.err";
  Random rnd(seed);
  KvMap model;
  CampaignStats stats;
  const auto start = std::chrono::steady_clock::now();

  for (int round = 0; round < kills; ++round) {
    // One writer thread in every other round, three (group commits) else.
    const int threads = round % 2 == 0 ? 1 : kWriterThreads;
    for (int t = 0; t < kWriterThreads; ++t) {
      std::remove(absl::StrCat(journal, ".", t).c_str());
    }
    const pid_t pid =
        SpawnWriter({dbname, journal, absl::StrCat(seed * 1000003 + round),
                     absl::StrCat("--threads=", threads)},
                    err);
    ASSERT_GT(pid, 0) << "cannot start " << SIFT_CRASH_WRITER_PATH;
    // Mostly in the middle of the write stream; one kill in five early, often
    // while the writer is still opening (recovering) the database.
    const uint64_t delay_ms =
        rnd.OneIn(5) ? rnd.Uniform(40) : 40 + rnd.Uniform(max_delay_ms - 40);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the writer was not killed but ended by itself (status " << status
        << "): " << ReadDiskFile(err);
    ++stats.kills;

    std::vector<std::vector<JournalOp>> journals =
        ReadJournals(journal, threads);
    if (HasFailure()) return;
    if (journals[0].empty()) ++stats.kills_before_first_op;
    // Threads that did not run this round journal nothing.
    journals.resize(kWriterThreads);
#ifdef SIFT_KVTOOL_PATH
    // A kill leaves nothing damaged behind: kvtool verify agrees, on the
    // files exactly as the kill left them (a cut-off WAL tail is not damage).
    // A writer killed before it had created the database (CURRENT comes
    // last; a slow start on a loaded machine) leaves none to verify, and
    // kvtool rightly calls that directory not a database.
    if (round % 5 == 0 && access((dbname + "/CURRENT").c_str(), F_OK) == 0) {
      const std::string out = dir.path() + "/kvtool.out";
      const int status = RunProgram({SIFT_KVTOOL_PATH, "verify", dbname}, out);
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "kvtool verify after kill " << stats.kills << " (status " << status
          << "): " << ReadDiskFile(out);
      ++stats.kvtool_verified;
    }
#endif
    VerifyAfterKill(dbname, journals, &model, &stats);
    if (testing::Test::HasFatalFailure()) return;
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "[ process-kill ] %llu kills (%llu before the first op; 1 and %d "
      "writer threads alternately), %llu acknowledged ops verified (%llu "
      "sync), in-flight ops found applied %llu / absent %llu, %llu point reads "
      "checked, %llu kvtool verify runs clean, "
      "%zu keys at the end, %.1f s, seed %llu\n",
      static_cast<unsigned long long>(stats.kills),
      static_cast<unsigned long long>(stats.kills_before_first_op),
      kWriterThreads, static_cast<unsigned long long>(stats.acked_ops),
      static_cast<unsigned long long>(stats.acked_sync_ops),
      static_cast<unsigned long long>(stats.in_flight_applied),
      static_cast<unsigned long long>(stats.in_flight_absent),
      static_cast<unsigned long long>(stats.keys_checked),
      static_cast<unsigned long long>(stats.kvtool_verified), model.size(),
      seconds, static_cast<unsigned long long>(seed));
  EXPECT_EQ(stats.kills, static_cast<uint64_t>(kills));
  // The campaign must actually exercise the writer.
  EXPECT_GT(stats.acked_ops, static_cast<uint64_t>(kills) * 10);
}

}  // namespace
}  // namespace sift::reliability
