// CompactionJob on real tables, checked against a model of every entry ever
// written: what each snapshot sees must not change, hidden entries and
// obsolete deletion markers must go, outputs must split where they should.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/builder.h"
#include "db/compaction_job.h"
#include "db/db_state.h"
#include "db/filename.h"
#include "db/memtable.h"
#include "db/options_check.h"
#include "db/version_set.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "table/iterators.h"
#include "table/table.h"
#include "table/table_properties.h"
#include "tests/testutil/test_env.h"
#include "util/mutex.h"
#include "util/random.h"

namespace sift {
namespace {

struct Entry {
  std::string key;
  SequenceNumber seq;
  ValueType type;
  std::string value;
};

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%05d", i);
  return buf;
}

class CompactionTest : public testing::Test {
 protected:
  CompactionTest() { Reset(); }

  void Reset() {
    vset_.reset();
    table_cache_.reset();
    mem_env_ = test::NewTestEnv();
    options_.env = mem_env_.get();
    ASSERT_TRUE(mem_env_->CreateDir(dbname_).ok());
    table_cache_ =
        std::make_unique<TableCache>(dbname_, options_, &icmp_, nullptr, 1000);
    vset_ = std::make_unique<VersionSet>(dbname_, &options_, table_cache_.get(),
                                         &icmp_);
    model_.clear();
    VersionEdit edit;
    ASSERT_TRUE(Apply(&edit).ok());
  }

  absl::Status Apply(VersionEdit* edit) {
    MutexLock l(&mu_);
    return vset_->LogAndApply(edit, &mu_);
  }

  uint64_t NewFileNumber() {
    MutexLock l(&mu_);
    return vset_->NewFileNumber();
  }

  // Write `entries` to a new table of `level` and remember them.
  void AddTable(int level, const std::vector<Entry>& entries) {
    MemTable mem(icmp_);
    for (const Entry& e : entries) {
      mem.Add(e.seq, e.type, e.key, e.value);
      model_[e.key][e.seq] = e;
      if (e.seq > vset_->LastSequence()) vset_->SetLastSequence(e.seq);
    }
    FileMetaData meta;
    meta.number = NewFileNumber();
    std::unique_ptr<Iterator> it = mem.NewIterator();
    ASSERT_TRUE(BuildTable(dbname_, mem_env_.get(), options_,
                           table_cache_.get(), it.get(), &meta)
                    .ok());
    VersionEdit edit;
    edit.AddFile(level, meta);
    ASSERT_TRUE(Apply(&edit).ok());
  }

  // Run `c` as a CompactionJob and install its result.
  CompactionStats RunJob(Compaction* c, SequenceNumber smallest_snapshot) {
    CompactionJob job(
        dbname_, options_, &icmp_, table_cache_.get(), c, smallest_snapshot,
        [this] { return NewFileNumber(); }, nullptr);
    absl::Status s = job.Run();
    EXPECT_TRUE(s.ok()) << s;
    outputs_ = job.outputs();
    EXPECT_TRUE(Apply(c->edit()).ok());
    return job.stats();
  }

  // What a read at `snapshot` must return: the value, or nullopt.
  std::optional<std::string> ModelGet(const std::string& key,
                                      SequenceNumber snapshot) const {
    auto it = model_.find(key);
    if (it == model_.end()) return std::nullopt;
    auto e = it->second.upper_bound(snapshot);
    if (e == it->second.begin()) return std::nullopt;
    --e;
    if (e->second.type == kTypeDeletion) return std::nullopt;
    return e->second.value;
  }

  // Every key reads the same through the version as in the model, at each
  // of `snapshots`.
  void CheckVisible(const std::vector<SequenceNumber>& snapshots,
                    int num_keys) {
    std::shared_ptr<const Version> v = vset_->current();
    for (SequenceNumber snap : snapshots) {
      for (int k = 0; k < num_keys; ++k) {
        const std::string key = Key(k);
        const LookupKey lkey(key, snap);
        std::string value;
        absl::Status s = v->Get(ReadOptions(), lkey, &value, nullptr);
        const std::optional<std::string> expected = ModelGet(key, snap);
        if (expected.has_value()) {
          ASSERT_TRUE(s.ok()) << key << "@" << snap << ": " << s;
          ASSERT_EQ(value, *expected) << key << "@" << snap;
        } else {
          ASSERT_TRUE(absl::IsNotFound(s)) << key << "@" << snap << ": " << s;
        }
      }
    }
  }

