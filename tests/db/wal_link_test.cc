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

TEST(WalLinkTest, OnlyALogsFirstRecordDecodes) {
  std::string record;
  WalLink(7, 3).EncodeTo(&record);
  WalLink link;
  ASSERT_TRUE(link.DecodeAt(record, 0).ok());
  EXPECT_EQ(link.previous_log(), 7u);
  EXPECT_TRUE(absl::IsDataLoss(link.DecodeAt(record, 1)));
  EXPECT_TRUE(absl::IsDataLoss(link.DecodeAt(record, 32768)));
}

TEST(WalLinkTest, CheckAgainstThePreviousLog) {
  using Check = WalLink::Check;
  const WalLink link(7, 3);
  // Read back whole, or with more records (written after the switch was
  // recorded): satisfied.
  EXPECT_EQ(link.CheckAgainst(WalLink::ReadBack{7, 3}, 0), Check::kSatisfied);
  EXPECT_EQ(link.CheckAgainst(WalLink::ReadBack{7, 4}, 0), Check::kSatisfied);
  // Its tail lost.
  EXPECT_EQ(link.CheckAgainst(WalLink::ReadBack{7, 2}, 0),
            Check::kPredecessorShort);
  EXPECT_EQ(link.CheckAgainst(WalLink::ReadBack{7, 2}, 7),
            Check::kPredecessorShort);
  // Missing: nothing read before, or another log.
  EXPECT_EQ(link.CheckAgainst(std::nullopt, 0), Check::kPredecessorMissing);
  EXPECT_EQ(link.CheckAgainst(WalLink::ReadBack{6, 9}, 7),
            Check::kPredecessorMissing);
  // A predecessor below the MANIFEST's log number is in tables.
  EXPECT_EQ(link.CheckAgainst(std::nullopt, 8), Check::kSatisfied);
  EXPECT_EQ(link.CheckAgainst(WalLink::ReadBack{6, 0}, 8), Check::kSatisfied);
}

}  // namespace
}  // namespace sift
