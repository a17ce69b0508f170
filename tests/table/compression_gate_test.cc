// When a table writer tries to compress a data block
// (table/compression_gate.h).

#include "table/compression_gate.h"

#include "gtest/gtest.h"

namespace sift {
namespace {

// Feeds `blocks` blocks through `gate`, each paying if `pays`; the tries.
int Feed(CompressionGate* gate, int blocks, bool pays) {
  int tries = 0;
  for (int i = 0; i < blocks; ++i) {
    if (gate->ShouldTry()) {
      ++tries;
      gate->Record(pays);
    }
  }
  return tries;
}

TEST(CompressionGateTest, DataThatCompressesIsTriedEveryBlock) {
  CompressionGate gate;
  EXPECT_EQ(Feed(&gate, 1000, true), 1000);
  EXPECT_EQ(gate.skipped(), 0u);
}

TEST(CompressionGateTest, DataThatDoesNotIsTriedRarely) {
  CompressionGate gate;
  // kMissesToSkip tries, then skips of 8, 16, 32, 64 and 128 blocks with
  // one try after each.
  const int tries = Feed(&gate, 1000, false);
  EXPECT_EQ(Feed(&gate, CompressionGate::kMissesToSkip, false), 0);
  EXPECT_LE(tries, CompressionGate::kMissesToSkip + 5 +
                       1000 / static_cast<int>(CompressionGate::kMaxSkip) + 1);
  EXPECT_GE(gate.skipped(), 1000u - static_cast<unsigned>(tries));
}

TEST(CompressionGateTest, AFewMissesInARowDoNotSkip) {
  CompressionGate gate;
  for (int round = 0; round < 100; ++round) {
    EXPECT_EQ(Feed(&gate, CompressionGate::kMissesToSkip - 1, false),
              CompressionGate::kMissesToSkip - 1);
    EXPECT_EQ(Feed(&gate, 1, true), 1);
  }
  EXPECT_EQ(gate.skipped(), 0u);
}

TEST(CompressionGateTest, DataThatStartsToCompressIsFoundWithinTheLongestSkip) {
  CompressionGate gate;
  Feed(&gate, 5000, false);
  // The next try comes within kMaxSkip blocks; from then on every block.
  int until_try = 0;
  while (until_try <= static_cast<int>(CompressionGate::kMaxSkip) &&
         !gate.ShouldTry()) {
    ++until_try;
  }
  ASSERT_LE(until_try, static_cast<int>(CompressionGate::kMaxSkip));
  gate.Record(true);
  EXPECT_EQ(Feed(&gate, 100, true), 100);
}

}  // namespace
}  // namespace sift
