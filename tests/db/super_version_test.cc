// SuperVersionPublisher: readers see the published SuperVersion, stale
// references cached by idle threads are dropped at the next Install, and
// per-thread stats add up, also for threads that have exited.

#include "db/super_version.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "db/dbformat.h"
#include "util/comparator.h"
#include "util/mutex.h"

namespace sift {
namespace {

class SuperVersionTest : public testing::Test {
 protected:
  // A SuperVersion whose memtable tells it apart; the test keeps a weak
  // reference to see when the publisher lets go of it.
  std::shared_ptr<const SuperVersion> Make(std::weak_ptr<MemTable>* mem) {
    auto sv = std::make_shared<SuperVersion>();
    sv->mem = std::make_shared<MemTable>(icmp_);
    *mem = sv->mem;
    return sv;
  }
  void Install(std::shared_ptr<const SuperVersion> sv) {
    MutexLock lock(&mu_);
    publisher_.Install(std::move(sv));
  }

  const InternalKeyComparator icmp_{BytewiseComparator()};
  Mutex mu_;
  SuperVersionPublisher publisher_;
};

// Named for the TSan stage of the test command (*Concurrency*).
using SuperVersionConcurrencyTest = SuperVersionTest;

TEST_F(SuperVersionTest, ReadersSeeTheLatestInstall) {
  std::weak_ptr<MemTable> first, second;
  Install(Make(&first));
  {
    SuperVersionPublisher::Lease lease(&publisher_, &mu_);
    EXPECT_EQ(lease->mem, first.lock());
  }
  Install(Make(&second));
  {
    SuperVersionPublisher::Lease lease(&publisher_, &mu_);
    EXPECT_EQ(lease->mem, second.lock());
  }
  // The first is referenced by nobody now: not by the publisher, not by
  // this thread's slot.
  EXPECT_TRUE(first.expired());
}

// Named for the TSan stage of the test command (*Concurrency*).
using SuperVersionConcurrencyTest = SuperVersionTest;

TEST_F(SuperVersionConcurrencyTest, IdleThreadsDoNotKeepStaleVersionsAlive) {
  std::weak_ptr<MemTable> first, second;
  Install(Make(&first));
  std::vector<std::thread> readers;
  // Threads that read once and then stay alive, idle, until told to end.
  Mutex done_mu;
  CondVar done_cv;
  bool done = false;
  int reads = 0;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      {
        SuperVersionPublisher::Lease lease(&publisher_, &mu_);
        EXPECT_EQ(lease->mem, first.lock());
      }
      MutexLock lock(&done_mu);
      ++reads;
      done_cv.SignalAll();
      while (!done) done_cv.Wait(&done_mu);
    });
  }
  {
    MutexLock lock(&done_mu);
    while (reads < 4) done_cv.Wait(&done_mu);
  }
  Install(Make(&second));
  EXPECT_TRUE(first.expired());
  {
    MutexLock lock(&done_mu);
    done = true;
    done_cv.SignalAll();
  }
  for (std::thread& t : readers) t.join();
}

TEST_F(SuperVersionConcurrencyTest,
       StatsAddUpAcrossThreadsIncludingExitedOnes) {
  std::weak_ptr<MemTable> mem;
  Install(Make(&mem));
  constexpr int kThreads = 4;
  constexpr int kGets = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kGets; ++i) {
        SuperVersionPublisher::Lease lease(&publisher_, &mu_);
        ReadStats s;
        s.gets = 1;
        s.block_reads = 2;
        lease.AddStats(s);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  {
    SuperVersionPublisher::Lease lease(&publisher_, &mu_);
    ReadStats s;
    s.gets = 1;
    lease.AddStats(s);
  }
  const ReadStats total = publisher_.Total();
  EXPECT_EQ(total.gets, uint64_t{kThreads * kGets + 1});
  EXPECT_EQ(total.block_reads, uint64_t{2 * kThreads * kGets});
}

TEST_F(SuperVersionConcurrencyTest, InstallsAndReads) {
  std::weak_ptr<MemTable> unused;
  Install(Make(&unused));
  constexpr int kReaders = 3;
  constexpr int kReadsEach = 20000;
  std::atomic<int> readers_done{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < kReaders; ++t) {
    readers.emplace_back([&] {
      for (int i = 0; i < kReadsEach; ++i) {
        SuperVersionPublisher::Lease lease(&publisher_, &mu_);
        ASSERT_NE(lease->mem, nullptr);
        ReadStats s;
        s.gets = 1;
        lease.AddStats(s);
      }
      readers_done.fetch_add(1);
    });
  }
  // Install while the readers read, and at least 200 times.
  int installs = 0;
  while (installs < 200 || readers_done.load() < kReaders) {
    Install(Make(&unused));
    ++installs;
  }
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(publisher_.Total().gets, uint64_t{kReaders * kReadsEach});
}

}  // namespace
}  // namespace sift
