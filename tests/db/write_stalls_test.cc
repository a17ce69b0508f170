#include "db/write_stalls.h"

#include <string>

#include "gtest/gtest.h"

namespace sift {
namespace {

TEST(WriteStallsTest, CountsTotalsAndKeepsTheLongestPerCause) {
  WriteStalls stalls;
  stalls.Add(WriteStalls::kMemTableFlush, 300);
  stalls.Add(WriteStalls::kMemTableFlush, 5000);
  stalls.Add(WriteStalls::kMemTableFlush, 200);
  stalls.Add(WriteStalls::kWalSwitch, 70);

  EXPECT_EQ(stalls.count(WriteStalls::kMemTableFlush), 3u);
  EXPECT_EQ(stalls.micros(WriteStalls::kMemTableFlush), 5500u);
  EXPECT_EQ(stalls.longest_micros(WriteStalls::kMemTableFlush), 5000u);
  EXPECT_EQ(stalls.count(WriteStalls::kWalSwitch), 1u);
  EXPECT_EQ(stalls.longest_micros(WriteStalls::kWalSwitch), 70u);
  EXPECT_EQ(stalls.count(WriteStalls::kLevel0Stop), 0u);
  EXPECT_EQ(stalls.longest_micros(WriteStalls::kLevel0Slowdown), 0u);

  EXPECT_EQ(stalls.ToString(),
            "level0-slowdown: 0 stalls, 0 us, longest 0 us\n"
            "memtable-flush: 3 stalls, 5500 us, longest 5000 us\n"
            "level0-stop: 0 stalls, 0 us, longest 0 us\n"
            "wal-switch: 1 stalls, 70 us, longest 70 us\n");
}

// A write that waited for one cause through several wake-ups stalled once.
TEST(WriteStallsTest, OneWritesWaitsCountOnceEachCause) {
  WriteStalls stalls;
  WriteStalls::Waits waits;
  waits.Add(WriteStalls::kLevel0Stop, 400);
  waits.Add(WriteStalls::kLevel0Stop, 600);
  waits.Add(WriteStalls::kWalSwitch, 0);
  stalls.Add(waits);
  stalls.Add(WriteStalls::Waits());  // a write that did not wait

  EXPECT_EQ(stalls.count(WriteStalls::kLevel0Stop), 1u);
  EXPECT_EQ(stalls.micros(WriteStalls::kLevel0Stop), 1000u);
  EXPECT_EQ(stalls.longest_micros(WriteStalls::kLevel0Stop), 1000u);
  EXPECT_EQ(stalls.count(WriteStalls::kWalSwitch), 1u);
  EXPECT_EQ(stalls.count(WriteStalls::kMemTableFlush), 0u);
  EXPECT_EQ(stalls.count(WriteStalls::kLevel0Slowdown), 0u);
}

}  // namespace
}  // namespace sift
