// Damaged and foreign files: every single-byte change of a small table, every
// truncation, and files that are not tables at all. The table must report
// absl::DataLossError naming the file or return the right data; never wrong
// data, never a crash (this suite also runs under ASan).

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "table/block.h"
#include "table/format.h"
#include "table/table.h"
#include "table/table_properties.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/cache.h"
#include "util/coding.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KVVector;
using test::TableGet;

constexpr char kName[] = "dir/000123.sst";

// A table image in memory. `stable`: reads are views into the image, as
// from a memory-mapped file, so the table parses blocks in place.
class StringFile final : public RandomAccessFile {
 public:
  StringFile(std::string bytes, bool stable)
      : bytes_(std::move(bytes)), stable_(stable) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    if (offset >= bytes_.size()) {
      *result = {};
      return absl::OkStatus();
    }
    n = std::min<uint64_t>(n, bytes_.size() - offset);
    if (stable_) {
      *result = std::string_view(bytes_.data() + offset, n);
    } else {
      std::memcpy(scratch, bytes_.data() + offset, n);
      *result = std::string_view(scratch, n);
    }
    return absl::OkStatus();
  }
  bool StableReads() const override { return stable_; }

 private:
  const std::string bytes_;
  const bool stable_;
};

absl::StatusOr<std::unique_ptr<Table>> OpenBytes(const TableOptions& o,
                                                 const std::string& bytes,
                                                 bool stable = false) {
  return Table::Open(o, std::make_unique<StringFile>(bytes, stable),
                     bytes.size(), kName);
}

bool NamesFile(const absl::Status& s) {
  return s.message().find(kName) != std::string_view::npos;
}

