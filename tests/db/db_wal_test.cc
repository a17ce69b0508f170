// Recovery from damaged write-ahead logs: a log cut at any byte of its last
// block recovers a clean prefix of the writes; damage in the middle stops the
// replay there (still a prefix), keeps the log aside and is reported, and
// fails Open under paranoid_checks. A log started by a memtable switch
// links to the log before it, and is replayed only if that log lost nothing.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "db/log_writer.h"
#include "db/wal_link.h"
#include "db/write_batch_internal.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/write_batch.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/fault_env.h"
#include "util/random.h"

namespace sift {
namespace {

constexpr size_t kLogBlock = 32768;
const char kDb[] = "/waldb";

absl::StatusOr<std::string> ReadWholeFile(Env* env, const std::string& path) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  std::string data;
  std::string scratch(65536, '\0');
  while (true) {
    std::string_view chunk;
    absl::Status s = (*file)->Read(scratch.size(), &chunk, scratch.data());
    if (!s.ok()) return s;
    if (chunk.empty()) break;
    data.append(chunk.data(), chunk.size());
  }
  return data;
}

absl::Status WriteWholeFile(Env* env, const std::string& path,
                            std::string_view data) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(path);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Append(data);
  if (s.ok()) s = (*file)->Close();
  return s;
}

std::string ValueFor(int i) {
  Random rnd(i);
  return test::RandomString(&rnd, 100 + static_cast<int>(rnd.Uniform(50)));
}

// A closed database whose only data is in one WAL (a large write buffer
// keeps it from being flushed): its files' contents by name.
struct Image {
  std::vector<std::pair<std::string, std::string>> files;
  std::string log_name;
  int writes = 0;
};

Image MakeImage(size_t min_log_bytes, size_t max_log_bytes) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  Image image;
  {
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return image;
    size_t approx = 0;
    // Enough writes to land the log's end inside [min, max).
    while (approx < (min_log_bytes + max_log_bytes) / 2) {
      const std::string key = test::NumberKey(image.writes, 8);
      const std::string value = ValueFor(image.writes);
      EXPECT_TRUE((*db)->Put(WriteOptions(), key, value).ok());
      approx += key.size() + value.size() + 12 + 3 + 7;
      ++image.writes;
    }
  }
  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(kDb);
  EXPECT_TRUE(children.ok());
  for (const std::string& name : *children) {
    if (name == "LOCK" || name.rfind("LOG", 0) == 0) continue;
    absl::StatusOr<std::string> data =
        ReadWholeFile(env.get(), std::string(kDb) + "/" + name);
    EXPECT_TRUE(data.ok()) << data.status();
    if (name.find(".log") != std::string::npos && !data->empty()) {
      EXPECT_TRUE(image.log_name.empty()) << "one non-empty WAL expected";
      image.log_name = name;
    }
    image.files.emplace_back(name, *data);
  }
  return image;
}

// Open a copy of `image` whose WAL is replaced by `log`; returns the number
// of leading writes found (-1 if the state is not a prefix of the writes).
int OpenAndCountPrefix(const Image& image, std::string_view log, bool paranoid,
                       absl::Status* open_status,
                       std::string* stats = nullptr) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  EXPECT_TRUE(env->CreateDir(kDb).ok());
  for (const auto& [name, data] : image.files) {
    const std::string_view contents =
        name == image.log_name ? log : std::string_view(data);
    EXPECT_TRUE(
        WriteWholeFile(env.get(), std::string(kDb) + "/" + name, contents)
            .ok());
  }
  Options options;
  options.env = env.get();
  options.paranoid_checks = paranoid;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
  *open_status = db.status();
  if (!db.ok()) return -1;
  if (stats != nullptr) *stats = *(*db)->GetProperty("sift.stats");
  std::unique_ptr<Iterator> it = (*db)->NewIterator(ReadOptions());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    if (it->key() != test::NumberKey(n, 8) || it->value() != ValueFor(n)) {
      return -1;
    }
  }
  EXPECT_TRUE(it->status().ok()) << it->status();
  return n;
}