  // All entries of the last job's outputs, in order.
  std::vector<Entry> ScanOutputs() {
    std::vector<Entry> r;
    for (const FileMetaData& f : outputs_) {
      std::unique_ptr<Iterator> it =
          table_cache_->NewIterator(ReadOptions(), f.number, f.file_size);
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        ParsedInternalKey p;
        EXPECT_TRUE(ParseInternalKey(it->key(), &p));
        r.push_back({std::string(p.user_key), p.sequence, p.type,
                     std::string(it->value())});
      }
      EXPECT_TRUE(it->status().ok());
    }
    return r;
  }

  // No output entry is hidden from every snapshot by a newer entry of its
  // key; no output deletion marker at or below `smallest_snapshot` is
  // without an older entry of its key deeper down (level >= deeper_than).
  void CheckNothingDroppableKept(SequenceNumber smallest_snapshot,
                                 int deeper_than) {
    const std::vector<Entry> out = ScanOutputs();
    std::shared_ptr<const Version> v = vset_->current();
    for (size_t i = 0; i < out.size(); ++i) {
      const Entry& e = out[i];
      if (i > 0 && out[i - 1].key == e.key) {
        EXPECT_GT(out[i - 1].seq, smallest_snapshot)
            << e.key << "@" << e.seq << " is hidden by @" << out[i - 1].seq;
      }
      if (e.type == kTypeDeletion && e.seq <= smallest_snapshot) {
        bool deeper = false;
        std::string_view k = e.key;
        for (int level = deeper_than; level < config::kNumLevels; ++level) {
          deeper = deeper || v->OverlapInLevel(level, &k, &k);
        }
        EXPECT_TRUE(deeper) << "deletion of " << e.key << "@" << e.seq
                            << " has nothing left to hide";
      }
    }
  }

  int CountOutputDeletions() {
    int n = 0;
    for (const Entry& e : ScanOutputs()) n += e.type == kTypeDeletion;
    return n;
  }

  const std::string dbname_ = "/compaction";
  std::unique_ptr<Env> mem_env_;
  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
  std::unique_ptr<TableCache> table_cache_;
  Mutex mu_;
  std::unique_ptr<VersionSet> vset_;
  // user key -> sequence -> entry: every entry ever written.
  std::map<std::string, std::map<SequenceNumber, Entry>> model_;
  std::vector<FileMetaData> outputs_;
};

