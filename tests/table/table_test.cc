#include "table/table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "filter/filter.h"
#include "table/table_builder.h"
#include "table/table_properties.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/cache.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KVVector;
using test::TableGet;

KVVector SequentialEntries(int n, int value_len, Random* rnd) {
  KVVector kvs;
  kvs.reserve(n);
  for (int i = 0; i < n; ++i) {
    kvs.emplace_back(test::NumberKey(i), test::RandomString(rnd, value_len));
  }
  return kvs;
}

// Distinct random keys over [a-z0-9] (never '\0', so key + '\0' is absent).
KVVector RandomEntries(int n, int value_len, Random* rnd) {
  std::vector<std::string> keys;
  keys.reserve(n + n / 8);
  while (static_cast<int>(keys.size()) < n) {
    const int missing = n - static_cast<int>(keys.size());
    for (int i = 0; i < missing; ++i) {
      keys.push_back(
          test::RandomKey(rnd, 4 + static_cast<int>(rnd->Uniform(16))));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  KVVector kvs;
  kvs.reserve(n);
  for (std::string& k : keys) {
    kvs.emplace_back(std::move(k), test::RandomString(rnd, value_len));
  }
  return kvs;
}

// Checks every way of reading `table` against `model`.
void CheckTable(const Table& table, const KVVector& model) {
  const ReadOptions ro;
  // Full scans, both directions.
  auto it = table.NewIterator(ro);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, model.size());
    ASSERT_EQ(it->key(), model[i].first);
    ASSERT_EQ(it->value(), model[i].second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(i, model.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    --i;
    ASSERT_EQ(it->key(), model[i].first);
    ASSERT_EQ(it->value(), model[i].second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(i, 0u);

  // Every key found; the key just after each (key + '\0') absent; Seek to
  // both and step back and forth from there.
  for (size_t j = 0; j < model.size(); ++j) {
    const std::string& key = model[j].first;
    absl::StatusOr<std::string> v = TableGet(table, ro, key);
    ASSERT_TRUE(v.ok()) << key << ": " << v.status();
    ASSERT_EQ(*v, model[j].second);
    const std::string after = key + std::string(1, '\0');
    ASSERT_TRUE(absl::IsNotFound(TableGet(table, ro, after).status())) << key;

    it->Seek(key);
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(it->key(), key);
    it->Seek(after);
    if (j + 1 < model.size()) {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), model[j + 1].first);
      it->Prev();
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), key);
      it->Next();
      ASSERT_EQ(it->key(), model[j + 1].first);
    } else {
      ASSERT_FALSE(it->Valid());
    }
  }
  // Before the first key and after the last.
  ASSERT_TRUE(absl::IsNotFound(TableGet(table, ro, "").status()) ||
              (!model.empty() && model[0].first.empty()));
  ASSERT_TRUE(absl::IsNotFound(TableGet(table, ro, "\xff\xff").status()));
  it->Seek("");
  ASSERT_EQ(it->Valid(), !model.empty());
  it->Seek("\xff\xff");
  ASSERT_FALSE(it->Valid());
  ASSERT_TRUE(it->status().ok());
}

struct Config {
  Compression compression;
  double bits_per_key;
  FilterKind kind;
  bool sequential;
  bool cache;
};

std::string ConfigName(const testing::TestParamInfo<Config>& info) {
  const Config& c = info.param;
  std::string name = c.compression == Compression::kSnappy ? "Snappy" : "Raw";
  if (c.bits_per_key == 0) {
    name += "NoFilter";
  } else {
    name += c.kind == FilterKind::kStandardBloom ? "Standard" : "Blocked";
  }
  name += c.sequential ? "Sequential" : "Random";
  name += c.cache ? "Cached" : "Uncached";
  return name;
}

class TableRoundTripTest : public testing::TestWithParam<Config> {
 protected:
  TableRoundTripTest() : env_(test::NewTestEnv()) {}

  TableOptions Options() {
    const Config& c = GetParam();
    TableOptions o;
    o.compression = c.compression;
    o.filter_bits_per_key = c.bits_per_key;
    o.filter_kind = c.kind;
    if (c.cache) {
      cache_ = NewLRUCache(1 << 20);
      o.block_cache = cache_.get();
    }
    return o;
  }

