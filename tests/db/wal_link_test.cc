// The WAL link record (db/wal_link.h): round trip, and every malformed
// encoding is a DataLossError that leaves the link unchanged.

#include "db/wal_link.h"

#include <string>

#include "db/write_batch_internal.h"
#include "gtest/gtest.h"
#include "sift/write_batch.h"

namespace sift {
namespace {

TEST(WalLinkTest, RoundTrip) {
  for (uint64_t log : {uint64_t{1}, uint64_t{300}, ~uint64_t{0}}) {
    for (uint64_t records : {uint64_t{0}, uint64_t{127}, uint64_t{1} << 40}) {
      std::string encoded;
      WalLink(log, records).EncodeTo(&encoded);
      EXPECT_TRUE(WalLink::IsLink(encoded));
      WalLink decoded;
      ASSERT_TRUE(decoded.DecodeFrom(encoded).ok());
      EXPECT_EQ(decoded.previous_log(), log);
      EXPECT_EQ(decoded.previous_records(), records);
    }
  }
}

TEST(WalLinkTest, AWriteBatchIsNeverALink) {
  WriteBatch batch;
  batch.Put("k", "v");
  WriteBatchInternal::SetSequence(&batch, (uint64_t{1} << 56) - 1);
  EXPECT_FALSE(WalLink::IsLink(WriteBatchInternal::Contents(&batch)));
  EXPECT_FALSE(WalLink::IsLink(""));
  EXPECT_FALSE(WalLink::IsLink(std::string(7, '\xff')));
}

TEST(WalLinkTest, TruncationsAndTrailingBytesAreDataLoss) {
  std::string encoded;
  WalLink(12345, 678).EncodeTo(&encoded);
  for (size_t n = 0; n < encoded.size(); ++n) {
    WalLink link(1, 2);
    const absl::Status s = link.DecodeFrom(encoded.substr(0, n));
    EXPECT_TRUE(absl::IsDataLoss(s)) << n << ": " << s;
    EXPECT_EQ(link.previous_log(), 1u);
    EXPECT_EQ(link.previous_records(), 2u);
  }
  WalLink link;
  EXPECT_TRUE(absl::IsDataLoss(link.DecodeFrom(encoded + "x")));
}

TEST(WalLinkTest, UnknownVersionsAreDataLoss) {
  std::string encoded;
  WalLink(5, 6).EncodeTo(&encoded);
  for (uint8_t version : {uint8_t{0}, uint8_t{WalLink::kFormatVersion + 1}}) {
    std::string bad = encoded;
    bad[8] = static_cast<char>(version);
    WalLink link;
    const absl::Status s = link.DecodeFrom(bad);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    if (version != 0) {
      EXPECT_NE(s.message().find("format version"), std::string::npos) << s;
    }
  }
}

}  // namespace
}  // namespace sift