TEST(DBWalTest, TruncatedLastBlockRecoversCleanPrefix) {
  // A log of one full block plus a short last block keeps the number of
  // truncation points (one Open each) modest.
  const Image image = MakeImage(kLogBlock + 1500, kLogBlock + 3500);
  ASSERT_FALSE(image.log_name.empty());
  std::string log;
  for (const auto& [name, data] : image.files) {
    if (name == image.log_name) log = data;
  }
  ASSERT_GT(log.size(), kLogBlock);
  const size_t last_block = (log.size() - 1) / kLogBlock * kLogBlock;
  // Sanitizer builds sample every 11th offset; the ends are always tried.
  const size_t step = std::getenv("SIFT_SANITIZED") != nullptr ? 11 : 1;

  absl::Status s;
  const int at_block_start =
      OpenAndCountPrefix(image, std::string_view(log).substr(0, last_block),
                         /*paranoid=*/true, &s);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_GT(at_block_start, 0);
  int previous = at_block_start;
  int opens = 0;
  for (size_t len = last_block;; len = std::min(len + step, log.size())) {
    const int n = OpenAndCountPrefix(
        image, std::string_view(log).substr(0, len), /*paranoid=*/true, &s);
    ++opens;
    // A torn tail is a clean end of log, even for paranoid checks.
    ASSERT_TRUE(s.ok()) << "cut at " << len << ": " << s;
    ASSERT_GE(n, 0) << "cut at " << len << ": not a prefix";
    ASSERT_GE(n, previous) << "cut at " << len;
    ASSERT_LE(n, image.writes);
    previous = n;
    if (len == log.size()) break;
  }
  const int full = OpenAndCountPrefix(image, log, true, &s);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(full, image.writes);
  EXPECT_EQ(previous, image.writes);
  std::printf(
      "WAL of %zu bytes, %d writes: %d truncation points in its last "
      "block, each a clean prefix (%d..%d writes)\n",
      log.size(), image.writes, opens, at_block_start, full);
}

std::string LogOf(const Image& image) {
  for (const auto& [name, data] : image.files) {
    if (name == image.log_name) return data;
  }
  return "";
}

// `image`'s files into a fresh in-memory Env, its WAL replaced by `log`.
std::unique_ptr<Env> EnvWith(const Image& image, std::string_view log) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  EXPECT_TRUE(env->CreateDir(kDb).ok());
  for (const auto& [name, data] : image.files) {
    const std::string_view contents =
        name == image.log_name ? log : std::string_view(data);
    EXPECT_TRUE(
        WriteWholeFile(env.get(), std::string(kDb) + "/" + name, contents)
            .ok());
  }
  return env;
}

// Leading writes 0..n-1 the database holds; -1 if it is not such a prefix.
int CountPrefix(DB* db) {
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    if (it->key() != test::NumberKey(n, 8) || it->value() != ValueFor(n)) {
      return -1;
    }
  }
  EXPECT_TRUE(it->status().ok()) << it->status();
  return n;
}

// "name: value" of the sift.recovery property.
std::string RecoveryField(DB* db, const std::string& name) {
  const std::string text = db->GetProperty("sift.recovery").value_or("");
  const std::string prefix = name + ": ";
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return "";
  const size_t end = text.find('\n', at);
  return text.substr(at + prefix.size(), end - at - prefix.size());
}

bool Exists(Env* env, const std::string& name) {
  return env->FileExists(std::string(kDb) + "/" + name);
}