class TableCorruptionTest : public testing::Test {
 protected:
  void SetUp() override {
    Random rnd(11);
    for (int i = 0; i < 40; ++i) {
      // Compressible values in the first half, random ones in the second,
      // so that both Snappy and raw blocks occur.
      model_.emplace_back(test::NumberKey(i * 3, 6),
                          i < 20 ? std::string(20, 'a' + i % 26)
                                 : test::RandomString(&rnd, 20));
    }
    options_.block_size = 200;
    options_.block_restart_interval = 4;
    auto env = test::NewTestEnv();
    ASSERT_TRUE(test::WriteTable(env.get(), "/t", options_, model_).ok());
    auto file = env->NewRandomAccessFile("/t");
    ASSERT_TRUE(file.ok());
    auto size = env->GetFileSize("/t");
    ASSERT_TRUE(size.ok());
    bytes_.resize(*size);
    std::string_view got;
    ASSERT_TRUE((*file)->Read(0, *size, &got, bytes_.data()).ok());
    if (got.data() != bytes_.data()) bytes_.assign(got);
    // The image must hold several data blocks of both kinds.
    auto table = OpenBytes(options_, bytes_);
    ASSERT_TRUE(table.ok()) << table.status();
    ASSERT_GE((*table)->properties().num_data_blocks, 4u);
    // ... stored both compressed and raw: walk the index by hand.
    Footer footer;
    ASSERT_TRUE(footer
                    .DecodeFrom(std::string_view(bytes_).substr(
                                    bytes_.size() - Footer::kEncodedLength),
                                kName)
                    .ok());
    auto index_contents = DecodeStoredBlock(
        std::string_view(bytes_).substr(footer.index.offset,
                                        footer.index.size + kBlockTrailerSize),
        footer.index, true, kName);
    ASSERT_TRUE(index_contents.ok());
    auto index = Block::Create(*std::move(index_contents), 0, kName);
    ASSERT_TRUE(index.ok());
    int snappy = 0, raw = 0;
    auto it = (*index)->NewIterator(BytewiseComparator(), nullptr);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      BlockHandle h;
      std::string_view v = it->value();
      ASSERT_TRUE(h.DecodeFrom(&v));
      const auto type =
          static_cast<BlockCompression>(bytes_[h.offset + h.size]);
      (type == BlockCompression::kSnappy ? snappy : raw)++;
      if (type == BlockCompression::kSnappy) snappy_blocks_.push_back(h);
    }
    ASSERT_GT(snappy, 0);
    ASSERT_GT(raw, 0);
  }

  // Read everything from a (possibly damaged) image. With `strict`, any
  // answer that is not DataLoss must be exactly right.
  void Exercise(const std::string& bytes, bool verify, bool strict,
                size_t damaged_at) {
    SCOPED_TRACE(testing::Message() << "damaged byte " << damaged_at);
    auto opened = OpenBytes(options_, bytes, stable_);
    if (!opened.ok()) {
      ASSERT_TRUE(absl::IsDataLoss(opened.status())) << opened.status();
      ASSERT_TRUE(NamesFile(opened.status())) << opened.status();
      return;
    }
    const Table& table = **opened;
    ReadOptions ro;
    ro.verify_checksums = verify;
    for (size_t i = 0; i < model_.size(); ++i) {
      for (const std::string& key : {model_[i].first, model_[i].first + "x",
                                     test::NumberKey(i * 3 + 1, 6)}) {
        absl::StatusOr<std::string> v = TableGet(table, ro, key);
        if (!v.ok() && !absl::IsNotFound(v.status())) {
          ASSERT_TRUE(absl::IsDataLoss(v.status())) << v.status();
          ASSERT_TRUE(NamesFile(v.status())) << v.status();
          continue;
        }
        if (!strict) continue;
        if (key == model_[i].first) {
          ASSERT_TRUE(v.ok()) << key << " " << v.status();
          ASSERT_EQ(*v, model_[i].second);
        } else {
          ASSERT_TRUE(absl::IsNotFound(v.status())) << key;
        }
      }
    }
    ro.fill_cache = false;
    auto it = table.NewIterator(ro);
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
      if (!strict) continue;
      ASSERT_LT(n, model_.size());
      ASSERT_EQ(it->key(), model_[n].first);
      ASSERT_EQ(it->value(), model_[n].second);
    }
    if (!it->status().ok()) {
      ASSERT_TRUE(absl::IsDataLoss(it->status())) << it->status();
    } else if (strict) {
      ASSERT_EQ(n, model_.size());
    }
    n = model_.size();
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      if (!strict) continue;
      ASSERT_GT(n, 0u);
      --n;
      ASSERT_EQ(it->key(), model_[n].first);
      ASSERT_EQ(it->value(), model_[n].second);
    }
    if (!it->status().ok()) {
      ASSERT_TRUE(absl::IsDataLoss(it->status())) << it->status();
    } else if (strict) {
      ASSERT_EQ(n, 0u);
    }
  }

  KVVector model_;
  TableOptions options_;
  std::string bytes_;
  std::vector<BlockHandle> snappy_blocks_;  // the image's compressed blocks
  bool stable_ = false;  // read the image in place (see StringFile)
};

TEST_F(TableCorruptionTest, UndamagedImageReadsBack) {
  Exercise(bytes_, true, true, bytes_.size());
}

TEST_F(TableCorruptionTest, EveryByteFlippedGivesDataLossOrTheRightData) {
  int open_failures = 0;
  for (uint8_t mask : {0x01, 0x80, 0xff}) {
    for (size_t i = 0; i < bytes_.size(); ++i) {
      std::string bad = bytes_;
      bad[i] ^= static_cast<char>(mask);
      if (!OpenBytes(options_, bad).ok()) ++open_failures;
      ASSERT_NO_FATAL_FAILURE(
          Exercise(bad, /*verify=*/true, /*strict=*/true, i));
    }
  }
  // Damage to the footer, index, properties or filter is caught at Open.
  EXPECT_GT(open_failures, 0);
}

TEST_F(TableCorruptionTest, EveryByteFlippedInPlaceGivesDataLossOrRightData) {
  stable_ = true;
  for (uint8_t mask : {0x01, 0x80, 0xff}) {
    for (size_t i = 0; i < bytes_.size(); ++i) {
      std::string bad = bytes_;
      bad[i] ^= static_cast<char>(mask);
      ASSERT_NO_FATAL_FAILURE(
          Exercise(bad, /*verify=*/true, /*strict=*/true, i));
    }
  }
}

