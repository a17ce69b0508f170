// LevelBounds: the integer windows give the answers of the string compares
// they replace (FindFile, and the range tests against smallest and largest),
// for keys that share long prefixes, differ only past the window, end inside
// it, hold zero bytes, or lie outside the level.

#include "db/level_bounds.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "db/dbformat.h"
#include "db/version.h"
#include "gtest/gtest.h"
#include "tests/testutil/testutil.h"
#include "util/comparator.h"
#include "util/random.h"

namespace sift {
namespace {

std::shared_ptr<const FileMetaData> MakeFile(std::string_view smallest,
                                             SequenceNumber smallest_seq,
                                             std::string_view largest,
                                             SequenceNumber largest_seq) {
  auto f = std::make_shared<FileMetaData>();
  f->smallest = InternalKey(smallest, smallest_seq, kTypeValue);
  f->largest = InternalKey(largest, largest_seq, kTypeValue);
  return f;
}

// Keys drawn so that windows often tie: a shared stem, then a few bytes from
// a small alphabet that includes the zero byte, sometimes past 8 bytes.
std::string RandomKey(Random* rnd, const std::string& stem) {
  static constexpr char kAlphabet[] = {'\0', '\x01', 'a', 'b', '\xff'};
  std::string key = stem.substr(0, rnd->Uniform(stem.size() + 1));
  const size_t tail = rnd->Uniform(14);
  for (size_t i = 0; i < tail; ++i) {
    key.push_back(kAlphabet[rnd->Uniform(sizeof(kAlphabet))]);
  }
  return key;
}

// The first file whose largest key is at or after `internal_key`, by a scan:
// the oracle for every search below, sharing no code with them.
size_t LinearFindFile(const InternalKeyComparator& icmp, const FileList& files,
                      std::string_view internal_key) {
  size_t i = 0;
  while (i < files.size() &&
         icmp.Compare(files[i]->largest.Encode(), internal_key) < 0) {
    ++i;
  }
  return i;
}

class LevelBoundsTest : public testing::Test {
 protected:
  // A level of two files whose boundaries all start with "user/0000".
  static FileList UserLevel() {
    return {MakeFile("user/00001", 9, "user/00003", 8),
            MakeFile("user/00005", 7, "user/00009", 6)};
  }