// One flipped byte in the middle of a live log: Open recovers exactly the
// writes before the damaged record (point-in-time), keeps the log aside
// under NNNNNN.log.damaged, and reports what it left out in sift.recovery and
// the LOG file.
TEST(DBWalTest, FlippedByteInTheMiddleStopsReplayAtAPrefix) {
  const Image image = MakeImage(3 * kLogBlock + 1000, 3 * kLogBlock + 2000);
  ASSERT_FALSE(image.log_name.empty());
  const std::string log = LogOf(image);
  ASSERT_GT(log.size(), 3 * kLogBlock);
  // A byte inside the payload of a record in the second block.
  std::string damaged = log;
  damaged[kLogBlock + 1000] ^= 0x40;
  const std::string kept =
      image.log_name.substr(0, image.log_name.size() - 4) + ".log.damaged";

  std::unique_ptr<Env> env = EnvWith(image, damaged);
  Options options;
  options.env = env.get();
  int n = 0;
  {
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    n = CountPrefix(db->get());
    ASSERT_GE(n, 0) << "the recovered state is not a prefix of the writes";
    ASSERT_GT(n, 0);
    ASSERT_LT(n, image.writes);

    EXPECT_EQ(RecoveryField(db->get(), "stopped at damage"), "yes");
    EXPECT_EQ(RecoveryField(db->get(), "records replayed"), std::to_string(n));
    // The damaged record is lost; every intact one after it is counted.
    EXPECT_EQ(RecoveryField(db->get(), "records dropped"),
              std::to_string(image.writes - n - 1));
    const std::string first_error = RecoveryField(db->get(), "first error");
    EXPECT_NE(first_error.find(image.log_name), std::string::npos)
        << first_error;
    EXPECT_NE(first_error.find("checksum mismatch"), std::string::npos)
        << first_error;
    EXPECT_GT(std::stoul(RecoveryField(db->get(), "bytes dropped")),
              2 * kLogBlock);
    EXPECT_EQ(RecoveryField(db->get(), "kept aside"), kept);
    EXPECT_NE(db->get()->GetProperty("sift.stats")->find("stopped at damage"),
              std::string::npos);

    // The damaged log, byte for byte, is kept; the original is obsolete.
    absl::StatusOr<std::string> copy =
        ReadWholeFile(env.get(), std::string(kDb) + "/" + kept);
    ASSERT_TRUE(copy.ok()) << copy.status();
    EXPECT_EQ(*copy, damaged);
    EXPECT_FALSE(Exists(env.get(), image.log_name));
    absl::StatusOr<std::string> info =
        ReadWholeFile(env.get(), std::string(kDb) + "/LOG");
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_NE(info->find("WAL damage"), std::string::npos) << *info;
    EXPECT_NE(info->find(kept), std::string::npos) << *info;

    // New writes go on from the prefix.
    ASSERT_TRUE(
        (*db)->Put(WriteOptions(), test::NumberKey(n, 8), ValueFor(n)).ok());
  }
  {
    // The kept log survives later opens and is never replayed.
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(CountPrefix(db->get()), n + 1);
    EXPECT_EQ(RecoveryField(db->get(), "stopped at damage"), "no");
    EXPECT_TRUE(Exists(env.get(), kept));
  }
  // DestroyDB removes it with the rest.
  ASSERT_TRUE(DestroyDB(kDb, options).ok());
  EXPECT_FALSE(Exists(env.get(), kept));
}

// paranoid_checks: the same damage fails Open with DataLossError naming the
// log, and changes nothing on disk.
TEST(DBWalTest, FlippedByteFailsParanoidOpen) {
  const Image image = MakeImage(3 * kLogBlock + 1000, 3 * kLogBlock + 2000);
  std::string damaged = LogOf(image);
  damaged[kLogBlock + 1000] ^= 0x40;
  std::unique_ptr<Env> env = EnvWith(image, damaged);
  Options options;
  options.env = env.get();
  options.paranoid_checks = true;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
  ASSERT_TRUE(absl::IsDataLoss(db.status())) << db.status();
  EXPECT_NE(db.status().message().find(image.log_name), std::string::npos)
      << db.status();
  EXPECT_TRUE(Exists(env.get(), image.log_name));
  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(kDb);
  ASSERT_TRUE(children.ok());
  for (const std::string& name : *children) {
    EXPECT_EQ(name.find(".damaged"), std::string::npos) << name;
  }
}

std::string LogName(uint64_t number) {
  char name[32];
  std::snprintf(name, sizeof(name), "%06llu.log",
                static_cast<unsigned long long>(number));
  return name;
}

