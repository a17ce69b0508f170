#include "table/block.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "table/block_builder.h"
#include "tests/testutil/testutil.h"
#include "util/coding.h"
#include "util/comparator.h"
#include "util/random.h"

namespace sift {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

BlockContents Contents(std::string_view bytes) {
  BlockContents c;
  c.data = std::make_unique<char[]>(bytes.size());
  std::memcpy(c.data.get(), bytes.data(), bytes.size());
  c.size = bytes.size();
  return c;
}

// The bytes of a block of `entries` (sorted), unchecked: tests damage them.
std::string BlockBytes(const Entries& entries, int restart_interval) {
  BlockBuilder builder(restart_interval);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  return std::string(builder.Finish());
}

std::unique_ptr<Block> BuildBlock(const Entries& entries,
                                  int restart_interval) {
  BlockBuilder builder(restart_interval);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  EXPECT_EQ(builder.num_entries(), entries.size());
  const std::string_view bytes = builder.Finish();
  EXPECT_EQ(bytes.size(), builder.CurrentSizeEstimate());
  auto block = Block::Create(Contents(bytes), 0, "test");
  EXPECT_TRUE(block.ok()) << block.status();
  return *std::move(block);
}

Entries SortedEntries(Random* rnd, int n) {
  std::map<std::string, std::string> m;
  while (static_cast<int>(m.size()) < n) {
    // Short keys over a small alphabet share prefixes often.
    m[test::RandomKey(rnd, 1 + static_cast<int>(rnd->Uniform(12)))] =
        test::RandomString(rnd, static_cast<int>(rnd->Skewed(8)));
  }
  return Entries(m.begin(), m.end());
}

void CheckBlock(const Block& block, const Entries& entries, Random* rnd) {
  const std::string file = "test";
  auto it = block.NewIterator(BytewiseComparator(), &file);
  // Forward.
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, entries.size());
    ASSERT_EQ(it->key(), entries[i].first);
    ASSERT_EQ(it->value(), entries[i].second);
  }
  ASSERT_EQ(i, entries.size());
  ASSERT_TRUE(it->status().ok());
  // Backward.
  i = entries.size();
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    --i;
    ASSERT_EQ(it->key(), entries[i].first);
    ASSERT_EQ(it->value(), entries[i].second);
  }
  ASSERT_EQ(i, 0u);
  // Seek to every key, then just after it (key + "\0" is the next possible
  // key) and just before it, and step both ways from there.
  for (size_t j = 0; j < entries.size(); ++j) {
    it->Seek(entries[j].first);
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(it->key(), entries[j].first);
    it->Seek(entries[j].first + std::string(1, '\0'));
    if (j + 1 < entries.size()) {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), entries[j + 1].first);
      it->Prev();
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), entries[j].first);
    } else {
      ASSERT_FALSE(it->Valid());
    }
  }
  it->Seek("");
  ASSERT_EQ(it->Valid(), !entries.empty());
  it->Seek("\xff\xff\xff\xff");
  ASSERT_FALSE(it->Valid());
  // Random walks with direction changes.
  if (entries.empty()) return;
  for (int walk = 0; walk < 20; ++walk) {
    size_t pos = rnd->Uniform(entries.size());
    it->Seek(entries[pos].first);
    for (int step = 0; step < 50; ++step) {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), entries[pos].first);
      if (rnd->OneIn(2)) {
        it->Next();
        if (++pos == entries.size()) break;
      } else {
        it->Prev();
        if (pos-- == 0) break;
      }
    }
  }
  ASSERT_TRUE(it->status().ok());
}

TEST(BlockTest, EmptyBlock) {
  auto block = BuildBlock({}, 16);
  EXPECT_EQ(block->num_restarts(), 1u);
  auto it = block->NewIterator(BytewiseComparator(), nullptr);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST(BlockTest, RoundTripAcrossRestartIntervals) {
  Random rnd(301);
  for (int interval : {1, 2, 3, 16, 1000}) {
    for (int n : {1, 2, 15, 16, 17, 100, 1000}) {
      SCOPED_TRACE(testing::Message() << "interval " << interval << " n " << n);
      const Entries entries = SortedEntries(&rnd, n);
      auto block = BuildBlock(entries, interval);
      EXPECT_EQ(block->num_restarts(),
                static_cast<uint32_t>((n + interval - 1) / interval));
      CheckBlock(*block, entries, &rnd);
    }
  }
}

TEST(BlockTest, EmptyKeysAndValuesAndBinaryBytes) {
  Random rnd(7);
  Entries entries = {{"", ""},
                     {std::string("\0", 1), "v"},
                     {std::string("\0\0", 2), ""},
                     {"\x7f", std::string(1000, 'x')},
                     {"\x80", "y"},
                     {"\xff", "z"},
                     {"\xff\xff", std::string("\0\xff", 2)}};
  for (int interval : {1, 2, 16})
    CheckBlock(*BuildBlock(entries, interval), entries, &rnd);
}

TEST(BlockTest, PrefixCompressionSavesSpace) {
  BlockBuilder builder(16);
  size_t raw = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "a-long-common-prefix/" + test::NumberKey(i, 8);
    builder.Add(key, "v");
    raw += key.size() + 1;
  }
  EXPECT_LT(builder.Finish().size(), raw / 2);
}

