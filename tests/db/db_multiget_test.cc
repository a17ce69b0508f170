// DB::MultiGet: key by key the same answers as Get on the same view, over
// random batches with duplicates, deletes, overwrites, snapshots, flushes and
// compactions; damage reported for the keys it touches only; consistent
// under concurrent writers.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/random.h"

namespace sift {
namespace {

std::string Key(uint64_t n) { return "k" + test::NumberKey(n, 6); }

// Instrumented builds are slow: scale loops down.
bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }

// MultiGet of `keys` must equal a Get of each key under the same options.
void ExpectSameAsGet(DB* db, const ReadOptions& ro,
                     const std::vector<std::string>& keys) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses = db->MultiGet(ro, views, &values);
  ASSERT_EQ(statuses.size(), keys.size());
  ASSERT_EQ(values.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string value;
    const absl::Status s = db->Get(ro, keys[i], &value);
    ASSERT_EQ(statuses[i].code(), s.code()) << keys[i] << ": " << statuses[i];
    if (s.ok()) {
      ASSERT_EQ(values[i], value) << keys[i];
    }
  }
}

// One MultiGet of every key of `keys` with default read options.
struct BatchResult {
  std::vector<absl::Status> statuses;
  std::vector<std::string> values;
};
BatchResult MultiGetAll(DB* db, const std::vector<std::string>& keys) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  BatchResult r;
  r.statuses = db->MultiGet(ReadOptions(), views, &r.values);
  return r;
}

TEST(DBMultiGetTest, EmptyBatch) {
  auto env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  auto db = DB::Open(options, "/mg");
  ASSERT_TRUE(db.ok()) << db.status();
  std::vector<std::string> values(3, "stale");
  EXPECT_TRUE((*db)->MultiGet(ReadOptions(), {}, &values).empty());
  EXPECT_TRUE(values.empty());
}

// Options for a database on `env` with small memtables and tables, so that a
// test's writes spread over many tables and levels.
Options SmallTreeOptions(Env* env, size_t bytes) {
  Options options;
  options.env = env;
  options.create_if_missing = true;
  options.write_buffer_size = bytes;
  options.max_file_size = bytes;
  return options;
}

TEST(DBMultiGetTest, RandomizedAgainstGetAndModel) {
  auto env = test::NewTestEnv();
  auto opened = DB::Open(SmallTreeOptions(env.get(), 32 << 10), "/mg");
  ASSERT_TRUE(opened.ok()) << opened.status();
  DB* db = opened->get();
  Random rnd(301);
  std::map<std::string, std::string> model;
  constexpr uint64_t kKeySpace = 3000;
  const int rounds = Sanitized() ? 25 : 80;
  for (int round = 0; round < rounds; ++round) {
    // A burst of writes: puts, overwrites and deletes.
    for (int i = 0; i < 400; ++i) {
      const std::string k = Key(rnd.Uniform(kKeySpace));
      if (rnd.OneIn(4)) {
        ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
        model.erase(k);
      } else {
        const std::string v = test::RandomString(&rnd, 1 + rnd.Uniform(60));
        ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
        model[k] = v;
      }
    }
    if (rnd.OneIn(5)) {
      ASSERT_TRUE(db->Flush().ok());
    }
    if (rnd.OneIn(15)) {
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    }

    // A snapshot, then more writes it must not see.
    const Snapshot* snapshot = db->GetSnapshot();
    const std::map<std::string, std::string> at_snapshot = model;
    for (int i = 0; i < 100; ++i) {
      const std::string k = Key(rnd.Uniform(kKeySpace));
      ASSERT_TRUE(db->Put(WriteOptions(), k, "after").ok());
      model[k] = "after";
    }

    // A batch of 0..1000 keys, present and absent, with duplicates.
    std::vector<std::string> batch(rnd.Uniform(1001));
    for (std::string& k : batch) {
      k = rnd.OneIn(10) && !batch.empty() ? batch[rnd.Uniform(batch.size())]
                                          : Key(rnd.Uniform(kKeySpace + 500));
    }
    ReadOptions latest;
    ASSERT_NO_FATAL_FAILURE(ExpectSameAsGet(db, latest, batch));
    ReadOptions at;
    at.snapshot = snapshot;
    ASSERT_NO_FATAL_FAILURE(ExpectSameAsGet(db, at, batch));

    // ... and equal to the model at the snapshot.
    std::vector<std::string_view> views(batch.begin(), batch.end());
    std::vector<std::string> values;
    const std::vector<absl::Status> statuses = db->MultiGet(at, views, &values);
    for (size_t i = 0; i < batch.size(); ++i) {
      auto it = at_snapshot.find(batch[i]);
      if (it == at_snapshot.end()) {
        ASSERT_TRUE(absl::IsNotFound(statuses[i])) << batch[i];
      } else {
        ASSERT_TRUE(statuses[i].ok()) << batch[i] << ": " << statuses[i];
        ASSERT_EQ(values[i], it->second);
      }
    }
    db->ReleaseSnapshot(snapshot);
  }
}