  void RoundTrip(const KVVector& model, TableOptions options) {
    auto size = test::WriteTable(env_.get(), "/t.sst", options, model);
    ASSERT_TRUE(size.ok()) << size.status();
    auto table = test::OpenTable(env_.get(), "/t.sst", options);
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ((*table)->properties().num_entries, model.size());
    CheckTable(**table, model);
  }

  std::unique_ptr<Env> env_;
  std::unique_ptr<Cache> cache_;
};

TEST_P(TableRoundTripTest, SmallValuesManySizes) {
  Random rnd(17);
  for (int n : {0, 1, 2, 10, 1000, 20000}) {
    SCOPED_TRACE(n);
    const KVVector model = GetParam().sequential
                               ? SequentialEntries(n, 10, &rnd)
                               : RandomEntries(n, 10, &rnd);
    RoundTrip(model, Options());
  }
}

TEST_P(TableRoundTripTest, TinyBlocksAndRestartIntervals) {
  Random rnd(23);
  const KVVector model = GetParam().sequential
                             ? SequentialEntries(3000, 5, &rnd)
                             : RandomEntries(3000, 5, &rnd);
  for (int interval : {1, 3, 16}) {
    for (size_t block_size : {size_t{1}, size_t{100}, size_t{64 << 10}}) {
      SCOPED_TRACE(testing::Message() << interval << " " << block_size);
      TableOptions o = Options();
      o.block_restart_interval = interval;
      o.block_size = block_size;
      RoundTrip(model, o);
    }
  }
}