// Writes log `number` into `env`: an optional link record, then one batch
// per key image.writes, image.writes + 1, ... (`writes` of them).
void WriteLaterLog(Env* env, const Image& image, uint64_t number,
                   const WalLink* link, int writes) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(std::string(kDb) + "/" + LogName(number));
  ASSERT_TRUE(file.ok());
  log::Writer writer(file->get());
  if (link != nullptr) {
    std::string record;
    link->EncodeTo(&record);
    ASSERT_TRUE(writer.AddRecord(record).ok());
  }
  for (int i = 0; i < writes; ++i) {
    const int k = image.writes + i;
    WriteBatch batch;
    batch.Put(test::NumberKey(k, 8), ValueFor(k));
    WriteBatchInternal::SetSequence(&batch, 100000 + i);
    ASSERT_TRUE(writer.AddRecord(WriteBatchInternal::Contents(&batch)).ok());
  }
  ASSERT_TRUE((*file)->Close().ok());
}

// A later log holds writes that follow the damaged record: replaying it would
// leave a hole, so it is not replayed either, and is kept aside too.
TEST(DBWalTest, LogsAfterTheDamagedOneAreNotReplayed) {
  const Image image = MakeImage(kLogBlock + 1000, kLogBlock + 2000);
  std::string damaged = LogOf(image);
  damaged[kLogBlock / 2] ^= 0x40;
  std::unique_ptr<Env> env = EnvWith(image, damaged);

  // A second live log with the next writes, numbered after the first.
  const uint64_t first_number = std::stoull(image.log_name);
  const std::string later_name = LogName(first_number + 100);
  constexpr int kLaterWrites = 20;
  WriteLaterLog(env.get(), image, first_number + 100, nullptr, kLaterWrites);

  Options options;
  options.env = env.get();
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
  ASSERT_TRUE(db.ok()) << db.status();
  const int n = CountPrefix(db->get());
  ASSERT_GE(n, 0) << "the recovered state is not a prefix of the writes";
  ASSERT_LT(n, image.writes);
  EXPECT_EQ(RecoveryField(db->get(), "logs replayed"), "1");
  EXPECT_EQ(RecoveryField(db->get(), "records dropped"),
            std::to_string(image.writes - n - 1 + kLaterWrites));
  EXPECT_EQ(RecoveryField(db->get(), "kept aside"),
            image.log_name + ".damaged " + later_name + ".damaged");
  EXPECT_TRUE(Exists(env.get(), later_name + ".damaged"));
  EXPECT_FALSE(Exists(env.get(), later_name));
}

constexpr int kLinkedWrites = 20;

// A log whose link names the log before it, with the records that log
// holds: both are replayed.
TEST(DBWalTest, LinkedLogIsReplayedAfterAWholePredecessor) {
  const Image image = MakeImage(kLogBlock + 1000, kLogBlock + 2000);
  std::unique_ptr<Env> env = EnvWith(image, LogOf(image));
  const uint64_t first = std::stoull(image.log_name);
  const WalLink link(first, image.writes);  // one record per Put
  WriteLaterLog(env.get(), image, first + 100, &link, kLinkedWrites);

  for (bool paranoid : {false, true}) {
    Options options;
    options.env = env.get();
    options.paranoid_checks = paranoid;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(CountPrefix(db->get()), image.writes + kLinkedWrites);
    if (!paranoid) {
      EXPECT_EQ(RecoveryField(db->get(), "logs replayed"), "2");
      EXPECT_EQ(RecoveryField(db->get(), "stopped at damage"), "no");
    }
  }
}