// The batch is sorted on the 8 bytes after its common prefix, then on whole
// keys: keys of every length, keys that are prefixes or zero-extensions of
// others, and keys that differ only after a long shared prefix must all be
// found in tables, in any input order.
TEST(DBMultiGetTest, KeysOfAnyLengthAndSharedPrefixes) {
  auto env = test::NewTestEnv();
  auto opened = DB::Open(SmallTreeOptions(env.get(), 16 << 10), "/mg");
  ASSERT_TRUE(opened.ok()) << opened.status();
  DB* db = opened->get();
  const std::string shared(40, 'p');
  std::vector<std::string> present = {
      "", "a", std::string("a\0", 2), std::string("a\0\0", 3), "ab", "b",
      // All-ones bytes: the prefix value MultiGet's ordering pads with.
      std::string(8, '\xff'), std::string(9, '\xff'),
      std::string(8, '\xff') + "a"};
  for (int i = 0; i < 300; ++i) {
    present.push_back(shared + test::NumberKey(i * 7, 5));
    present.push_back(shared + test::NumberKey(i * 7, 5) +
                      std::string(1, '\0'));
    present.push_back(std::string(i % 13, '\0') + "z" + std::to_string(i));
  }
  for (size_t i = 0; i < present.size(); ++i) {
    ASSERT_TRUE(
        db->Put(WriteOptions(), present[i], "v" + std::to_string(i)).ok());
    if (i % 200 == 199) {
      ASSERT_TRUE(db->Flush().ok());
    }
  }
  ASSERT_TRUE(db->Flush().ok());
  std::vector<std::string> batch = present;
  for (int i = 0; i < 300; ++i) {  // absent neighbours
    batch.push_back(shared + test::NumberKey(i * 7 + 1, 5));
    batch.push_back(std::string(i % 13 + 1, '\0'));
  }
  Random rnd(17);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> sample;
    // Batches of up to 64 keys are ranked (db/batch_order.cc), larger
    // ones by a comparison sort: both are exercised.
    const size_t size = 1 + rnd.Uniform(round % 2 == 0 ? 64 : 200);
    for (size_t i = 0; i < size; ++i) {
      sample.push_back(batch[rnd.Uniform(batch.size())]);
    }
    ExpectSameAsGet(db, ReadOptions(), sample);
  }
  std::vector<std::string_view> views(present.begin(), present.end());
  std::reverse(views.begin(), views.end());
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses =
      db->MultiGet(ReadOptions(), views, &values);
  for (size_t i = 0; i < views.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i];
    EXPECT_EQ(values[i], "v" + std::to_string(present.size() - 1 - i));
  }
}