TEST_F(TableCorruptionTest, InPlaceBlocksAreVerifiedOnceThenTrusted) {
  // A raw data block read in place is checked on its first verifying read;
  // a read that does not verify never marks it checked.
  const size_t victim = 30;
  std::string bad = bytes_;
  const size_t pos = bad.find(model_[victim].second);
  ASSERT_NE(pos, std::string::npos);
  bad[pos] ^= 0x01;
  auto table = OpenBytes(options_, bad, /*stable=*/true);
  ASSERT_TRUE(table.ok()) << table.status();
  ReadOptions trusting;
  trusting.verify_checksums = false;
  auto v = TableGet(**table, trusting, model_[victim].first);
  ASSERT_TRUE(v.ok());
  EXPECT_NE(*v, model_[victim].second);  // unchecked, as asked
  ReadOptions verify;
  EXPECT_TRUE(absl::IsDataLoss(
      TableGet(**table, verify, model_[victim].first).status()));
  EXPECT_TRUE(absl::IsDataLoss(
      TableGet(**table, verify, model_[victim].first).status()));

  // An intact block passes once and is not checked again: the count of
  // block reads grows, the answer stays right.
  auto good = OpenBytes(options_, bytes_, /*stable=*/true);
  ASSERT_TRUE(good.ok());
  for (int round = 0; round < 3; ++round) {
    auto got = TableGet(**good, verify, model_[victim].first);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, model_[victim].second);
  }
}

TEST_F(TableCorruptionTest, MappedCompressedBlocksAreVerifiedOnceThenTrusted) {
  // Damage the checksum (trailer) of the first Snappy block: its contents
  // still decode, so only the checksum can tell.
  ASSERT_FALSE(snappy_blocks_.empty());
  const size_t trailer = snappy_blocks_[0].offset + snappy_blocks_[0].size + 1;
  std::string damaged = bytes_;
  damaged[trailer] ^= 0x01;
  // The keys of that block: the ones a fresh table reports as damaged.
  std::vector<size_t> victims;
  {
    auto fresh =
        Table::Open(options_, std::make_unique<test::ImageFile>(&damaged),
                    damaged.size(), kName);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    for (size_t i = 0; i < model_.size(); ++i) {
      if (absl::IsDataLoss(
              TableGet(**fresh, ReadOptions(), model_[i].first).status())) {
        victims.push_back(i);
      }
    }
  }
  ASSERT_FALSE(victims.empty());
  const std::string& key = model_[victims[0]].first;

  // No block cache: each read decodes the block again from the map.
  std::string image = bytes_;
  auto table = Table::Open(options_, std::make_unique<test::ImageFile>(&image),
                           image.size(), kName);
  ASSERT_TRUE(table.ok()) << table.status();
  ReadOptions trusting;
  trusting.verify_checksums = false;
  // A read that does not verify marks nothing...
  ASSERT_TRUE(TableGet(**table, trusting, key).ok());
  image[trailer] ^= 0x01;
  EXPECT_TRUE(absl::IsDataLoss(TableGet(**table, ReadOptions(), key).status()));
  image[trailer] ^= 0x01;
  // ...a verifying one checks the block once; after that the open table
  // trusts it, as it trusts a raw block read in place.
  auto got = TableGet(**table, ReadOptions(), key);
  ASSERT_TRUE(got.ok()) << got.status();
  image[trailer] ^= 0x01;
  got = TableGet(**table, ReadOptions(), key);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, model_[victims[0]].second);
  // A table opened again checks again.
  auto reopened = Table::Open(
      options_, std::make_unique<test::ImageFile>(&image), image.size(), kName);
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE(
      absl::IsDataLoss(TableGet(**reopened, ReadOptions(), key).status()));
}

TEST_F(TableCorruptionTest, EveryByteFlippedWithoutVerificationNeverCrashes) {
  // Without checksums a damaged data block may yield damaged data, but the
  // decoder must stay in bounds and report what it notices as DataLoss.
  for (uint8_t mask : {0x01, 0x80, 0xff}) {
    for (size_t i = 0; i < bytes_.size(); ++i) {
      std::string bad = bytes_;
      bad[i] ^= static_cast<char>(mask);
      ASSERT_NO_FATAL_FAILURE(
          Exercise(bad, /*verify=*/false, /*strict=*/false, i));
    }
  }
}