TEST_F(CompactionTest, HiddenEntriesDropUnlessASnapshotSeesThem) {
  // Three overlapping level-0 tables, oldest first.
  AddTable(0, {{"a", 1, kTypeValue, "a1"},
               {"b", 2, kTypeValue, "b2"},
               {"c", 3, kTypeValue, "c3"}});
  AddTable(0, {{"a", 4, kTypeValue, "a4"},
               {"b", 5, kTypeDeletion, ""},
               {"d", 6, kTypeValue, "d6"}});
  AddTable(0, {{"a", 7, kTypeValue, "a7"},
               {"c", 8, kTypeDeletion, ""},
               {"d", 9, kTypeValue, "d9"}});
  // Snapshot at 5: sees a4, b deleted, c3, d absent.
  std::unique_ptr<Compaction> c = vset_->CompactRange(0, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->num_input_files(0), 3);
  CompactionStats stats = RunJob(c.get(), 5);
  for (SequenceNumber snap : {5, 9}) {
    for (const char* k : {"a", "b", "c", "d"}) {
      const LookupKey lkey(k, snap);
      std::string value;
      absl::Status s =
          vset_->current()->Get(ReadOptions(), lkey, &value, nullptr);
      const auto expected = ModelGet(k, snap);
      EXPECT_EQ(s.ok(), expected.has_value()) << k << "@" << snap;
      if (expected.has_value()) {
        EXPECT_EQ(value, *expected) << k << "@" << snap;
      }
    }
  }
  // Kept: a7 a4 (snapshot 5 reads it), b deletion at 5 dropped (base level,
  // visible-to-all) along with b2, c deletion at 8 and c3, d9 d6.
  std::vector<std::string> kept;
  for (const Entry& e : ScanOutputs()) {
    kept.push_back(e.key + std::to_string(e.seq));
  }
  EXPECT_EQ(kept,
            (std::vector<std::string>{"a7", "a4", "c8", "c3", "d9", "d6"}));
  EXPECT_EQ(stats.entries_read, 9u);
  EXPECT_EQ(stats.entries_dropped, 3u);  // a1, b5 (deletion), b2
  EXPECT_EQ(stats.input_files, 3u);
  EXPECT_EQ(stats.output_files, 1u);
  EXPECT_EQ(stats.bytes_written, outputs_[0].file_size);
  EXPECT_GT(stats.bytes_read, 0u);

  // Once no snapshot is older than the newest entries, one entry per key
  // remains, and deletion markers vanish.
  c = vset_->CompactRange(1, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  RunJob(c.get(), 100);
  kept.clear();
  for (const Entry& e : ScanOutputs()) {
    kept.push_back(e.key + std::to_string(e.seq));
  }
  EXPECT_EQ(kept, (std::vector<std::string>{"a7", "d9"}));
  EXPECT_EQ(vset_->NumLevelFiles(1), 0);
  EXPECT_EQ(vset_->NumLevelFiles(2), 1);
}

TEST_F(CompactionTest, DeletionMarkersStayAboveOlderData) {
  AddTable(3,
           {{Key(1), 1, kTypeValue, "old1"}, {Key(2), 2, kTypeValue, "old2"}});
  AddTable(0, {{Key(1), 10, kTypeDeletion, ""}, {Key(3), 11, kTypeValue, "v"}});
  AddTable(0,
           {{Key(2), 12, kTypeDeletion, ""}, {Key(4), 13, kTypeDeletion, ""}});
  // Level 0 -> 1: level 3 still holds key 1 and 2, so their markers stay;
  // key 4's marker has nothing below it and goes.
  std::unique_ptr<Compaction> c = vset_->CompactRange(0, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  RunJob(c.get(), 20);
  EXPECT_EQ(CountOutputDeletions(), 2);
  CheckNothingDroppableKept(20, 2);
  CheckVisible({20}, 6);

  // Level 1 -> 2: still above level 3.
  c = vset_->CompactRange(1, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  RunJob(c.get(), 20);
  EXPECT_EQ(CountOutputDeletions(), 2);
  CheckVisible({20}, 6);

  // Level 2 -> 3 merges with the old data: everything deleted goes.
  c = vset_->CompactRange(2, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  RunJob(c.get(), 20);
  EXPECT_EQ(CountOutputDeletions(), 0);
  const std::vector<Entry> out = ScanOutputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, Key(3));
  CheckVisible({20}, 6);

  // A marker newer than the smallest snapshot always stays.
  AddTable(0, {{Key(3), 30, kTypeDeletion, ""}});
  c = vset_->CompactRange(0, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  RunJob(c.get(), 25);
  EXPECT_EQ(CountOutputDeletions(), 1);
  CheckVisible({25, 30}, 6);
}

// The last step of a manual compaction: with nothing in the level above,
// the bottom level's tables of the range are rewritten in place, merged into
// one output across the gaps between them. Markers whose key a deeper level
// still holds (outside the range, in a table that sticks out of it) stay.
TEST_F(CompactionTest, RangeToBottomRewritesInPlace) {
  AddTable(3, {{Key(8), 1, kTypeValue, "old8"}});
  AddTable(2, {{Key(0), 2, kTypeValue, "v0"}, {Key(1), 3, kTypeDeletion, ""}});
  AddTable(2, {{Key(4), 4, kTypeDeletion, ""}, {Key(5), 5, kTypeValue, "v5"}});
  AddTable(2, {{Key(6), 6, kTypeValue, "v6"}, {Key(8), 7, kTypeDeletion, ""}});
  ASSERT_EQ(vset_->NumLevelFiles(2), 3);
  const InternalKey begin(Key(0), kMaxSequenceNumber, kValueTypeForSeek);
  const InternalKey end(Key(6), 0, kTypeDeletion);
  std::unique_ptr<Compaction> c = vset_->CompactRangeToBottom(1, &begin, &end);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level(), 2);
  EXPECT_EQ(c->output_level(), 2);
  EXPECT_EQ(c->num_input_files(0), 3);
  EXPECT_EQ(c->num_input_files(1), 0);
  EXPECT_FALSE(c->IsTrivialMove());
  RunJob(c.get(), 20);
  ASSERT_EQ(outputs_.size(), 1u);
  EXPECT_EQ(vset_->NumLevelFiles(2), 1);
  EXPECT_EQ(vset_->NumLevelFiles(3), 1);
  // Keys 1 and 4 lose their markers; key 8's stays above level 3's value.
  EXPECT_EQ(CountOutputDeletions(), 1);
  CheckNothingDroppableKept(20, 3);
  CheckVisible({20}, 10);

  // Nothing in either level of a range: no compaction.
  const InternalKey far(Key(50), kMaxSequenceNumber, kValueTypeForSeek);
  EXPECT_EQ(vset_->CompactRangeToBottom(1, &far, nullptr), nullptr);
}

// Level 1 above the bottom: every bottom table of the range joins the merge,
// also the ones that level 1 does not overlap.
TEST_F(CompactionTest, RangeToBottomTakesTheWholeBottomOfTheRange) {
  AddTable(2, {{Key(0), 1, kTypeValue, "v0"}, {Key(1), 2, kTypeDeletion, ""}});
  AddTable(2, {{Key(6), 3, kTypeValue, "v6"}, {Key(7), 4, kTypeDeletion, ""}});
  AddTable(1, {{Key(6), 5, kTypeDeletion, ""}});
  std::unique_ptr<Compaction> c =
      vset_->CompactRangeToBottom(1, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level(), 1);
  EXPECT_EQ(c->output_level(), 2);
  EXPECT_EQ(c->num_input_files(0), 1);
  EXPECT_EQ(c->num_input_files(1), 2);
  RunJob(c.get(), 20);
  const std::vector<Entry> out = ScanOutputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, Key(0));
  EXPECT_EQ(vset_->NumLevelFiles(1), 0);
  EXPECT_EQ(vset_->NumLevelFiles(2), 1);
  CheckVisible({20}, 10);
}

// Random overlapping tables over a few levels, random snapshots: after each
// compaction every snapshot at or above the smallest reads exactly what it
// read before, and nothing droppable is left in the outputs.
TEST_F(CompactionTest, RandomizedAgainstModel) {
  const int rounds = std::getenv("SIFT_SANITIZED") != nullptr ? 4 : 12;
  constexpr int kKeys = 300;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE(round);
    Reset();
    Random rnd(1000 + round);
    SequenceNumber seq = 0;
    auto random_table = [&](int n) {
      std::vector<Entry> entries;
      for (int i = 0; i < n; ++i) {
        Entry e;
        e.key = Key(static_cast<int>(rnd.Uniform(kKeys)));
        e.seq = ++seq;
        e.type = rnd.OneIn(4) ? kTypeDeletion : kTypeValue;
        if (e.type == kTypeValue) {
          e.value = absl::StrCat("v", e.seq, std::string(rnd.Uniform(40), 'x'));
        }
        entries.push_back(e);
      }
      return entries;
    };
    // Old data deep down, over part of the key space.
    std::vector<Entry> deep = random_table(150);
    std::erase_if(deep, [](const Entry& e) { return e.key >= Key(200); });
    if (!deep.empty()) AddTable(3, deep);
    for (int t = 0; t < config::kL0CompactionTrigger; ++t) {
      AddTable(0, random_table(200));
    }

    // Snapshots spread over the level-0 writes, and the latest state.
    std::vector<SequenceNumber> snapshots = {seq};
    for (int i = 0; i < 3; ++i)
      snapshots.push_back(150 + rnd.Uniform(seq - 150));
    const SequenceNumber smallest =
        *std::min_element(snapshots.begin(), snapshots.end());

    ASSERT_TRUE(vset_->NeedsCompaction());
    std::unique_ptr<Compaction> c = vset_->PickCompaction();
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->level(), 0);
    ASSERT_EQ(c->num_input_files(0), config::kL0CompactionTrigger);
    CompactionStats stats = RunJob(c.get(), smallest);
    EXPECT_GT(stats.entries_dropped, 0u);
    EXPECT_EQ(vset_->NumLevelFiles(0), 0);
    CheckVisible(snapshots, kKeys);
    CheckNothingDroppableKept(smallest, 2);

    // More writes, then level 0 again (now merging with level 1), with the
    // oldest snapshot released.
    for (int t = 0; t < config::kL0CompactionTrigger; ++t) {
      AddTable(0, random_table(100));
    }
    std::sort(snapshots.begin(), snapshots.end());
    snapshots.erase(snapshots.begin());
    snapshots.push_back(seq);
    const SequenceNumber smallest2 = snapshots.front();
    c = vset_->PickCompaction();
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->level(), 0);
    RunJob(c.get(), smallest2);
    CheckVisible(snapshots, kKeys);
    CheckNothingDroppableKept(smallest2, 2);

    // And all the way down into the old data.
    for (int level = 1; level < 3; ++level) {
      c = vset_->CompactRange(level, nullptr, nullptr);
      if (c == nullptr) continue;
      RunJob(c.get(), smallest2);
      CheckVisible(snapshots, kKeys);
      CheckNothingDroppableKept(smallest2, level + 2);
    }
  }
}