  const InternalKeyComparator icmp_{BytewiseComparator()};
};

TEST_F(LevelBoundsTest, SortedLevelMatchesStringSearch) {
  Random rnd(301);
  for (int round = 0; round < 300; ++round) {
    // A sorted, disjoint level, as compaction leaves it: a sorted run of
    // distinct keys cut into files; a file may start with the user key the
    // previous one ended with (older sequence), as compaction outputs can.
    const std::string stem = rnd.OneIn(2) ? "prefix/shared/" : "";
    std::set<std::string> distinct;
    const size_t want = 2 + rnd.Uniform(60);
    while (distinct.size() < want) distinct.insert(RandomKey(&rnd, stem));
    const std::vector<std::string> keys(distinct.begin(), distinct.end());
    FileList files;
    SequenceNumber seq = 1000;
    for (size_t i = 0; i + 1 < keys.size();) {
      const size_t last = std::min(keys.size() - 1, i + rnd.Uniform(3));
      const SequenceNumber hi = seq--;
      const SequenceNumber lo = seq--;
      files.push_back(MakeFile(keys[i], hi, keys[last], lo));
      // Next file: the same user key at an older sequence, or the next key.
      i = rnd.OneIn(4) ? last : last + 1;
      if (i == keys.size() - 1) break;
    }
    if (files.empty()) continue;
    LevelBounds bounds;
    bounds.Build(icmp_, files);
    ASSERT_TRUE(bounds.usable());

    for (int probe = 0; probe < 200; ++probe) {
      const std::string user_key =
          rnd.OneIn(3) ? keys[rnd.Uniform(keys.size())] : RandomKey(&rnd, stem);
      const SequenceNumber sequence = rnd.Uniform(1200);
      const InternalKey target(user_key, sequence, kValueTypeForSeek);
      const LevelBounds::Position position = bounds.Locate(user_key);
      const size_t expected = LinearFindFile(icmp_, files, target.Encode());
      ASSERT_EQ(FindFile(icmp_, files, target.Encode()), expected);
      ASSERT_EQ(bounds.FindFile(icmp_, files, target.Encode(), position),
                expected)
          << "round " << round << " key size " << user_key.size();
      // From any file known to end before the key, the same answer.
      const size_t from = rnd.Uniform(expected + 1);
      ASSERT_EQ(bounds.FindFile(icmp_, files, target.Encode(), position, from),
                expected);
      for (size_t i = 0; i < files.size(); ++i) {
        ASSERT_EQ(bounds.AtOrAfterSmallest(icmp_, files, i, user_key, position),
                  CompareBytes(user_key, files[i]->smallest.user_key()) >= 0);
        ASSERT_EQ(bounds.AtOrBeforeLargest(icmp_, files, i, user_key, position),
                  CompareBytes(user_key, files[i]->largest.user_key()) <= 0);
      }
    }
  }
}

TEST_F(LevelBoundsTest, OverlappingFilesRangeTests) {
  // Level 0: ranges overlap and are in no order; only the range tests apply.
  Random rnd(17);
  for (int round = 0; round < 100; ++round) {
    const std::string stem = "k";
    FileList files;
    for (int i = 0; i < 6; ++i) {
      std::string a = RandomKey(&rnd, stem);
      std::string b = RandomKey(&rnd, stem);
      if (a > b) std::swap(a, b);
      files.push_back(MakeFile(a, 10, b, 5));
    }
    LevelBounds bounds;
    bounds.Build(icmp_, files);
    ASSERT_TRUE(bounds.usable());
    for (int probe = 0; probe < 200; ++probe) {
      const std::string user_key = RandomKey(&rnd, stem + "\x01");
      const LevelBounds::Position position = bounds.Locate(user_key);
      for (size_t i = 0; i < files.size(); ++i) {
        ASSERT_EQ(bounds.AtOrAfterSmallest(icmp_, files, i, user_key, position),
                  CompareBytes(user_key, files[i]->smallest.user_key()) >= 0);
        ASSERT_EQ(bounds.AtOrBeforeLargest(icmp_, files, i, user_key, position),
                  CompareBytes(user_key, files[i]->largest.user_key()) <= 0);
      }
    }
  }
}

TEST_F(LevelBoundsTest, KeysOutsideTheCommonPrefix) {
  // Every key of the level starts with "user/0000"; keys that do not sort
  // before or after the whole level.
  const FileList files = UserLevel();
  LevelBounds bounds;
  bounds.Build(icmp_, files);
  ASSERT_TRUE(bounds.usable());
  for (const std::string_view key :
       {"", "u", "user/", "user/000", "user/0000", "user/00000", "user/00004",
        "user/00009\x01", "user/0001", "user/1", "v", "\xff"}) {
    const InternalKey target(key, 100, kValueTypeForSeek);
    const LevelBounds::Position position = bounds.Locate(key);
    EXPECT_EQ(bounds.FindFile(icmp_, files, target.Encode(), position),
              LinearFindFile(icmp_, files, target.Encode()))
        << key;
    for (size_t i = 0; i < files.size(); ++i) {
      EXPECT_EQ(bounds.AtOrAfterSmallest(icmp_, files, i, key, position),
                CompareBytes(key, files[i]->smallest.user_key()) >= 0)
          << key;
      EXPECT_EQ(bounds.AtOrBeforeLargest(icmp_, files, i, key, position),
                CompareBytes(key, files[i]->largest.user_key()) <= 0)
          << key;
    }
  }
}

TEST_F(LevelBoundsTest, InsideAllCoversTheRunOfKeysWithThePrefix) {
  const FileList files = UserLevel();  // common prefix "user/0000"
  LevelBounds bounds;
  bounds.Build(icmp_, files);
  ASSERT_TRUE(bounds.usable());
  const std::vector<std::string_view> keys = {
      "",           "user/",      "user/000",       "user/0000", "user/00000",
      "user/00004", "user/00009", "user/00009\x01", "user/0001", "v"};
  ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  for (size_t a = 0; a < keys.size(); ++a) {
    for (size_t b = a; b < keys.size(); ++b) {
      bool all = true;
      for (size_t k = a; k <= b; ++k) all &= keys[k].starts_with("user/0000");
      EXPECT_EQ(bounds.InsideAll(keys[a], keys[b]), all)
          << keys[a] << " .. " << keys[b];
    }
  }
  // Where it answers yes, LocateInside places each key as Locate does.
  for (const std::string_view key : keys) {
    if (!bounds.InsideAll(key, key)) continue;
    const InternalKey target(key, 100, kValueTypeForSeek);
    const LevelBounds::Position located = bounds.Locate(key);
    const LevelBounds::Position inside = bounds.LocateInside(key);
    EXPECT_EQ(bounds.FindFile(icmp_, files, target.Encode(), inside),
              bounds.FindFile(icmp_, files, target.Encode(), located))
        << key;
    for (size_t i = 0; i < files.size(); ++i) {
      EXPECT_EQ(bounds.AtOrAfterSmallest(icmp_, files, i, key, inside),
                bounds.AtOrAfterSmallest(icmp_, files, i, key, located))
          << key;
      EXPECT_EQ(bounds.AtOrBeforeLargest(icmp_, files, i, key, inside),
                bounds.AtOrBeforeLargest(icmp_, files, i, key, located))
          << key;
    }
  }
  // Bounds that compare keys cover nothing.
  test::ReverseComparator reverse;
  const InternalKeyComparator reverse_icmp(&reverse);
  LevelBounds unusable;
  unusable.Build(reverse_icmp, files);
  EXPECT_FALSE(unusable.InsideAll("user/00004", "user/00004"));
}

TEST_F(LevelBoundsTest, UnusableForOtherComparatorsAndEmptyLevels) {
  LevelBounds bounds;
  bounds.Build(icmp_, {});
  EXPECT_FALSE(bounds.usable());

  test::ReverseComparator reverse;
  const InternalKeyComparator reverse_icmp(&reverse);
  bounds.Build(reverse_icmp, {MakeFile("b", 2, "a", 1)});
  EXPECT_FALSE(bounds.usable());

  // Rebuilt for the bytewise order, it is usable again.
  bounds.Build(icmp_, {MakeFile("a", 2, "b", 1)});
  EXPECT_TRUE(bounds.usable());
}

// Under another comparator the bounds have no windows and compare keys: the
// same answers as a scan, from any starting file, and the same range tests.
TEST_F(LevelBoundsTest, OtherComparatorComparesKeys) {
  test::ReverseComparator reverse;
  const InternalKeyComparator icmp(&reverse);
  Random rnd(99);
  for (int round = 0; round < 100; ++round) {
    std::set<std::string> distinct;
    const size_t want = 2 + rnd.Uniform(40);
    while (distinct.size() < want) distinct.insert(RandomKey(&rnd, "r/"));
    // Descending bytewise: ascending in the reverse order.
    const std::vector<std::string> keys(distinct.rbegin(), distinct.rend());
    FileList files;
    for (size_t i = 0; i < keys.size();) {
      const size_t last = std::min(keys.size() - 1, i + rnd.Uniform(3));
      files.push_back(MakeFile(keys[i], 20, keys[last], 10));
      i = last + 1;
    }
    LevelBounds bounds;
    bounds.Build(icmp, files);
    ASSERT_FALSE(bounds.usable());
    for (int probe = 0; probe < 100; ++probe) {
      const std::string user_key =
          rnd.OneIn(3) ? keys[rnd.Uniform(keys.size())] : RandomKey(&rnd, "r/");
      const InternalKey target(user_key, rnd.Uniform(30), kValueTypeForSeek);
      const LevelBounds::Position position = bounds.Locate(user_key);
      const size_t expected = LinearFindFile(icmp, files, target.Encode());
      ASSERT_EQ(bounds.FindFile(icmp, files, target.Encode(), position),
                expected);
      const size_t from = rnd.Uniform(expected + 1);
      ASSERT_EQ(bounds.FindFile(icmp, files, target.Encode(), position, from),
                expected);
      for (size_t i = 0; i < files.size(); ++i) {
        ASSERT_EQ(
            bounds.AtOrAfterSmallest(icmp, files, i, user_key, position),
            reverse.Compare(user_key, files[i]->smallest.user_key()) >= 0);
        ASSERT_EQ(bounds.AtOrBeforeLargest(icmp, files, i, user_key, position),
                  reverse.Compare(user_key, files[i]->largest.user_key()) <= 0);
      }
    }
  }
}

}  // namespace
}  // namespace sift