// Index searches compare in memory the words of the index keys (their
// eight bytes after the prefix all of them share) before any key: keys here
// come in long runs of one word, are shorter than a word, or are prefixes of
// each other, so that words tie and pad; with one entry per block every key
// is also an index key. Then the same keys behind a prefix they all share
// (as zero-padded numbers do), which CheckTable's seeks to "" and past
// "\xff\xff" fall before and after, and a last key outside that prefix.
TEST_P(TableRoundTripTest, KeysSharingTheirFirstEightBytes) {
  Random rnd(31);
  const char alphabet[] = {'\x01', 'a', 'b', '\xfe'};  // all before \xff\xff
  auto random_bytes = [&](size_t n) {
    std::string s(n, 'a');
    for (char& c : s) c = alphabet[rnd.Uniform(sizeof(alphabet))];
    return s;
  };
  std::vector<std::string> keys;
  for (int group = 0; group < 80; ++group) {
    const std::string prefix = random_bytes(rnd.Uniform(12));
    const int run = 1 + static_cast<int>(rnd.Uniform(40));
    for (int i = 0; i < run; ++i) {
      keys.push_back(prefix + random_bytes(rnd.Uniform(4)));
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string shared : {"", "shared/prefix/0000"}) {
    KVVector model;
    for (const std::string& k : keys) {
      model.emplace_back(shared + k, test::RandomString(&rnd, 10));
    }
    if (!shared.empty()) {
      model.emplace_back("shared/prefix/1", test::RandomString(&rnd, 10));
    }
    for (size_t block_size : {size_t{1}, size_t{200}}) {
      SCOPED_TRACE(testing::Message() << shared << " " << block_size);
      TableOptions o = Options();
      o.block_size = block_size;
      RoundTrip(model, o);
      if (shared.empty()) continue;
      // The index keys but the last share a longer prefix than the first
      // and the last do: the last block's separator is a short successor of
      // the last key ("t"), and the last key has left the prefix. Targets
      // above the prefix land in the last block.
      auto table = test::OpenTable(env_.get(), "/t.sst", o);
      ASSERT_TRUE(table.ok()) << table.status();
      auto it = (*table)->NewIterator(ReadOptions());
      for (const char* target : {"shared/prefix/0001", "shared/prefix/05"}) {
        it->Seek(target);
        ASSERT_TRUE(it->Valid()) << target;
        EXPECT_EQ(it->key(), model.back().first);
      }
      for (const char* target : {"shared/prefix/1\x01", "s\xff", "t"}) {
        it->Seek(target);
        EXPECT_FALSE(it->Valid()) << target;
        EXPECT_TRUE(it->status().ok()) << it->status();
      }
    }
  }
}

TEST_P(TableRoundTripTest, ValuesUpTo100KiB) {
  Random rnd(29);
  const int n = test::Sanitized() ? 60 : 300;
  KVVector model = GetParam().sequential ? SequentialEntries(n, 0, &rnd)
                                         : RandomEntries(n, 0, &rnd);
  for (auto& [k, v] : model) {
    const int len = std::min<int>(100 << 10, static_cast<int>(rnd.Skewed(17)));
    // Half compressible, half not, so both block types occur.
    v = rnd.OneIn(2) ? std::string(len, 'x') : test::RandomString(&rnd, len);
  }
  model.back().second = test::RandomString(&rnd, 100 << 10);
  RoundTrip(model, Options());
}

INSTANTIATE_TEST_SUITE_P(
    Configs, TableRoundTripTest,
    testing::Values(
        Config{Compression::kSnappy, 10, FilterKind::kBlockedBloom, false,
               true},
        Config{Compression::kSnappy, 10, FilterKind::kStandardBloom, true,
               false},
        Config{Compression::kNone, 10, FilterKind::kBlockedBloom, true, true},
        Config{Compression::kNone, 10, FilterKind::kStandardBloom, false,
               false},
        Config{Compression::kSnappy, 0, FilterKind::kBlockedBloom, true, true},
        Config{Compression::kNone, 0, FilterKind::kBlockedBloom, false, false}),
    ConfigName);

TEST(TableTest, MillionEntries) {
  const int n = test::Sanitized() ? 100000 : 1000000;
  Random rnd(31);
  const KVVector model = RandomEntries(n, 8, &rnd);
  auto env = test::NewTestEnv();
  auto cache = NewLRUCache(64 << 20);
  TableOptions o;
  o.block_cache = cache.get();
  auto size = test::WriteTable(env.get(), "/big.sst", o, model);
  ASSERT_TRUE(size.ok()) << size.status();
  auto table = test::OpenTable(env.get(), "/big.sst", o);
  ASSERT_TRUE(table.ok()) << table.status();
  const TableProperties& p = (*table)->properties();
  EXPECT_EQ(p.num_entries, static_cast<uint64_t>(n));
  EXPECT_EQ(p.smallest_key, model.front().first);
  EXPECT_EQ(p.largest_key, model.back().first);
  CheckTable(**table, model);
}

TEST(TableTest, CompressionResumesAfterDataThatDidNotCompress) {
  // Random values (nothing to gain: the writer stops trying most blocks),
  // then values of one repeated byte (compression must come back).
  Random rnd(17);
  KVVector model;
  size_t random_bytes = 0, repeated_bytes = 0;
  for (int i = 0; i < 24000; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "key%08d", i);
    std::string value(100, 'x');
    if (i < 4000) {
      for (char& c : value) c = static_cast<char>(rnd.Next() & 0xff);
    }
    (i < 4000 ? random_bytes : repeated_bytes) +=
        std::string_view(key).size() + value.size();
    model.emplace_back(key, std::move(value));
  }
  auto env = test::NewTestEnv();
  TableOptions o;
  o.compression = Compression::kSnappy;
  auto size = test::WriteTable(env.get(), "/mixed.sst", o, model);
  ASSERT_TRUE(size.ok()) << size.status();
  auto table = test::OpenTable(env.get(), "/mixed.sst", o);
  ASSERT_TRUE(table.ok()) << table.status();
  // Stored raw, the repeated half alone would be repeated_bytes; after at
  // most CompressionGate::kMaxSkip blocks it is compressed again.
  EXPECT_LT((*table)->properties().data_bytes,
            random_bytes + random_bytes / 8 + repeated_bytes * 3 / 10);
  CheckTable(**table, model);
}

