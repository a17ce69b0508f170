// Prefix filters (Options::prefix_extractor): the built-in extractors and
// the prefix arithmetic; scans confined to one prefix (by their bounds or by
// ReadOptions::prefix_same_as_start) skip tables whose filter rules the
// prefix out without reading a block; tables written with another extractor
// (or none) are never prefix-filtered, so reopening with a changed
// extractor gives the same answers; and a randomized model test of bounds,
// prefixes, deletes, snapshots and extractor changes against a std::map.

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "db/scan_prefix.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/prefix_extractor.h"
#include "tests/testutil/test_env.h"
#include "util/random.h"

namespace sift {
namespace {

using Model = std::map<std::string, std::string>;

TEST(PrefixExtractorTest, Fixed) {
  auto e = NewFixedPrefixExtractor(3);
  EXPECT_EQ(e->Name(), "sift.fixed:3");
  EXPECT_FALSE(e->InDomain("ab"));
  EXPECT_TRUE(e->InDomain("abc"));
  EXPECT_EQ(e->Transform("abcdef"), "abc");
}

TEST(PrefixExtractorTest, Delimited) {
  auto e = NewDelimitedPrefixExtractor(':');
  EXPECT_EQ(e->Name(), "sift.delimited:3a");
  EXPECT_FALSE(e->InDomain("user"));
  EXPECT_TRUE(e->InDomain("user:"));
  EXPECT_EQ(e->Transform("user:42:name"), "user:");
  EXPECT_EQ(NewDelimitedPrefixExtractor('\xff')->Name(), "sift.delimited:ff");
}

TEST(ScanPrefixTest, PrefixSuccessor) {
  EXPECT_EQ(PrefixSuccessor("abc"), "abd");
  EXPECT_EQ(PrefixSuccessor("ab\xff\xff"), "ac");
  EXPECT_EQ(PrefixSuccessor("\xff\xff"), std::nullopt);
  EXPECT_EQ(PrefixSuccessor(""), std::nullopt);
}

TEST(ScanPrefixTest, OnlyBoundsInsideOnePrefix) {
  auto e = NewDelimitedPrefixExtractor(':');
  ReadOptions ro;
  EXPECT_EQ(ScanPrefix(ro, e.get()), std::nullopt);  // no bounds
  ro.iterate_lower_bound = "user:4";
  EXPECT_EQ(ScanPrefix(ro, e.get()), std::nullopt);  // open above
  ro.iterate_upper_bound = "user:5";
  EXPECT_EQ(ScanPrefix(ro, e.get()), "user:");
  ro.iterate_upper_bound = "user;";  // the prefix's successor: still inside
  EXPECT_EQ(ScanPrefix(ro, e.get()), "user:");
  ro.iterate_upper_bound = "user;a";  // past it: other prefixes
  EXPECT_EQ(ScanPrefix(ro, e.get()), std::nullopt);
  ro.iterate_upper_bound = "user:5";
  ro.iterate_lower_bound = "user";  // outside the domain
  EXPECT_EQ(ScanPrefix(ro, e.get()), std::nullopt);
  EXPECT_EQ(ScanPrefix(ro, nullptr), std::nullopt);
  // A prefix of 0xff bytes: every key after it starts with it.
  ro.iterate_lower_bound = "\xff:";
  ro.iterate_upper_bound.reset();
  auto f = NewFixedPrefixExtractor(1);
  EXPECT_EQ(ScanPrefix(ro, f.get()), "\xff");
}

class DBPrefixFilterTest : public testing::Test {
 protected:
  DBPrefixFilterTest() : env_(test::NewTestEnv()) {
    options_.env = env_.get();
    options_.create_if_missing = true;
    options_.write_buffer_size = 32 << 10;
    options_.max_file_size = 32 << 10;
    options_.block_size = 512;
    options_.prefix_extractor = NewDelimitedPrefixExtractor(':');
  }

