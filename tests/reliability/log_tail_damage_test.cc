// Regression tests for a weakness the corruption sweep found in how logs
// (WAL and MANIFEST) end: one damaged byte in the length field of a fragment
// in the last 32 KiB block makes the fragment run past the end of the file,
// and log::Reader (db/log_reader.cc, ReadPhysicalRecord) takes that for the
// write a crash cut short: it ends the log there without a report, even under
// paranoid_checks. Everything after the damaged fragment is dropped:
//   - in the MANIFEST, the version rolls back silently: Get serves stale
//     values, and the tables the dropped edits added are deleted as obsolete;
//   - in the WAL, acknowledged (even synced) writes vanish without an error.
// A write torn by a crash leaves nothing intact after the torn fragment, so
// the reader can tell the two apart by looking for an intact fragment
// (plausible header, matching checksum) in the bytes it is about to drop.
//
// log::Reader now makes that distinction (FindIntactAfterBadLength): a
// fragment whose checksum still matches up to the end of the file, or an
// intact fragment behind the damaged one, is reported as damage.
//
// kvtool reads logs with the same log::Reader (its diagnostic reporter), so
// `kvtool verify` flags the damage too instead of passing it as a torn tail
// (KvtoolFlagsLengthDamageInTheLastBlock).

#include <sys/wait.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/reliability/reliability_util.h"

namespace sift::reliability {
namespace {

constexpr char kDb[] = "/tail";

class LogTailDamageTest : public testing::Test {
 protected:
  LogTailDamageTest() : env_(NewMemEnv(Env::Default())) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    options_.paranoid_checks = true;
  }

  absl::StatusOr<std::unique_ptr<DB>> Open() { return DB::Open(options_, kDb); }

  // XOR `mask` into the high byte of the length field of the last fragment of
  // log file `name` (all records of these tests are single fragments in one
  // block), so that it claims to run past the end of the file.
  void DamageLastLength(const std::string& name, int back, char mask) {
    absl::StatusOr<std::map<std::string, std::string>> files =
        ReadEnvDir(env_.get(), kDb);
    ASSERT_TRUE(files.ok()) << files.status();
    std::string& log = (*files)[name];
    // Walk the fragments to the one `back` from the end.
    std::vector<size_t> headers;
    for (size_t p = 0; p + 7 <= log.size();) {
      headers.push_back(p);
      p += 7 + (static_cast<uint8_t>(log[p + 4]) |
                static_cast<size_t>(static_cast<uint8_t>(log[p + 5])) << 8);
    }
    ASSERT_GT(headers.size(), static_cast<size_t>(back));
    log[headers[headers.size() - 1 - back] + 5] ^= mask;
    env_ = NewMemEnv(Env::Default());
    options_.env = env_.get();
    ASSERT_TRUE(WriteEnvDir(env_.get(), kDb, *files).ok());
  }

  std::string FileNamed(const std::string& prefix, const std::string& suffix) {
    absl::StatusOr<std::vector<std::string>> children = env_->GetChildren(kDb);
    EXPECT_TRUE(children.ok());
    std::string found;
    for (const std::string& c : *children) {
      if (absl::StartsWith(c, prefix) && absl::EndsWith(c, suffix)) found = c;
    }
    return found;
  }

  std::unique_ptr<Env> env_;
  Options options_;
};

TEST_F(LogTailDamageTest, ManifestLengthDamageIsNotTakenForATornTail) {
  {
    absl::StatusOr<std::unique_ptr<DB>> db = Open();
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "old").ok());
    ASSERT_TRUE((*db)->Flush().ok());
  }
  {
    // A new MANIFEST (snapshot, recovery edit), then an edit adding a table.
    absl::StatusOr<std::unique_ptr<DB>> db = Open();
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "new").ok());
    ASSERT_TRUE((*db)->Flush().ok());
  }
  const std::string manifest = FileNamed("MANIFEST-", "");
  ASSERT_FALSE(manifest.empty());
  ASSERT_NO_FATAL_FAILURE(DamageLastLength(manifest, 0, '\x40'));

  absl::StatusOr<std::unique_ptr<DB>> db = Open();
  if (!db.ok()) {
    EXPECT_TRUE(absl::IsDataLoss(db.status())) << db.status();
    return;
  }
  // If it opens, it must not have rolled the version back to "old".
  std::string value;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "new") << "the MANIFEST rolled back silently";
}

TEST_F(LogTailDamageTest, WalLengthDamageFailsParanoidOpen) {
  {
    absl::StatusOr<std::unique_ptr<DB>> db = Open();
    ASSERT_TRUE(db.ok()) << db.status();
    WriteOptions sync;
    sync.sync = true;
    ASSERT_TRUE((*db)->Put(sync, "a", "1").ok());
    ASSERT_TRUE((*db)->Put(sync, "b", "2").ok());
    ASSERT_TRUE((*db)->Put(sync, "c", "3").ok());
  }
  const std::string wal = FileNamed("", ".log");
  ASSERT_FALSE(wal.empty());
  // The first of the three records: "b" and "c" are intact behind it.
  ASSERT_NO_FATAL_FAILURE(DamageLastLength(wal, 2, '\x40'));

  absl::StatusOr<std::unique_ptr<DB>> db = Open();
  // Under paranoid_checks the damage fails Open instead of dropping "a",
  // "b" and "c" as a torn tail.
  EXPECT_TRUE(absl::IsDataLoss(db.status())) << db.status();
}

#ifdef SIFT_KVTOOL_PATH
TEST_F(LogTailDamageTest, KvtoolFlagsLengthDamageInTheLastBlock) {
  {
    absl::StatusOr<std::unique_ptr<DB>> db = Open();
    ASSERT_TRUE(db.ok()) << db.status();
    WriteOptions sync;
    sync.sync = true;
    ASSERT_TRUE((*db)->Put(sync, "a", "1").ok());
    ASSERT_TRUE((*db)->Put(sync, "b", "2").ok());
  }
  ASSERT_NO_FATAL_FAILURE(DamageLastLength(FileNamed("", ".log"), 1, '\x40'));
  absl::StatusOr<std::map<std::string, std::string>> files =
      ReadEnvDir(env_.get(), kDb);
  ASSERT_TRUE(files.ok()) << files.status();
  ScratchDir dir("tail");
  const std::string dbname = dir.path() + "/db";
  ASSERT_TRUE(WriteEnvDir(Env::Default(), dbname, *files).ok());
  const std::string out = dir.path() + "/kvtool.out";
  const int status = RunProgram({SIFT_KVTOOL_PATH, "verify", dbname}, out);
  // Damage, not a torn tail: "b" is intact behind it.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1)
      << "status " << status << ": " << ReadDiskFile(out);
}
#endif  // SIFT_KVTOOL_PATH

}  // namespace
}  // namespace sift::reliability