TEST(TableTest, PropertiesDescribeTheTable) {
  auto env = test::NewTestEnv();
  Random rnd(5);
  const KVVector model = SequentialEntries(5000, 20, &rnd);
  TableOptions o;
  o.filter_bits_per_key = 12;
  o.filter_kind = FilterKind::kStandardBloom;
  auto size = test::WriteTable(env.get(), "/p.sst", o, model);
  ASSERT_TRUE(size.ok());
  auto table = test::OpenTable(env.get(), "/p.sst", o);
  ASSERT_TRUE(table.ok()) << table.status();
  const TableProperties& p = (*table)->properties();
  EXPECT_EQ(p.num_entries, 5000u);
  EXPECT_EQ(p.raw_key_bytes, 5000u * 16);
  EXPECT_EQ(p.raw_value_bytes, 5000u * 20);
  EXPECT_GT(p.num_data_blocks, 5000u * 36 / 4096 / 2);
  EXPECT_GT(p.data_bytes, 0u);
  EXPECT_LT(p.data_bytes, *size);
  EXPECT_EQ(p.compression, static_cast<uint8_t>(Compression::kSnappy));
  EXPECT_EQ(p.filter_kind, static_cast<uint8_t>(FilterKind::kStandardBloom));
  EXPECT_EQ(p.filter_bits_per_key, 12.0);
  EXPECT_EQ(p.filter_num_keys, 5000u);
  EXPECT_EQ(p.filter_num_probes, (*table)->filter()->info().num_probes);
  EXPECT_GT(p.filter_num_probes, 0u);
  EXPECT_EQ(p.smallest_key, model.front().first);
  EXPECT_EQ(p.largest_key, model.back().first);
  EXPECT_EQ(p.comparator_name, BytewiseComparator()->Name());
  EXPECT_EQ(p.format_version, 1u);
  EXPECT_GE((*table)->FilterMemoryUsage(), 5000u * 12 / 8);
  EXPECT_GT((*table)->IndexMemoryUsage(), p.num_data_blocks * 2);
}

TEST(TableTest, NoFilterMeansNoFilterBlock) {
  auto env = test::NewTestEnv();
  TableOptions o;
  o.filter_bits_per_key = 0;
  ASSERT_TRUE(test::WriteTable(env.get(), "/n.sst", o, {{"a", "1"}}).ok());
  auto table = test::OpenTable(env.get(), "/n.sst", o);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*table)->filter(), nullptr);
  EXPECT_EQ((*table)->FilterMemoryUsage(), 0u);
  EXPECT_EQ((*table)->properties().filter_kind, 0);
}

// Keys are a "user key" followed by a 2-byte suffix, ordered by user key and
// then suffix descending, as the DB orders internal keys; the filter covers
// the user key only.
class SuffixComparator final : public Comparator {
 public:
  static std::string_view User(std::string_view k) {
    return k.substr(0, k.size() - 2);
  }
  int Compare(std::string_view a, std::string_view b) const override {
    const int c = User(a).compare(User(b));
    if (c != 0) return c;
    return b.substr(b.size() - 2).compare(a.substr(a.size() - 2));
  }
  const char* Name() const override { return "test.SuffixComparator"; }
  void FindShortestSeparator(std::string*, std::string_view) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

TEST(TableTest, FilterCoversTheFilterKeyOnly) {
  SuffixComparator cmp;
  TableOptions o;
  o.comparator = &cmp;
  o.filter_key = &SuffixComparator::User;
  o.block_size = 64;
  KVVector model;
  for (int i = 0; i < 2000; i += 2) {
    // Two versions of each user key: suffix "09" sorts before "01".
    model.emplace_back(test::NumberKey(i, 6) + "09", "new" + std::to_string(i));
    model.emplace_back(test::NumberKey(i, 6) + "01", "old" + std::to_string(i));
  }
  auto env = test::NewTestEnv();
  ASSERT_TRUE(test::WriteTable(env.get(), "/s.sst", o, model).ok());
  auto table = test::OpenTable(env.get(), "/s.sst", o);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ((*table)->properties().filter_num_keys, 1000u);
  ReadStats stats;
  for (int i = 0; i < 2000; ++i) {
    const std::string user = test::NumberKey(i, 6);
    // Seek with the largest suffix: lands on the newest version.
    std::string seen;
    ASSERT_TRUE((*table)
                    ->Get(
                        ReadOptions(), user + "99",
                        [&](std::string_view k, std::string_view v) {
                          if (SuffixComparator::User(k) != user) return false;
                          seen.assign(v);
                          return true;
                        },
                        &stats)
                    .ok());
    EXPECT_EQ(seen, i % 2 == 0 ? "new" + std::to_string(i) : "") << i;
  }
  // The filter ran on user keys: odd user keys were mostly ruled out.
  EXPECT_GT(stats.filter_negatives, 900u);
  EXPECT_EQ(stats.filter_positives, 2000 - stats.filter_negatives);
  EXPECT_EQ(stats.filter_false_positives, stats.filter_positives - 1000);
}

TEST(TableTest, ComparatorMismatchIsRejected) {
  auto env = test::NewTestEnv();
  TableOptions o;
  ASSERT_TRUE(test::WriteTable(env.get(), "/c.sst", o, {{"a01", "1"}}).ok());
  SuffixComparator cmp;
  o.comparator = &cmp;
  auto table = test::OpenTable(env.get(), "/c.sst", o);
  ASSERT_FALSE(table.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(table.status())) << table.status();
  EXPECT_NE(table.status().message().find("/c.sst"), std::string::npos);
}

TEST(TableTest, ApproximateOffsetsGrowWithTheKey) {
  auto env = test::NewTestEnv();
  TableOptions o;
  o.compression = Compression::kNone;
  Random rnd(3);
  const KVVector model = SequentialEntries(10000, 100, &rnd);
  auto size = test::WriteTable(env.get(), "/a.sst", o, model);
  ASSERT_TRUE(size.ok());
  auto table = test::OpenTable(env.get(), "/a.sst", o);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*table)->ApproximateOffsetOf(""), 0u);
  // Entries are all the same size, so offsets grow in proportion to the
  // key's rank, within a block or so.
  const double per_entry =
      static_cast<double>((*table)->properties().data_bytes) / 10000;
  uint64_t last = 0;
  for (int i = 0; i < 10000; i += 500) {
    const uint64_t off = (*table)->ApproximateOffsetOf(test::NumberKey(i));
    EXPECT_GE(off, last);
    EXPECT_NEAR(static_cast<double>(off), i * per_entry, 2 * 4096.0) << i;
    last = off;
  }
  const uint64_t end = (*table)->ApproximateOffsetOf("\xff");
  EXPECT_EQ(end, (*table)->properties().data_bytes);
  EXPECT_LT(end, *size);
}