  void Open() {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/prefix");
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  // Every entity e in [0, entities) with `fields` keys "e<e>:<f>", entities
  // in `skip` left out; flushed into level-0 tables of `per_table`
  // entities each.
  void Fill(int entities, int fields, int per_table, int skip_every) {
    for (int e = 0; e < entities; ++e) {
      if (skip_every > 0 && e % skip_every == 0) continue;
      for (int f = 0; f < fields; ++f) {
        const std::string key = EntityKey(e, f);
        ASSERT_TRUE(db_->Put(WriteOptions(), key, "v" + key).ok());
        model_[key] = "v" + key;
      }
      if ((e + 1) % per_table == 0) {
        ASSERT_TRUE(db_->Flush().ok());
      }
    }
    ASSERT_TRUE(db_->Flush().ok());
  }

  static std::string Entity(int e) { return absl::StrFormat("e%05d:", e); }
  static std::string EntityKey(int e, int f) {
    return Entity(e) + absl::StrFormat("%03d", f);
  }

  // Keys the iterator yields from Seek(start) forward.
  static std::vector<std::string> Forward(Iterator* it,
                                          std::string_view start) {
    std::vector<std::string> keys;
    for (it->Seek(start); it->Valid(); it->Next()) {
      keys.emplace_back(it->key());
    }
    EXPECT_TRUE(it->status().ok()) << it->status();
    return keys;
  }

  std::vector<std::string> ModelRange(std::string_view lo,
                                      std::string_view hi) const {
    std::vector<std::string> keys;
    for (auto it = model_.lower_bound(std::string(lo));
         it != model_.end() && it->first < hi; ++it) {
      keys.push_back(it->first);
    }
    return keys;
  }

  std::unique_ptr<Env> env_;
  Options options_;
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_F(DBPrefixFilterTest, BoundedScanOfAbsentPrefixReadsNoBlock) {
  Open();
  Fill(/*entities=*/400, /*fields=*/5, /*per_table=*/40, /*skip_every=*/2);
  const ReadStats before = db_->GetReadStats();
  int skipped_scans = 0;
  for (int e = 0; e < 400; e += 2) {  // every absent entity
    const std::string lo = Entity(e);
    const std::string hi = *PrefixSuccessor(lo);
    ReadOptions ro;
    ro.iterate_lower_bound = lo;
    ro.iterate_upper_bound = hi;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    it->Seek(lo);
    EXPECT_FALSE(it->Valid()) << lo;
    EXPECT_TRUE(it->status().ok());
    ++skipped_scans;
  }
  const ReadStats after = db_->GetReadStats();
  const uint64_t probes =
      after.prefix_filter_probes - before.prefix_filter_probes;
  const uint64_t negatives =
      after.prefix_filter_negatives - before.prefix_filter_negatives;
  EXPECT_GT(probes, 0u);
  // 10 bits per key over keys and prefixes: about 1% false positives, and
  // only those read a block.
  EXPECT_GE(negatives * 100, probes * 95) << negatives << " of " << probes;
  EXPECT_LE(after.iterator_block_reads - before.iterator_block_reads,
            probes - negatives);
  EXPECT_EQ(skipped_scans, 200);

  // Present entities: exactly their keys, in both directions.
  for (int e = 1; e < 400; e += 38) {
    const std::string lo = Entity(e);
    const std::string hi = *PrefixSuccessor(lo);
    ReadOptions ro;
    ro.iterate_lower_bound = lo;
    ro.iterate_upper_bound = hi;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    EXPECT_EQ(Forward(it.get(), lo), ModelRange(lo, hi));
    std::vector<std::string> backward;
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      backward.insert(backward.begin(), std::string(it->key()));
    }
    EXPECT_EQ(backward, ModelRange(lo, hi));
  }
}

TEST_F(DBPrefixFilterTest, PrefixSameAsStartStaysInsideThePrefix) {
  Open();
  Fill(/*entities=*/200, /*fields=*/4, /*per_table=*/25, /*skip_every=*/3);
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  for (int e = 0; e < 200; e += 7) {
    const std::string lo = Entity(e);
    const std::string hi = *PrefixSuccessor(lo);
    EXPECT_EQ(Forward(it.get(), lo + "001"), ModelRange(lo + "001", hi)) << e;
    // Backward from the prefix's last key stops at its first.
    std::vector<std::string> backward;
    it->Seek(lo + "003");
    for (; it->Valid(); it->Prev()) {
      backward.insert(backward.begin(), std::string(it->key()));
    }
    EXPECT_EQ(backward, ModelRange(lo, lo + "004")) << e;
  }
  // Total order again: SeekToFirst, and a target outside the domain.
  std::vector<std::string> all;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    all.emplace_back(it->key());
  }
  EXPECT_EQ(all.size(), model_.size());
  it->Seek("e");  // no delimiter
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), model_.begin()->first);
  int n = 0;
  for (; it->Valid(); it->Next()) ++n;
  EXPECT_EQ(static_cast<size_t>(n), model_.size());

