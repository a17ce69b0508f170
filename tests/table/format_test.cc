#include "table/format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "table/compression.h"
#include "tests/testutil/testutil.h"
#include "util/coding.h"
#include "util/random.h"

namespace sift {
namespace {

TEST(BlockHandleTest, VarintRoundTrip) {
  for (uint64_t offset : {uint64_t{0}, uint64_t{1}, uint64_t{300},
                          uint64_t{1} << 40, ~uint64_t{0}}) {
    for (uint64_t size :
         {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{1} << 33}) {
      BlockHandle h{offset, size};
      std::string enc;
      h.EncodeTo(&enc);
      EXPECT_LE(enc.size(), BlockHandle::kMaxVarintEncodedLength);
      enc += "rest";
      std::string_view in = enc;
      BlockHandle d;
      ASSERT_TRUE(d.DecodeFrom(&in));
      EXPECT_EQ(d.offset, offset);
      EXPECT_EQ(d.size, size);
      EXPECT_EQ(in, "rest");
    }
  }
}

TEST(BlockHandleTest, TruncatedVarintsFail) {
  std::string enc;
  BlockHandle{1 << 20, 1 << 12}.EncodeTo(&enc);
  for (size_t len = 0; len < enc.size(); ++len) {
    std::string_view in(enc.data(), len);
    BlockHandle d;
    EXPECT_FALSE(d.DecodeFrom(&in)) << len;
  }
}

TEST(BlockHandleTest, FixedRoundTripAndEnd) {
  BlockHandle h{0x0102030405060708ULL, 0x1112131415161718ULL};
  std::string enc;
  h.EncodeFixedTo(&enc);
  ASSERT_EQ(enc.size(), 16u);
  BlockHandle d;
  d.DecodeFixedFrom(enc.data());
  EXPECT_EQ(d.offset, h.offset);
  EXPECT_EQ(d.size, h.size);
  uint64_t end;
  ASSERT_TRUE((BlockHandle{10, 20}.EndWithTrailer(&end)));
  EXPECT_EQ(end, 10 + 20 + kBlockTrailerSize);
  EXPECT_FALSE((BlockHandle{~uint64_t{0} - 3, 1}.EndWithTrailer(&end)));
  EXPECT_FALSE((BlockHandle{~uint64_t{0}, ~uint64_t{0}}.EndWithTrailer(&end)));
}

Footer SampleFooter() {
  Footer f;
  f.filter = {1000, 200};
  f.properties = {1205, 90};
  f.index = {1300, 400};
  return f;
}

TEST(FooterTest, RoundTrip) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  ASSERT_EQ(enc.size(), Footer::kEncodedLength);
  EXPECT_EQ(DecodeFixed64(enc.data() + enc.size() - 8), kTableMagicNumber);
  Footer d;
  ASSERT_TRUE(d.DecodeFrom(enc, "t.sst").ok());
  EXPECT_EQ(d.filter.offset, 1000u);
  EXPECT_EQ(d.filter.size, 200u);
  EXPECT_EQ(d.properties.offset, 1205u);
  EXPECT_EQ(d.index.size, 400u);
  EXPECT_EQ(d.format_version, kTableFormatVersion);
  EXPECT_TRUE(d.has_filter());
}

TEST(FooterTest, EveryDamagedByteIsRejectedWithTheFileName) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  for (size_t i = 0; i < enc.size(); ++i) {
    std::string bad = enc;
    bad[i] ^= 0x10;
    Footer d;
    absl::Status s = d.DecodeFrom(bad, "dir/000042.sst");
    ASSERT_TRUE(absl::IsDataLoss(s)) << i << " " << s;
    EXPECT_NE(s.message().find("dir/000042.sst"), std::string::npos) << s;
  }
  Footer d;
  EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(enc.substr(1), "f")));
  std::string bad_magic = enc;
  bad_magic[enc.size() - 1] ^= 1;
  EXPECT_NE(d.DecodeFrom(bad_magic, "f").message().find("magic"),
            std::string::npos);
}

TEST(FooterTest, UnknownVersionIsRejected) {
  Footer f = SampleFooter();
  f.format_version = kTableFormatVersion + 1;
  std::string enc;
  f.EncodeTo(&enc);
  Footer d;
  absl::Status s = d.DecodeFrom(enc, "f");
  EXPECT_TRUE(absl::IsDataLoss(s));
  EXPECT_NE(s.message().find("version"), std::string::npos);
}

TEST(CompressionTest, SnappyKeptOnlyWhenItSavesAnEighth) {
  std::string out;
  const std::string compressible(4096, 'a');
  EXPECT_EQ(CompressBlock(Compression::kSnappy, compressible, &out),
            BlockCompression::kSnappy);
  EXPECT_LT(out.size(), compressible.size() / 8);
  EXPECT_EQ(CompressBlock(Compression::kNone, compressible, &out),
            BlockCompression::kNone);
  Random rnd(1);
  std::string random;
  for (int i = 0; i < 4096; ++i)
    random.push_back(static_cast<char>(rnd.Next()));
  EXPECT_EQ(CompressBlock(Compression::kSnappy, random, &out),
            BlockCompression::kNone);
  // Half random, half zeros: saves more than 1/8.
  std::string half = random.substr(0, 2048) + std::string(2048, '\0');
  EXPECT_EQ(CompressBlock(Compression::kSnappy, half, &out),
            BlockCompression::kSnappy);
  EXPECT_EQ(CompressBlock(Compression::kSnappy, "", &out),
            BlockCompression::kNone);
}