TEST_F(CompactionTest, OutputsSplitAtMaxFileSize) {
  options_.max_file_size = 32 << 10;
  options_.compression = Compression::kNone;
  Reset();
  Random rnd(7);
  SequenceNumber seq = 0;
  constexpr int kKeys = 2000;
  for (int t = 0; t < 4; ++t) {
    std::vector<Entry> entries;
    for (int k = t; k < kKeys; k += 2) {
      entries.push_back(
          {Key(k), ++seq, kTypeValue,
           std::string(100, static_cast<char>('a' + rnd.Uniform(26)))});
    }
    AddTable(0, entries);
  }
  // A snapshot keeps two versions of every other key: no key may straddle
  // two outputs.
  const SequenceNumber snapshot = seq / 2;
  std::unique_ptr<Compaction> c = vset_->CompactRange(0, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  CompactionStats stats = RunJob(c.get(), snapshot);

  ASSERT_GT(outputs_.size(), 5u);
  uint64_t total = 0;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const FileMetaData& f = outputs_[i];
    total += f.file_size;
    // Cut once the file passes the limit, at the next user key: the last
    // data block, index, filter and footer come on top.
    EXPECT_LT(f.file_size, options_.max_file_size + 3 * options_.block_size)
        << i;
    if (i + 1 < outputs_.size()) {
      EXPECT_GE(f.file_size, options_.max_file_size) << i;
      EXPECT_LT(f.largest.user_key(), outputs_[i + 1].smallest.user_key());
    }
  }
  EXPECT_EQ(stats.bytes_written, total);
  EXPECT_EQ(stats.output_files, outputs_.size());
  EXPECT_EQ(vset_->NumLevelFiles(1), static_cast<int>(outputs_.size()));
  CheckVisible({snapshot, seq}, kKeys);
  CheckNothingDroppableKept(snapshot, 2);
}