  // Absent prefixes: no block read beyond the filters' false positives.
  const ReadStats before = db_->GetReadStats();
  {
    std::unique_ptr<Iterator> scoped = db_->NewIterator(ro);
    for (int e = 0; e < 200; e += 3) {
      scoped->Seek(Entity(e));
      EXPECT_FALSE(scoped->Valid()) << e;
    }
  }
  const ReadStats after = db_->GetReadStats();
  const uint64_t probes =
      after.prefix_filter_probes - before.prefix_filter_probes;
  const uint64_t negatives =
      after.prefix_filter_negatives - before.prefix_filter_negatives;
  EXPECT_GT(probes, 0u);
  EXPECT_LE(after.iterator_block_reads - before.iterator_block_reads,
            probes - negatives);
}

TEST_F(DBPrefixFilterTest, OtherExtractorsTablesAreNotPrefixFiltered) {
  Open();
  Fill(/*entities=*/100, /*fields=*/3, /*per_table=*/20, /*skip_every=*/2);
  // Reopen with an extractor of another name: the old tables answer every
  // prefix with "maybe" and the answers stay right.
  options_.prefix_extractor = NewFixedPrefixExtractor(3);
  Open();
  const ReadStats before = db_->GetReadStats();
  {
    // Confined to the new extractor's prefix "e00": entities 0..99.
    ReadOptions ro;
    ro.iterate_lower_bound = "e00";
    ro.iterate_upper_bound = "e01";
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    EXPECT_EQ(Forward(it.get(), "e00"), ModelRange("e00", "e01"));
    EXPECT_EQ(ModelRange("e00", "e01").size(), 150u);
  }
  EXPECT_EQ(db_->GetReadStats().prefix_filter_probes,
            before.prefix_filter_probes);
  // No extractor at all: bounded scans and prefix_same_as_start are plain.
  options_.prefix_extractor = nullptr;
  Open();
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  EXPECT_EQ(Forward(it.get(), Entity(1)), ModelRange(Entity(1), "\xff"));
  it.reset();  // iterators go before their database
  // New tables under the new extractor, old ones rewritten by compaction.
  options_.prefix_extractor = NewFixedPrefixExtractor(3);
  Open();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ReadOptions bounded;
  bounded.iterate_lower_bound = "e00";
  bounded.iterate_upper_bound = "e01";
  const ReadStats before2 = db_->GetReadStats();
  it = db_->NewIterator(bounded);
  EXPECT_EQ(Forward(it.get(), "e00"), ModelRange("e00", "e01"));
  it.reset();
  EXPECT_GT(db_->GetReadStats().prefix_filter_probes,
            before2.prefix_filter_probes);
}