TEST(DBMultiGetTest, CountsEachKeyAsOneGet) {
  auto env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  auto db = DB::Open(options, "/mg");
  ASSERT_TRUE(db.ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "v").ok());
  }
  ASSERT_TRUE((*db)->Flush().ok());
  ASSERT_TRUE((*db)->Put(WriteOptions(), Key(1000), "in memtable").ok());
  const ReadStats before = (*db)->GetReadStats();
  const std::vector<std::string> keys = {Key(5), Key(1000), Key(5), Key(5000)};
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  (*db)->MultiGet(ReadOptions(), views, &values);
  const ReadStats after = (*db)->GetReadStats();
  EXPECT_EQ(after.gets - before.gets, 4u);
  EXPECT_EQ(after.memtable_hits - before.memtable_hits, 1u);
  // Key(5) twice: one table probe each; Key(5000) is past the table.
  EXPECT_EQ(after.tables_probed - before.tables_probed, 2u);
}

TEST(DBMultiGetTest, FilterCountsEqualGetsKeyByKey) {
  // A batch locates every key in every filter of a round before it tests
  // any; what it counts per key must still be what a Get of that key counts.
  auto env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.filter_bits_per_key = 4;  // false positives among the absent keys
  auto db = DB::Open(options, "/mg");
  ASSERT_TRUE(db.ok());
  // A deeper level of every third key, then three level-0 tables over the
  // same range.
  for (int i = 0; i < 3000; i += 3) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "deep").ok());
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  for (int t = 0; t < 3; ++t) {
    for (int i = t; i < 3000; i += 7) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "l0").ok());
    }
    ASSERT_TRUE((*db)->Flush().ok());
  }
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back(Key(i));
  for (int i = 0; i < 1000; ++i) keys.push_back(Key(i) + "x");  // absent

  auto filter_counts = [](const ReadStats& after, const ReadStats& before) {
    return std::vector<uint64_t>{
        after.tables_probed - before.tables_probed,
        after.filter_negatives - before.filter_negatives,
        after.filter_positives - before.filter_positives,
        after.filter_false_positives - before.filter_false_positives};
  };
  const ReadStats start = (*db)->GetReadStats();
  for (const std::string& key : keys) {
    std::string value;
    (void)(*db)->Get(ReadOptions(), key, &value);
  }
  const ReadStats after_gets = (*db)->GetReadStats();
  for (size_t i = 0; i < keys.size(); i += 32) {
    std::vector<std::string> batch(
        keys.begin() + i, keys.begin() + std::min(keys.size(), i + 32));
    (void)MultiGetAll(db->get(), batch);
  }
  const ReadStats after_batches = (*db)->GetReadStats();
  const std::vector<uint64_t> by_get = filter_counts(after_gets, start);
  EXPECT_EQ(filter_counts(after_batches, after_gets), by_get);
  EXPECT_GT(by_get[1], 1000u);  // negatives
  EXPECT_GT(by_get[3], 10u);    // false positives
}

TEST(DBMultiGetTest, DamagedBlockFailsOnlyTheKeysInIt) {
  const std::string dir = testing::TempDir() + "sift_multiget_damage";
  std::filesystem::remove_all(dir);
  Options options;
  options.create_if_missing = true;
  options.compression = Compression::kNone;
  options.block_cache_capacity = 0;
  std::vector<std::string> keys;
  {
    auto db = DB::Open(options, dir);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 2000; ++i) {
      keys.push_back(Key(i));
      ASSERT_TRUE(
          (*db)
              ->Put(WriteOptions(), keys.back(), std::string(100, 'a' + i % 26))
              .ok());
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  }
  // Flip a byte a little into the data of the one table (the first blocks).
  std::string table;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".sst") table = e.path();
  }
  ASSERT_FALSE(table.empty());
  {
    std::fstream f(table, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(5000);
    char c;
    f.read(&c, 1);
    c ^= 0x40;
    f.seekp(5000);
    f.write(&c, 1);
  }
  for (bool mmap : {true, false}) {
    options.allow_mmap_reads = mmap;
    auto db = DB::Open(options, dir);
    ASSERT_TRUE(db.ok()) << db.status();
    const auto [statuses, values] = MultiGetAll(db->get(), keys);
    int damaged = 0, ok = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      std::string value;
      const absl::Status s = (*db)->Get(ReadOptions(), keys[i], &value);
      ASSERT_EQ(statuses[i].code(), s.code()) << keys[i];
      if (absl::IsDataLoss(statuses[i])) {
        ++damaged;
      } else {
        ASSERT_TRUE(statuses[i].ok()) << keys[i] << ": " << statuses[i];
        ASSERT_EQ(values[i], std::string(100, 'a' + i % 26));
        ++ok;
      }
    }
    EXPECT_GT(damaged, 0) << "mmap " << mmap;
    EXPECT_LT(damaged, 100) << "mmap " << mmap;  // one block's worth
    EXPECT_GT(ok, 1800);
  }
  std::filesystem::remove_all(dir);
}