TEST(BlockTest, ResetStartsOver) {
  BlockBuilder builder(4);
  builder.Add("zzz", "1");
  builder.Finish();
  builder.Reset();
  EXPECT_TRUE(builder.empty());
  builder.Add("aaa", "2");
  auto block = Block::Create(Contents(builder.Finish()), 0, "t");
  ASSERT_TRUE(block.ok());
  auto it = (*block)->NewIterator(BytewiseComparator(), nullptr);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "aaa");
  EXPECT_EQ(it->value(), "2");
  it->Next();
  EXPECT_FALSE(it->Valid());
}

TEST(BlockTest, CreateRejectsBadRestartArrays) {
  const std::string file = "blk.sst";
  auto expect_bad = [&](const std::string& bytes) {
    auto block = Block::Create(Contents(bytes), 77, file);
    ASSERT_FALSE(block.ok());
    EXPECT_TRUE(absl::IsDataLoss(block.status())) << block.status();
    EXPECT_NE(block.status().message().find("blk.sst"), std::string::npos);
    EXPECT_NE(block.status().message().find("77"), std::string::npos);
  };
  expect_bad("");
  expect_bad("abc");
  std::string zero_restarts;
  PutFixed32(&zero_restarts, 0);
  expect_bad(zero_restarts);
  std::string too_many;
  PutFixed32(&too_many, 0);
  PutFixed32(&too_many, 2);
  expect_bad(too_many);
  // Restarts must start at 0 and increase inside the entries.
  BlockBuilder builder(1);
  builder.Add("a", "1");
  builder.Add("b", "2");
  std::string good(builder.Finish());
  ASSERT_TRUE(Block::Create(Contents(good), 0, file).ok());
  std::string swapped = good;
  const size_t array = good.size() - 12;
  EncodeFixed32(swapped.data() + array, DecodeFixed32(good.data() + array + 4));
  EncodeFixed32(swapped.data() + array + 4, 0);
  expect_bad(swapped);
  std::string past_end = good;
  EncodeFixed32(past_end.data() + array + 4, static_cast<uint32_t>(array));
  expect_bad(past_end);
}

// Iterate a block in every way, reporting whether any error was seen; the
// point is that damaged bytes never cause a read out of bounds (ASan) or a
// hang.
bool ExerciseBlock(const Block& block, const Entries& probes) {
  const std::string file = "f";
  auto it = block.NewIterator(BytewiseComparator(), &file);
  int steps = 0;
  for (it->SeekToFirst(); it->Valid() && steps < 100000; it->Next()) ++steps;
  auto it2 = block.NewIterator(BytewiseComparator(), &file);
  for (it2->SeekToLast(); it2->Valid() && steps < 200000; it2->Prev()) ++steps;
  auto it3 = block.NewIterator(BytewiseComparator(), &file);
  for (const auto& [k, v] : probes) {
    it3->Seek(k);
    if (it3->Valid()) {
      (void)it3->key();
      (void)it3->value();
      it3->Prev();
    }
  }
  return !it->status().ok() || !it2->status().ok() || !it3->status().ok();
}

TEST(BlockTest, DamagedBytesNeverReadOutOfBounds) {
  Random rnd(99);
  const Entries entries = SortedEntries(&rnd, 40);
  const std::string good = BlockBytes(entries, 4);
  int errors = 0;
  // Every byte set to a few damaging values.
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t x : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      auto block = Block::Create(Contents(bad), 0, "f");
      if (!block.ok()) {
        EXPECT_TRUE(absl::IsDataLoss(block.status()));
        continue;
      }
      if (ExerciseBlock(**block, entries)) ++errors;
    }
  }
  EXPECT_GT(errors, 0);  // some damage must be noticed by the decoder
  // Every truncation.
  for (size_t len = 0; len < good.size(); ++len) {
    auto block = Block::Create(Contents(good.substr(0, len)), 0, "f");
    if (block.ok()) ExerciseBlock(**block, entries);
  }
}