TEST_F(DBPrefixFilterTest, PrefixOnlyFiltersKeepPointReadsRight) {
  options_.whole_key_filtering = false;
  Open();
  Fill(/*entities=*/100, /*fields=*/3, /*per_table=*/20, /*skip_every=*/2);
  for (int e = 0; e < 100; ++e) {
    for (int f = 0; f < 4; ++f) {
      const std::string key = EntityKey(e, f);
      std::string value;
      const absl::Status s = db_->Get(ReadOptions(), key, &value);
      auto m = model_.find(key);
      if (m == model_.end()) {
        EXPECT_TRUE(absl::IsNotFound(s)) << key << " " << s;
      } else {
        ASSERT_TRUE(s.ok()) << key << " " << s;
        EXPECT_EQ(value, m->second);
      }
    }
  }
  // The filters hold no whole key: Get asks none of them.
  const ReadStats stats = db_->GetReadStats();
  EXPECT_EQ(stats.filter_negatives + stats.filter_positives, 0u);
  // Reopened with whole keys again, the old tables still answer right.
  options_.whole_key_filtering = true;
  Open();
  std::string value;
  EXPECT_TRUE(db_->Get(ReadOptions(), EntityKey(1, 1), &value).ok());
  EXPECT_TRUE(
      absl::IsNotFound(db_->Get(ReadOptions(), EntityKey(2, 1), &value)));
}

TEST_F(DBPrefixFilterTest, OptionsAreChecked) {
  options_.prefix_extractor = nullptr;
  options_.whole_key_filtering = false;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, "/prefix");
  EXPECT_TRUE(absl::IsInvalidArgument(db.status())) << db.status();
}