// A table that cannot be opened fails only the keys a Get would look for
// there: the keys a newer table answers come back from it, so a batch must
// not open a table for keys an earlier round has answered.
TEST(DBMultiGetTest, UnreadableOlderTableFailsOnlyTheKeysItHolds) {
  const std::string dir = testing::TempDir() + "sift_multiget_unreadable";
  std::filesystem::remove_all(dir);
  Options options;
  options.create_if_missing = true;
  std::vector<std::string> keys;
  std::filesystem::path old_table;
  {
    auto db = DB::Open(options, dir);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 200; ++i) {
      keys.push_back(Key(i));
      ASSERT_TRUE((*db)->Put(WriteOptions(), keys.back(), "old").ok());
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".sst") old_table = e.path();
    }
    // A newer table over the same range with half of the keys.
    for (int i = 0; i < 200; i += 2) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "new").ok());
    }
    ASSERT_TRUE((*db)->Flush().ok());
  }
  ASSERT_FALSE(old_table.empty());
  // Cut the old table's footer off: it can no longer be opened.
  std::filesystem::resize_file(old_table,
                               std::filesystem::file_size(old_table) / 2);
  auto db = DB::Open(options, dir);
  ASSERT_TRUE(db.ok()) << db.status();
  const auto [statuses, values] = MultiGetAll(db->get(), keys);
  ASSERT_EQ(statuses.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i % 2 == 0) {
      ASSERT_TRUE(statuses[i].ok()) << keys[i] << ": " << statuses[i];
      EXPECT_EQ(values[i], "new") << keys[i];
    } else {
      EXPECT_FALSE(statuses[i].ok()) << keys[i];
      EXPECT_FALSE(absl::IsNotFound(statuses[i])) << keys[i];
    }
  }
  ExpectSameAsGet(db->get(), ReadOptions(), keys);
  db->reset();
  std::filesystem::remove_all(dir);
}

// Named for the TSan stage of the test command (*Concurrency*).
TEST(DBMultiGetConcurrencyTest, BatchesSeeOnePointInTimeWhileWritersRun) {
  auto env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  auto opened = DB::Open(options, "/mg");
  ASSERT_TRUE(opened.ok());
  DB* db = opened->get();
  // Each write batch sets all kKeys keys to the same round number, so a
  // consistent view shows one number everywhere.
  constexpr int kKeys = 64;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back(Key(i));
  auto write_round = [&](int round) {
    WriteBatch batch;
    for (const std::string& k : keys) batch.Put(k, std::to_string(round));
    return db->Write(WriteOptions(), &batch);
  };
  ASSERT_TRUE(write_round(0).ok());
  const int rounds = Sanitized() ? 300 : 2000;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int r = 1; r <= rounds; ++r) ASSERT_TRUE(write_round(r).ok());
    stop.store(true);
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      std::vector<std::string_view> views(keys.begin(), keys.end());
      std::vector<std::string> values;
      int last = 0;
      while (!stop.load()) {
        const std::vector<absl::Status> statuses =
            db->MultiGet(ReadOptions(), views, &values);
        for (int i = 0; i < kKeys; ++i) {
          ASSERT_TRUE(statuses[i].ok()) << statuses[i];
          ASSERT_EQ(values[i], values[0]) << "batch saw two points in time";
        }
        const int round = std::stoi(values[0]);
        ASSERT_GE(round, last);  // never backwards
        last = round;
      }
    });
  }
  writer.join();
  for (std::thread& t : readers) t.join();
}

}  // namespace
}  // namespace sift