TEST_F(CompactionTest, OutputsSplitAtGrandparentOverlap) {
  // Grandparent (level 2) files described by metadata only, each as big as
  // the overlap limit allows for one output: never read here.
  const uint64_t gp_size = MaxGrandParentOverlapBytes(options_.max_file_size);
  VersionEdit gp;
  for (int i = 0; i < 10; ++i) {
    FileMetaData f;
    f.number = NewFileNumber();
    f.file_size = gp_size / 2 + 1;
    f.smallest = InternalKey(Key(i * 100), 1, kTypeValue);
    f.largest = InternalKey(Key(i * 100 + 50), 1, kTypeValue);
    gp.AddFile(2, f);
  }
  ASSERT_TRUE(Apply(&gp).ok());
  std::vector<Entry> entries;
  SequenceNumber seq = 10;
  for (int k = 0; k < 1000; k += 5) {
    entries.push_back({Key(k), ++seq, kTypeValue, "v"});
  }
  AddTable(0, entries);
  AddTable(0, {{Key(2), ++seq, kTypeValue, "w"}});
  std::unique_ptr<Compaction> c = vset_->CompactRange(0, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  RunJob(c.get(), seq);
  // A tiny amount of data, yet cut every time the output has passed more
  // than the limit of grandparent bytes: after every second file.
  ASSERT_GE(outputs_.size(), 3u);
  for (size_t i = 0; i + 1 < outputs_.size(); ++i) {
    EXPECT_LT(outputs_[i].file_size, options_.max_file_size);
    EXPECT_LT(outputs_[i].largest.user_key(),
              outputs_[i + 1].smallest.user_key());
  }
}

// A flush that runs while a compaction is under way (the DB does this from
// the interleave hook) may place its table in a gap between the compaction's
// inputs. Outputs must not span that gap, or the compaction's edit would put
// two overlapping files into one level.
TEST_F(CompactionTest, TableFlushedIntoAGapMeanwhileFits) {
  AddTable(2, {{Key(51), 1, kTypeValue, "old51"}});
  std::vector<Entry> low;
  std::vector<Entry> high;
  SequenceNumber seq = 1;
  for (int k = 0; k < 10; ++k) low.push_back({Key(k), ++seq, kTypeValue, "l"});
  for (int k = 90; k < 100; ++k) {
    high.push_back({Key(k), ++seq, kTypeValue, "h"});
  }
  AddTable(0, low);
  AddTable(0, high);
  std::unique_ptr<Compaction> c = vset_->CompactRange(0, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->num_input_files(0), 2);

  int flushed_level = -1;
  CompactionJob job(
      dbname_, options_, &icmp_, table_cache_.get(), c.get(),
      kMaxSequenceNumber, [this] { return NewFileNumber(); }, nullptr);
  job.SetInterleaveHook([&] {
    if (flushed_level >= 0) return;
    // Level 2 holds key 51, so the new table stops at level 1: where the
    // compaction's outputs go.
    flushed_level =
        vset_->current()->PickLevelForMemTableOutput(Key(50), Key(52));
    AddTable(flushed_level, {{Key(50), 100, kTypeValue, "new50"},
                             {Key(51), 101, kTypeValue, "new51"},
                             {Key(52), 102, kTypeValue, "new52"}});
  });
  ASSERT_TRUE(job.Run().ok());
  EXPECT_EQ(flushed_level, 1);
  EXPECT_EQ(job.outputs().size(), 2u);
  ASSERT_TRUE(Apply(c->edit()).ok());
  EXPECT_EQ(vset_->NumLevelFiles(1), 3);
  CheckVisible({kMaxSequenceNumber}, 100);
}

TEST_F(CompactionTest, ShutdownStopsAndLeavesNoOutput) {
  for (int t = 0; t < 2; ++t) {
    std::vector<Entry> entries;
    for (int k = 0; k < 100; ++k) {
      entries.push_back({Key(k), static_cast<SequenceNumber>(t * 100 + k + 1),
                         kTypeValue, "v"});
    }
    AddTable(0, entries);
  }
  auto before = mem_env_->GetChildren(dbname_);
  ASSERT_TRUE(before.ok());
  std::unique_ptr<Compaction> c = vset_->CompactRange(0, nullptr, nullptr);
  ASSERT_NE(c, nullptr);

  std::atomic<bool> shutting_down{false};
  int entries_seen = 0;
  CompactionJob job(
      dbname_, options_, &icmp_, table_cache_.get(), c.get(), 1000,
      [this] { return NewFileNumber(); }, &shutting_down);
  job.SetInterleaveHook([&] {
    if (++entries_seen == 50) shutting_down.store(true);
  });
  absl::Status s = job.Run();
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_TRUE(job.outputs().empty());
  EXPECT_TRUE(c->edit()->new_files().empty());
  EXPECT_TRUE(c->edit()->deleted_files().empty());
  auto after = mem_env_->GetChildren(dbname_);
  ASSERT_TRUE(after.ok());
  std::sort(before->begin(), before->end());
  std::sort(after->begin(), after->end());
  EXPECT_EQ(*after, *before);
}

// DB::CompactRange over a whole database, counted by what is on disk.
class FullCompactionTest : public testing::Test {
 protected:
  FullCompactionTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, dbname_);
    EXPECT_TRUE(db.ok()) << db.status();
    if (db.ok()) db_ = *std::move(db);
  }

  // Entries in all table files in the directory (live or not: the DB
  // deletes obsolete tables after every compaction) and how many files.
  struct OnDisk {
    uint64_t entries = 0;
    int tables = 0;
  };
  OnDisk CountOnDisk() {
    OnDisk r;
    absl::StatusOr<std::vector<std::string>> children =
        env_->GetChildren(dbname_);
    EXPECT_TRUE(children.ok()) << children.status();
    if (!children.ok()) return r;
    TableCache cache(dbname_, options_, &icmp_, nullptr, 100);
    for (const std::string& name : *children) {
      uint64_t number = 0;
      FileType type;
      if (!ParseFileName(name, &number, &type) ||
          type != FileType::kTableFile) {
        continue;
      }
      absl::StatusOr<uint64_t> size =
          env_->GetFileSize(TableFileName(dbname_, number));
      EXPECT_TRUE(size.ok()) << size.status();
      if (!size.ok()) continue;
      absl::StatusOr<TableCache::TableRef> table =
          cache.FindTable(number, *size);
      EXPECT_TRUE(table.ok()) << table.status();
      if (!table.ok()) continue;
      r.entries += table->table().properties().num_entries;
      ++r.tables;
    }
    return r;
  }

  void CompactAll() {
    absl::Status s = db_->CompactRange(nullptr, nullptr);
    ASSERT_TRUE(s.ok()) << s;
  }

  std::unique_ptr<Env> env_;
  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
  const std::string dbname_ = "/full";
  std::unique_ptr<DB> db_;
};