// A randomized model test: short keys over a few prefixes (some keys without
// the delimiter, some shorter than the fixed prefix), puts, deletes and
// snapshots, flushes and compactions, reopens that change the extractor and
// whole-key filtering; bounded scans (prefix-confined or not) and
// prefix_same_as_start seeks in both directions, compared with the model.
TEST_F(DBPrefixFilterTest, RandomizedAgainstModel) {
  const uint64_t seed =
      std::getenv("SIFT_TEST_SEED") != nullptr
          ? std::strtoull(std::getenv("SIFT_TEST_SEED"), nullptr, 10)
          : 301;
  Random rnd(static_cast<uint32_t>(seed));
  options_.write_buffer_size = 16 << 10;
  options_.max_file_size = 16 << 10;
  options_.block_size = 256;
  std::vector<std::shared_ptr<const PrefixExtractor>> extractors = {
      nullptr, NewDelimitedPrefixExtractor(':'), NewFixedPrefixExtractor(2),
      NewFixedPrefixExtractor(3), NewDelimitedPrefixExtractor('b')};
  auto random_key = [&]() {
    std::string key;
    key.push_back(static_cast<char>('a' + rnd.Uniform(4)));
    if (!rnd.OneIn(8)) key.push_back(rnd.OneIn(3) ? ':' : 'b');
    const uint64_t tail = rnd.Uniform(4);
    for (uint64_t i = 0; i < tail; ++i) {
      key.push_back(static_cast<char>('a' + rnd.Uniform(5)));
    }
    return key;
  };
  Open();
  Model model;
  for (int round = 0; round < 12; ++round) {
    for (int i = 0; i < 600; ++i) {
      const std::string key = random_key();
      if (rnd.OneIn(4)) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value = absl::StrFormat("%s.%d.%d", key, round, i);
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
      if (rnd.OneIn(150)) {
        ASSERT_TRUE(db_->Flush().ok());
      }
    }
    if (rnd.OneIn(3)) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
    const Snapshot* snapshot = db_->GetSnapshot();
    const Model at_snapshot = model;
    // Writes after the snapshot that it must not see.
    for (int i = 0; i < 50; ++i) {
      const std::string key = random_key();
      ASSERT_TRUE(db_->Put(WriteOptions(), key, "later").ok());
      model[key] = "later";
    }
    for (int check = 0; check < 150; ++check) {
      const bool use_snapshot = rnd.OneIn(2);
      const Model& m = use_snapshot ? at_snapshot : model;
      ReadOptions ro;
      if (use_snapshot) ro.snapshot = snapshot;
      const std::string start = random_key();
      std::string lo, hi;
      const std::shared_ptr<const PrefixExtractor>& ex =
          options_.prefix_extractor;
      if (rnd.OneIn(2) && ex != nullptr && ex->InDomain(start)) {
        // Bounds confined to start's prefix (or to a part of it).
        lo = std::string(ex->Transform(start));
        std::optional<std::string> succ = PrefixSuccessor(lo);
        hi = rnd.OneIn(3) ? start + "c" : succ.value_or("\xff");
        if (rnd.OneIn(3)) lo = start;
      } else {
        lo = rnd.OneIn(4) ? "" : start;
        hi = rnd.OneIn(4) ? "\xff" : random_key() + "z";
      }
      if (!lo.empty()) ro.iterate_lower_bound = lo;
      ro.iterate_upper_bound = hi;
      const bool scoped = rnd.OneIn(2);
      ro.prefix_same_as_start = scoped;
      // What the iterator may yield after Seek(target) forward.
      const std::string target = rnd.OneIn(2) ? start : random_key();
      std::string from = std::max(target, lo);
      std::string to = hi;
      if (scoped && ex != nullptr && ex->InDomain(from)) {
        const std::string prefix(ex->Transform(from));
        std::optional<std::string> succ = PrefixSuccessor(prefix);
        if (succ.has_value() && *succ < to) to = *succ;
      }
      std::vector<std::string> expected;
      for (auto it = m.lower_bound(from); it != m.end() && it->first < to;
           ++it) {
        expected.push_back(it->first + "=" + it->second);
      }
      std::unique_ptr<Iterator> it = db_->NewIterator(ro);
      std::vector<std::string> got;
      for (it->Seek(target); it->Valid(); it->Next()) {
        got.push_back(std::string(it->key()) + "=" + std::string(it->value()));
      }
      ASSERT_TRUE(it->status().ok()) << it->status();
      ASSERT_EQ(got, expected)
          << "round " << round << " check " << check << " target " << target
          << " lo " << lo << " hi " << hi << " scoped " << scoped
          << " extractor "
          << (ex != nullptr ? std::string(ex->Name()) : "none");
      // Backward from the same target: the keys of the scope before it.
      std::string scope_lo = lo;
      if (scoped && ex != nullptr && ex->InDomain(from)) {
        const std::string prefix(ex->Transform(from));
        if (prefix > scope_lo) scope_lo = prefix;
      }
      std::vector<std::string> back_expected;
      it->Seek(target);
      if (it->Valid()) {
        const std::string first(it->key());
        for (auto mit = m.find(first); mit != m.end();) {
          if (mit->first < scope_lo) break;
          back_expected.push_back(mit->first);
          if (mit == m.begin()) break;
          --mit;
        }
        std::vector<std::string> back;
        for (; it->Valid(); it->Prev()) back.emplace_back(it->key());
        ASSERT_TRUE(it->status().ok());
        ASSERT_EQ(back, back_expected)
            << "backward, round " << round << " target " << target;
      }
    }
    db_->ReleaseSnapshot(snapshot);
    if (rnd.OneIn(2)) {
      options_.prefix_extractor = extractors[rnd.Uniform(extractors.size())];
      options_.whole_key_filtering =
          options_.prefix_extractor == nullptr || !rnd.OneIn(3);
      // Range filters beside the prefix filters: a coarse one that often
      // says "maybe", a fine one, or none.
      const double range_bits[] = {0, 4, 16};
      options_.range_filter_bits_per_key = range_bits[rnd.Uniform(3)];
      Open();
    }
  }
}

}  // namespace
}  // namespace sift