// UncompressedLength then UncompressTo, as block decoding uses them.
absl::StatusOr<std::string> Uncompress(BlockCompression type,
                                       std::string_view data) {
  absl::StatusOr<size_t> length = UncompressedLength(type, data);
  if (!length.ok()) return length.status();
  std::string out(*length, '\0');
  absl::Status s = UncompressTo(type, data, *length, out.data());
  if (!s.ok()) return s;
  return out;
}

TEST(CompressionTest, UncompressRejectsGarbage) {
  auto bad_type = Uncompress(static_cast<BlockCompression>(9), "abc");
  EXPECT_TRUE(absl::IsDataLoss(bad_type.status()));
  // A Snappy length header claiming far more than the input could hold.
  std::string huge;
  PutVarint32(&huge, 0xffffffffu);
  huge += "xy";
  EXPECT_TRUE(
      absl::IsDataLoss(Uncompress(BlockCompression::kSnappy, huge).status()));
  std::string out;
  CompressBlock(Compression::kSnappy, std::string(1000, 'q'), &out);
  for (size_t len = 0; len < out.size(); ++len) {
    auto r = Uncompress(BlockCompression::kSnappy, out.substr(0, len));
    EXPECT_FALSE(r.ok()) << len;
    EXPECT_TRUE(r.ok() || absl::IsDataLoss(r.status())) << len;
  }
  auto r = Uncompress(BlockCompression::kSnappy, out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, std::string(1000, 'q'));
  auto raw = Uncompress(BlockCompression::kNone, "plain");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, "plain");
}

TEST(StoredBlockTest, RoundTripAndChecksum) {
  for (BlockCompression type :
       {BlockCompression::kNone, BlockCompression::kSnappy}) {
    const std::string raw = std::string(300, 'z') + "tail";
    std::string contents = raw;
    if (type == BlockCompression::kSnappy) {
      ASSERT_EQ(CompressBlock(Compression::kSnappy, raw, &contents), type);
    }
    std::string stored = "prefix";
    AppendStoredBlock(contents, type, &stored);
    const std::string_view block = std::string_view(stored).substr(6);
    BlockHandle h{6, contents.size()};
    auto decoded = DecodeStoredBlock(block, h, true, "f.sst");
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->view(), raw);
    // Any damaged byte, trailer included, fails the checksum.
    for (size_t i = 0; i < block.size(); ++i) {
      std::string bad(block);
      bad[i] ^= 0x01;
      auto r = DecodeStoredBlock(bad, h, true, "f.sst");
      ASSERT_TRUE(absl::IsDataLoss(r.status())) << i;
      EXPECT_NE(r.status().message().find("f.sst"), std::string::npos);
    }
    // Wrong size in the handle.
    EXPECT_TRUE(absl::IsDataLoss(
        DecodeStoredBlock(block, BlockHandle{6, contents.size() + 1}, true, "f")
            .status()));
  }
}

// DecodeStoredBlockInto decodes into one reused buffer: the same bytes and
// errors as DecodeStoredBlock, each block replacing the one before.
TEST(StoredBlockTest, DecodeIntoAReusedBuffer) {
  BlockBuffer buffer;
  std::vector<std::string> raws = {std::string(300, 'z') + "tail",
                                   std::string(5000, 'y') + "longer", "short"};
  const char* grown = nullptr;
  for (size_t i = 0; i < raws.size(); ++i) {
    SCOPED_TRACE(i);
    std::string contents;
    BlockCompression type =
        CompressBlock(Compression::kSnappy, raws[i], &contents);
    if (type == BlockCompression::kNone) contents = raws[i];
    std::string stored;
    AppendStoredBlock(contents, type, &stored);
    BlockHandle h{0, contents.size()};
    auto decoded = DecodeStoredBlockInto(stored, h, true, "f.sst", &buffer);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(*decoded, raws[i]);
    // The buffer grows for the longer block and is reused for the shorter.
    if (i == 1) grown = decoded->data();
    if (i == 2) {
      EXPECT_EQ(decoded->data(), grown);
    }
    std::string bad = stored;
    bad[0] ^= 0x01;
    auto r = DecodeStoredBlockInto(bad, h, true, "f.sst", &buffer);
    ASSERT_TRUE(absl::IsDataLoss(r.status()));
    EXPECT_NE(r.status().message().find("f.sst: block at offset 0"),
              std::string::npos)
        << r.status();
  }
  // Trim frees only a buffer grown past its bound.
  const size_t held = buffer.capacity();
  EXPECT_GE(held, raws[1].size());
  buffer.Trim(held);
  EXPECT_EQ(buffer.capacity(), held);
  buffer.Trim(held - 1);
  EXPECT_EQ(buffer.capacity(), 0u);
  // Damage checksums cannot see (not verified): Snappy's own checks, with
  // the block's label.
  std::string contents;
  ASSERT_EQ(
      CompressBlock(Compression::kSnappy, std::string(1000, 'q'), &contents),
      BlockCompression::kSnappy);
  contents.resize(contents.size() - 1);
  std::string stored;
  AppendStoredBlock(contents, BlockCompression::kSnappy, &stored);
  auto r = DecodeStoredBlockInto(stored, BlockHandle{7, contents.size()}, false,
                                 "g.sst", &buffer);
  ASSERT_TRUE(absl::IsDataLoss(r.status()));
  EXPECT_NE(r.status().message().find("g.sst: block at offset 7"),
            std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace sift