// The new user's trial: deletions of deleted and never-written keys must not
// stay on disk once a full compaction has nothing below them to hide.
TEST_F(FullCompactionTest, DropsDeletionsWithNothingBelow) {
  ASSERT_NE(db_, nullptr);
  constexpr int kKeys = 50000;
  constexpr int kLive = 50;
  for (int k = 0; k < kKeys; ++k) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), "value").ok());
  }
  for (int k = kLive; k < kKeys; ++k) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), Key(k)).ok());
  }
  for (int k = 0; k < 2 * kKeys; ++k) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), "never" + Key(k)).ok());
  }
  CompactAll();
  CompactAll();
  EXPECT_EQ(CountOnDisk().entries, static_cast<uint64_t>(kLive));
  std::string value;
  for (int k = 0; k < kKeys; k += 97) {
    absl::Status s = db_->Get(ReadOptions(), Key(k), &value);
    EXPECT_EQ(s.ok(), k < kLive) << Key(k) << ": " << s;
  }
}

// Tables from separate flushes are merged, not moved down one by one.
TEST_F(FullCompactionTest, MergesTablesOfSeparateFlushes) {
  ASSERT_NE(db_, nullptr);
  constexpr int kFlushes = 300;
  for (int k = 0; k < kFlushes; ++k) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), "value").ok());
    ASSERT_TRUE(db_->Flush().ok());
  }
  ASSERT_EQ(CountOnDisk().tables, kFlushes);
  CompactAll();
  const OnDisk after = CountOnDisk();
  EXPECT_EQ(after.entries, static_cast<uint64_t>(kFlushes));
  // 300 small entries fit one table of the default 2 MiB.
  EXPECT_EQ(after.tables, 1);
  std::string value;
  for (int k = 0; k < kFlushes; ++k) {
    EXPECT_TRUE(db_->Get(ReadOptions(), Key(k), &value).ok()) << Key(k);
  }
}