TEST_F(TableCorruptionTest, VerifyChecksumsIsHonoured) {
  // Damage one value byte in a raw data block (its values are random)
  // without touching any structure.
  const size_t victim = 30;
  std::string bad = bytes_;
  const size_t pos = bad.find(model_[victim].second);
  ASSERT_NE(pos, std::string::npos);
  bad[pos] ^= 0x01;
  auto table = OpenBytes(options_, bad);
  ASSERT_TRUE(table.ok()) << table.status();
  ReadOptions verify;
  EXPECT_TRUE(absl::IsDataLoss(
      TableGet(**table, verify, model_[victim].first).status()));
  ReadOptions trusting;
  trusting.verify_checksums = false;
  auto v = TableGet(**table, trusting, model_[victim].first);
  ASSERT_TRUE(v.ok());
  EXPECT_NE(*v, model_[victim].second);  // the damage went unchecked, as asked

  // A block headed for the cache is checked even when the read says not to,
  // so the cache never hands an unchecked block to a verifying read.
  auto cache = NewLRUCache(1 << 20);
  TableOptions cached = options_;
  cached.block_cache = cache.get();
  auto t2 = OpenBytes(cached, bad);
  ASSERT_TRUE(t2.ok());
  EXPECT_TRUE(absl::IsDataLoss(
      TableGet(**t2, trusting, model_[victim].first).status()));
  EXPECT_TRUE(
      absl::IsDataLoss(TableGet(**t2, verify, model_[victim].first).status()));
  EXPECT_EQ(cache->TotalCharge(), 0u);
}

TEST_F(TableCorruptionTest, EveryTruncationIsRejectedNamingTheFile) {
  for (size_t len = 0; len < bytes_.size(); ++len) {
    auto table = OpenBytes(options_, bytes_.substr(0, len));
    ASSERT_FALSE(table.ok()) << len;
    ASSERT_TRUE(absl::IsDataLoss(table.status())) << table.status();
    ASSERT_TRUE(NamesFile(table.status())) << table.status();
  }
  auto table = OpenBytes(options_, bytes_.substr(0, 10));
  EXPECT_NE(table.status().message().find("truncated"), std::string::npos)
      << table.status();
}

TEST_F(TableCorruptionTest, FileSizeLargerThanTheFileIsRejected) {
  auto table =
      Table::Open(options_, std::make_unique<StringFile>(bytes_, false),
                  bytes_.size() + 100, kName);
  ASSERT_FALSE(table.ok());
  EXPECT_TRUE(absl::IsDataLoss(table.status()));
  EXPECT_TRUE(NamesFile(table.status()));
  EXPECT_NE(table.status().message().find("truncated"), std::string::npos)
      << table.status();
}

TEST_F(TableCorruptionTest, ForeignFilesAreRejectedNamingTheFile) {
  Random rnd(3);
  std::vector<std::string> foreign = {
      "",
      "hello, world\n",
      std::string(Footer::kEncodedLength, '\0'),
      std::string(4096, '\0'),
      test::RandomString(&rnd, 63),
      test::RandomString(&rnd, 64),
      test::RandomString(&rnd, 100000),
  };
  // Our magic number, but nothing else of a table.
  std::string fake = test::RandomString(&rnd, 500);
  PutFixed64(&fake, kTableMagicNumber);
  foreign.push_back(fake);
  // A real footer in front of garbage blocks.
  std::string footer_only = test::RandomString(&rnd, 300);
  Footer f;
  f.properties = {0, 100};
  f.index = {105, 190};
  f.EncodeTo(&footer_only);
  foreign.push_back(footer_only);
  for (const std::string& bytes : foreign) {
    auto table = OpenBytes(options_, bytes);
    ASSERT_FALSE(table.ok()) << bytes.size();
    EXPECT_TRUE(absl::IsDataLoss(table.status())) << table.status();
    EXPECT_TRUE(NamesFile(table.status())) << table.status();
  }
  auto text = OpenBytes(options_, std::string(200, 'x'));
  EXPECT_NE(text.status().message().find("bad table magic number"),
            std::string::npos)
      << text.status();
}

}  // namespace
}  // namespace sift