TEST(TableTest, BuilderRejectsKeysOutOfOrder) {
  auto env = test::NewTestEnv();
  auto file = env->NewWritableFile("/o.sst");
  ASSERT_TRUE(file.ok());
  TableBuilder builder(TableOptions(), file->get());
  builder.Add("b", "1");
  EXPECT_TRUE(builder.status().ok());
  builder.Add("a", "2");
  EXPECT_TRUE(absl::IsInvalidArgument(builder.status()));
  builder.Add("c", "3");  // ignored after the error
  EXPECT_EQ(builder.NumEntries(), 1u);
  EXPECT_TRUE(absl::IsInvalidArgument(builder.Finish()));
}

TEST(TableTest, BuilderCountsAndSizes) {
  auto env = test::NewTestEnv();
  auto file = env->NewWritableFile("/z.sst");
  ASSERT_TRUE(file.ok());
  TableOptions o;
  o.block_size = 256;
  TableBuilder builder(o, file->get());
  EXPECT_EQ(builder.FileSize(), 0u);
  uint64_t last = 0;
  for (int i = 0; i < 1000; ++i) {
    builder.Add(test::NumberKey(i), std::string(30, 'v'));
    EXPECT_EQ(builder.NumEntries(), static_cast<uint64_t>(i + 1));
    EXPECT_GE(builder.FileSize(), last);
    last = builder.FileSize();
  }
  EXPECT_GT(last, 0u);
  ASSERT_TRUE(builder.Finish().ok());
  ASSERT_TRUE((*file)->Close().ok());
  auto size = env->GetFileSize("/z.sst");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(builder.FileSize(), *size);
}

TEST(TableTest, AbandonWritesNoFooter) {
  auto env = test::NewTestEnv();
  auto file = env->NewWritableFile("/ab.sst");
  ASSERT_TRUE(file.ok());
  TableOptions o;
  o.block_size = 64;
  {
    TableBuilder builder(o, file->get());
    for (int i = 0; i < 100; ++i) builder.Add(test::NumberKey(i), "v");
    builder.Abandon();
  }
  ASSERT_TRUE((*file)->Close().ok());
  auto table = test::OpenTable(env.get(), "/ab.sst", o);
  EXPECT_TRUE(absl::IsDataLoss(table.status())) << table.status();
}

}  // namespace
}  // namespace sift