// PrefetchRestartKeys reads the restart array of bytes nobody has checked:
// it must stay inside them whatever they hold (ASan builds check the reads;
// each call gets a buffer of exactly the bytes given).
TEST(BlockTest, PrefetchRestartKeysStaysInsideDamagedBytes) {
  Random rnd(7);
  const Entries entries = SortedEntries(&rnd, 60);
  const std::string good = BlockBytes(entries, 4);
  auto prefetch = [](const std::string& bytes) {
    std::unique_ptr<char[]> exact(new char[bytes.size()]);
    std::memcpy(exact.get(), bytes.data(), bytes.size());
    Block::PrefetchRestartKeys(std::string_view(exact.get(), bytes.size()));
  };
  for (size_t len = 0; len <= good.size(); ++len) prefetch(good.substr(0, len));
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      prefetch(bad);
    }
  }
  // A restart count of 2^32 - 1 and one that just fits.
  std::string huge = good;
  EncodeFixed32(huge.data() + huge.size() - 4, 0xffffffffu);
  prefetch(huge);
  prefetch(std::string("\x01\x00\x00\x00", 4));
}

// PrefetchSeek only loads memory: a Seek after it lands where a Seek alone
// does, on good blocks of every restart interval and on damaged ones; and a
// SeekFromRestart at the point it returned lands there too.
TEST(BlockTest, PrefetchSeekLeavesSeekUnchanged) {
  Random rnd(11);
  const std::string file = "f";
  auto same_seeks = [&](const Block& block, const Entries& probes) {
    for (const auto& [k, v] : probes) {
      for (const std::string& target : {k, k + std::string(1, '\0')}) {
        auto plain = block.NewIterator(BytewiseComparator(), &file);
        plain->Seek(target);
        auto prefetched = block.NewIterator(BytewiseComparator(), &file);
        const std::optional<uint32_t> restart =
            prefetched->PrefetchSeek(target);
        prefetched->Seek(target);
        ASSERT_EQ(prefetched->Valid(), plain->Valid()) << target;
        ASSERT_EQ(prefetched->status(), plain->status()) << target;
        if (plain->Valid()) {
          ASSERT_EQ(prefetched->key(), plain->key());
          ASSERT_EQ(prefetched->value(), plain->value());
        }
        if (!restart.has_value()) {
          // Only damage met by the search, or an empty block, gives none.
          ASSERT_TRUE(!plain->status().ok() || block.num_restarts() == 1)
              << target;
          continue;
        }
        ASSERT_LT(*restart, block.num_restarts());
        auto resumed = block.NewIterator(BytewiseComparator(), &file);
        resumed->SeekFromRestart(target, *restart);
        ASSERT_EQ(resumed->Valid(), plain->Valid()) << target;
        ASSERT_EQ(resumed->status(), plain->status()) << target;
        if (plain->Valid()) {
          ASSERT_EQ(resumed->key(), plain->key());
          ASSERT_EQ(resumed->value(), plain->value());
          ASSERT_EQ(resumed->entry_offset(), plain->entry_offset());
        }
      }
    }
  };
  const Entries entries = SortedEntries(&rnd, 300);
  for (int interval : {1, 2, 16, 40}) {
    same_seeks(*BuildBlock(entries, interval), entries);
  }
  // 300 entries at interval 1: more restart points than are loaded ahead.
  static_assert(kPrefetchedRestarts < 300);
  const Entries few(entries.begin(), entries.begin() + 40);
  const std::string good = BlockBytes(few, 4);
  int damaged = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x80);
    auto block = Block::Create(Contents(bad), 0, "f");
    if (!block.ok()) continue;
    ++damaged;
    same_seeks(**block, few);
  }
  EXPECT_GT(damaged, 0);
}

TEST(BlockTest, DamagedEntryReportsDataLossAndStaysInvalid) {
  BlockBuilder builder(16);
  builder.Add("apple", "1");
  builder.Add("banana", "2");
  std::string bytes(builder.Finish());
  // The second entry's non-shared length (3rd byte of it) made huge.
  const size_t second = 3 + 5 + 1;  // header + "apple" + "1"
  bytes[second + 1] = static_cast<char>(0x7f);
  auto block = Block::Create(Contents(bytes), 4096, "x.sst");
  ASSERT_TRUE(block.ok());
  const std::string file = "x.sst";
  auto it = (*block)->NewIterator(BytewiseComparator(), &file);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "apple");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsDataLoss(it->status()));
  EXPECT_NE(it->status().message().find("x.sst"), std::string::npos);
  EXPECT_NE(it->status().message().find("4096"), std::string::npos);
  it->SeekToFirst();  // sticky
  EXPECT_FALSE(it->Valid());
}

TEST(BlockRefTest, OwnedBorrowedAndMoved) {
  auto block = BuildBlock({{"k", "v"}}, 16);
  const Block* raw = block.get();
  BlockRef owned = BlockRef::Owned(std::move(block));
  EXPECT_EQ(owned.get(), raw);
  BlockRef moved = std::move(owned);
  EXPECT_EQ(moved.get(), raw);
  EXPECT_EQ(BlockRef::Borrowed(raw).get(), raw);
  auto it = raw->NewIterator(BytewiseComparator(), nullptr);
  it->Pin(std::move(moved));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "v");
}

}  // namespace
}  // namespace sift