// A live snapshot keeps the deletions and the values they hide; once it is
// released, the next full compaction leaves only the live keys.
TEST_F(FullCompactionTest, SnapshotKeepsDeletionsUntilReleased) {
  ASSERT_NE(db_, nullptr);
  constexpr int kKeys = 1000;
  constexpr int kDeleted = 900;
  for (int k = 0; k < kKeys; ++k) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), "value").ok());
  }
  ASSERT_TRUE(db_->Flush().ok());
  const Snapshot* snapshot = db_->GetSnapshot();
  for (int k = 0; k < kDeleted; ++k) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), Key(k)).ok());
  }
  CompactAll();
  EXPECT_EQ(CountOnDisk().entries, static_cast<uint64_t>(kKeys + kDeleted));
  ReadOptions at_snapshot;
  at_snapshot.snapshot = snapshot;
  std::string value;
  for (int k = 0; k < kKeys; k += 7) {
    EXPECT_TRUE(db_->Get(at_snapshot, Key(k), &value).ok()) << Key(k);
    EXPECT_EQ(db_->Get(ReadOptions(), Key(k), &value).ok(), k >= kDeleted);
  }

  db_->ReleaseSnapshot(snapshot);
  CompactAll();
  EXPECT_EQ(CountOnDisk().entries, static_cast<uint64_t>(kKeys - kDeleted));
  for (int k = 0; k < kKeys; k += 7) {
    EXPECT_EQ(db_->Get(ReadOptions(), Key(k), &value).ok(), k >= kDeleted);
  }
}

