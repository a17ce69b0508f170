// Recovery from damaged write-ahead logs: a log cut at any byte of its last
// block recovers a clean prefix of the writes; damage in the middle is
// reported, and fails Open under paranoid_checks.

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/testutil.h"
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
  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
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
  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
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

TEST(DBWalTest, FlippedByteInTheMiddleIsReported) {
  const Image image = MakeImage(3 * kLogBlock + 1000, 3 * kLogBlock + 2000);
  ASSERT_FALSE(image.log_name.empty());
  std::string log;
  for (const auto& [name, data] : image.files) {
    if (name == image.log_name) log = data;
  }
  ASSERT_GT(log.size(), 3 * kLogBlock);
  // A byte inside the payload of a record in the second block.
  std::string damaged = log;
  damaged[kLogBlock + 1000] ^= 0x40;

  absl::Status s;
  std::string stats;
  // Default: Open succeeds, skips the damage, and says so.
  {
    std::unique_ptr<Env> env = NewMemEnv(Env::Default());
    const int n =
        OpenAndCountPrefix(image, damaged, /*paranoid=*/false, &s, &stats);
    ASSERT_TRUE(s.ok()) << s;
    // Not a prefix any more: records of the damaged block are gone while
    // later ones (third and fourth block) are back.
    EXPECT_EQ(n, -1);
    EXPECT_NE(stats.find("damaged bytes dropped"), std::string::npos) << stats;
    EXPECT_EQ(stats.find(" 0 damaged bytes dropped"), std::string::npos)
        << stats;
  }
  // paranoid_checks: the damage fails Open with DataLossError naming the
  // log.
  OpenAndCountPrefix(image, damaged, /*paranoid=*/true, &s);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find(image.log_name), std::string::npos) << s;
}

// The keys after the damaged block survive when checks are not paranoid.
TEST(DBWalTest, RecordsAfterDamageSurvive) {
  const Image image = MakeImage(3 * kLogBlock + 1000, 3 * kLogBlock + 2000);
  std::string log;
  for (const auto& [name, data] : image.files) {
    if (name == image.log_name) log = data;
  }
  std::string damaged = log;
  damaged[kLogBlock + 1000] ^= 0x40;

  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
  ASSERT_TRUE(env->CreateDir(kDb).ok());
  for (const auto& [name, data] : image.files) {
    ASSERT_TRUE(WriteWholeFile(env.get(), std::string(kDb) + "/" + name,
                               name == image.log_name ? damaged : data)
                    .ok());
  }
  Options options;
  options.env = env.get();
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
  ASSERT_TRUE(db.ok()) << db.status();
  int present = 0;
  for (int i = 0; i < image.writes; ++i) {
    std::string value;
    absl::Status s = (*db)->Get(ReadOptions(), test::NumberKey(i, 8), &value);
    if (s.ok()) {
      EXPECT_EQ(value, ValueFor(i));
      ++present;
    } else {
      EXPECT_TRUE(absl::IsNotFound(s)) << s;
    }
  }
  // The first block and the last two are intact.
  std::string value;
  EXPECT_TRUE((*db)->Get(ReadOptions(), test::NumberKey(0, 8), &value).ok());
  EXPECT_TRUE(
      (*db)
          ->Get(ReadOptions(), test::NumberKey(image.writes - 1, 8), &value)
          .ok());
  EXPECT_LT(present, image.writes);
  EXPECT_GT(present, image.writes / 2);
}

}  // namespace
}  // namespace sift