// The predecessor lost its unsynced tail in a machine crash while the later
// log kept its records (the file system wrote them back first): the later
// log is not replayed, so the state is still a prefix, and it is kept aside.
// A crash is not damage: paranoid_checks opens too.
TEST(DBWalTest, LinkedLogIsNotReplayedAfterAPredecessorThatLostItsTail) {
  const Image image = MakeImage(3 * kLogBlock, 3 * kLogBlock + 2000);
  const std::string log = LogOf(image);
  const uint64_t first = std::stoull(image.log_name);
  const WalLink link(first, image.writes);
  // Cut at a block boundary (a clean end: no torn tail to hint at the loss)
  // and inside a record.
  for (size_t cut : {2 * kLogBlock, 2 * kLogBlock + 777}) {
    for (bool paranoid : {false, true}) {
      SCOPED_TRACE(testing::Message()
                   << "cut " << cut << " paranoid " << paranoid);
      std::unique_ptr<Env> env = EnvWith(image, log.substr(0, cut));
      const std::string later = LogName(first + 100);
      WriteLaterLog(env.get(), image, first + 100, &link, kLinkedWrites);
      Options options;
      options.env = env.get();
      options.paranoid_checks = paranoid;
      absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
      ASSERT_TRUE(db.ok()) << db.status();
      const int n = CountPrefix(db->get());
      ASSERT_GE(n, 0) << "the recovered state is not a prefix of the writes";
      EXPECT_LT(n, image.writes);
      EXPECT_GT(n, 0);
      EXPECT_EQ(RecoveryField(db->get(), "stopped at damage"),
                "yes (writes lost in a machine crash)");
      EXPECT_EQ(RecoveryField(db->get(), "records dropped"),
                std::to_string(kLinkedWrites + 1));
      EXPECT_EQ(RecoveryField(db->get(), "kept aside"), later + ".damaged");
      EXPECT_TRUE(Exists(env.get(), later + ".damaged"));
      EXPECT_FALSE(Exists(env.get(), later));
    }
  }
}

// The link names a log that should still be there (not yet covered by a
// table) but is gone: its writes were lost, so the linking log is not
// replayed. A link to a log older than the MANIFEST's log number is not
// checked: its writes are in tables.
TEST(DBWalTest, LinkedLogIsNotReplayedWhenItsPredecessorIsMissing) {
  const Image image = MakeImage(kLogBlock + 1000, kLogBlock + 2000);
  const uint64_t first = std::stoull(image.log_name);
  {
    std::unique_ptr<Env> env = EnvWith(image, LogOf(image));
    const WalLink link(first + 50, 7);  // no such log
    WriteLaterLog(env.get(), image, first + 100, &link, kLinkedWrites);
    Options options;
    options.env = env.get();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(CountPrefix(db->get()), image.writes);
    EXPECT_EQ(RecoveryField(db->get(), "stopped at damage"),
              "yes (writes lost in a machine crash)");
  }
  {
    std::unique_ptr<Env> env = EnvWith(image, LogOf(image));
    const WalLink link(1, 7);  // below the MANIFEST's log number
    WriteLaterLog(env.get(), image, first + 100, &link, kLinkedWrites);
    Options options;
    options.env = env.get();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(CountPrefix(db->get()), image.writes + kLinkedWrites);
  }
}

// Through the write path: memtable switches no longer sync the old log, so a
// synced write must sync it first. After many unsynced writes across
// switches, one synced write, and a machine crash (every unsynced byte and
// directory entry lost), every write is there; without the synced write, what
// survives is a prefix.
TEST(DBWalTest, SyncedWriteAfterSwitchesMakesEveryEarlierWriteDurable) {
  for (bool sync_last : {true, false}) {
    SCOPED_TRACE(sync_last ? "last write synced" : "no write synced");
    std::unique_ptr<Env> base = test::NewTestEnv();
    FaultInjectionEnv env(base.get());
    Options options;
    options.env = &env;
    options.create_if_missing = true;
    options.write_buffer_size = 16 << 10;  // a switch every ~100 writes
    constexpr int kWrites = 1000;
    {
      absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
      ASSERT_TRUE(db.ok()) << db.status();
      for (int i = 0; i < kWrites; ++i) {
        WriteOptions wo;
        wo.sync = sync_last && i == kWrites - 1;
        ASSERT_TRUE((*db)->Put(wo, test::NumberKey(i, 8), ValueFor(i)).ok());
      }
      ASSERT_TRUE(env.SimulateCrash().ok());
      db->reset();
      ASSERT_TRUE(env.SimulateCrash().ok());
    }
    env.ClearFaults();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    const int n = CountPrefix(db->get());
    ASSERT_GE(n, 0) << "the recovered state is not a prefix of the writes";
    if (sync_last) {
      EXPECT_EQ(n, kWrites);
    }
  }
}

}  // namespace
}  // namespace sift