// Compaction and flush outputs are protected from deletion by a guard that
// unregisters itself, unless told to keep its number pending for good.
TEST(PendingOutputTest, RegisteredUntilDestroyedUnlessKept) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  DBState state(SanitizeOptions(options), "/pending");
  MutexLock lock(&state.mutex);
  uint64_t kept = 0;
  {
    PendingOutput a = state.NewPendingOutput();
    PendingOutput b = state.NewPendingOutput();
    PendingOutput c = state.NewPendingOutput();
    EXPECT_LT(a.number(), b.number());
    EXPECT_EQ(state.pending_outputs(),
              (std::set<uint64_t>{a.number(), b.number(), c.number()}));
    // Moving hands the registration on; assigning over a guard ends its own.
    const uint64_t a_number = a.number();
    const uint64_t c_number = c.number();
    PendingOutput moved = std::move(a);
    EXPECT_EQ(moved.number(), a_number);
    EXPECT_EQ(state.pending_outputs().size(), 3u);
    moved = std::move(c);
    EXPECT_EQ(state.pending_outputs(),
              (std::set<uint64_t>{b.number(), c_number}));
    kept = b.number();
    b.KeepPending();
  }
  EXPECT_EQ(state.pending_outputs(), std::set<uint64_t>{kept});
}

// Version::Get and AddIterators on real tables (the fixture builds them).
using VersionReadTest = CompactionTest;

TEST_F(VersionReadTest, GetReadsNewestFirstAndCountsProbes) {
  AddTable(
      2, {{Key(4), 1, kTypeValue, "deep4"}, {Key(3), 2, kTypeValue, "deep3"}});
  AddTable(1, {{Key(5), 3, kTypeValue, "one5"}});
  AddTable(0, {{Key(1), 4, kTypeValue, "old1"}, {Key(2), 5, kTypeValue, "a2"}});
  AddTable(0,
           {{Key(1), 6, kTypeValue, "new1"}, {Key(3), 7, kTypeDeletion, ""}});
  std::shared_ptr<const Version> v = vset_->current();
  ASSERT_EQ(v->NumFiles(0), 2);

  struct Case {
    int key;
    SequenceNumber snapshot;
    const char* value;  // nullptr: NotFound
    uint64_t probes;
  };
  const Case cases[] = {
      {1, kMaxSequenceNumber, "new1", 1},  // the newer level-0 table answers
      {1, 5, "old1", 2},  // newer table holds only a later version
      {3, kMaxSequenceNumber, nullptr, 1},  // deletion in level 0 hides level 2
      {3, 6, "deep3", 2},  // level-0 table covers key 3 but not @6
      {4, kMaxSequenceNumber, "deep4", 1},  // binary search finds level 2
      {5, kMaxSequenceNumber, "one5", 1},
      {0, kMaxSequenceNumber, nullptr, 0},  // no table's range covers it
      {6, kMaxSequenceNumber, nullptr, 0},
  };
  for (const Case& c : cases) {
    ReadStats stats;
    std::string value;
    const LookupKey lkey(Key(c.key), c.snapshot);
    absl::Status s = v->Get(ReadOptions(), lkey, &value, &stats);
    if (c.value != nullptr) {
      ASSERT_TRUE(s.ok()) << c.key << "@" << c.snapshot << ": " << s;
      EXPECT_EQ(value, c.value);
    } else {
      EXPECT_TRUE(absl::IsNotFound(s)) << c.key << ": " << s;
    }
    EXPECT_EQ(stats.tables_probed, c.probes) << c.key << "@" << c.snapshot;
    // The table layer counted each probe's filter verdict.
    EXPECT_EQ(stats.filter_negatives + stats.filter_positives, c.probes);
  }

  // AddIterators: every entry of every table, merged in internal-key order.
  IteratorList iters;
  v->AddIterators(ReadOptions(), &iters);
  EXPECT_EQ(iters.size(), 4u);  // two level-0 tables, levels 1 and 2
  std::unique_ptr<Iterator> merged =
      NewMergingIterator(&icmp_, std::move(iters));
  std::vector<std::string> seen;
  for (merged->SeekToFirst(); merged->Valid(); merged->Next()) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(merged->key(), &p));
    seen.push_back(std::string(p.user_key) + "@" + std::to_string(p.sequence));
  }
  EXPECT_TRUE(merged->status().ok());
  EXPECT_EQ(seen,
            (std::vector<std::string>{
                Key(1) + "@6", Key(1) + "@4", Key(2) + "@5", Key(3) + "@7",
                Key(3) + "@2", Key(4) + "@1", Key(5) + "@3"}));
}

}  // namespace
}  // namespace sift
