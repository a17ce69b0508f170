#include "db/skiplist.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "util/arena.h"
#include "util/random.h"

namespace sift {
namespace {

using Key = uint64_t;

struct KeyComparator {
  int operator()(const Key& a, const Key& b) const {
    if (a < b) return -1;
    if (a > b) return 1;
    return 0;
  }
};

using IntList = SkipList<Key, KeyComparator, Arena>;

bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }

TEST(SkipListTest, Empty) {
  Arena arena;
  IntList list(KeyComparator(), &arena);
  EXPECT_FALSE(list.Contains(10));

  IntList::Iterator iter(&list);
  EXPECT_FALSE(iter.Valid());
  iter.SeekToFirst();
  EXPECT_FALSE(iter.Valid());
  iter.Seek(100);
  EXPECT_FALSE(iter.Valid());
  iter.SeekToLast();
  EXPECT_FALSE(iter.Valid());
}

TEST(SkipListTest, InsertAndLookupMatchesSet) {
  constexpr int kN = 2000;
  constexpr Key kRange = 5000;
  Random rnd(301);
  std::set<Key> model;
  Arena arena;
  IntList list(KeyComparator(), &arena);
  for (int i = 0; i < kN; ++i) {
    const Key key = rnd.Uniform(kRange);
    if (model.insert(key).second) list.Insert(key);
  }

  for (Key k = 0; k < kRange; ++k) {
    EXPECT_EQ(list.Contains(k), model.count(k) == 1) << k;
  }

  // Forward iteration yields exactly the set, in order.
  {
    IntList::Iterator iter(&list);
    iter.SeekToFirst();
    for (Key expected : model) {
      ASSERT_TRUE(iter.Valid());
      EXPECT_EQ(iter.key(), expected);
      iter.Next();
    }
    EXPECT_FALSE(iter.Valid());
  }

  // Backward iteration from the end.
  {
    IntList::Iterator iter(&list);
    iter.SeekToLast();
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
      ASSERT_TRUE(iter.Valid());
      EXPECT_EQ(iter.key(), *it);
      iter.Prev();
    }
    EXPECT_FALSE(iter.Valid());
  }

  // Seek lands on the first key >= target.
  for (Key target = 0; target < kRange + 10; target += 7) {
    IntList::Iterator iter(&list);
    iter.Seek(target);
    auto it = model.lower_bound(target);
    if (it == model.end()) {
      EXPECT_FALSE(iter.Valid());
    } else {
      ASSERT_TRUE(iter.Valid());
      EXPECT_EQ(iter.key(), *it);
    }
  }
}

TEST(SkipListTest, MemoryComesFromTheArena) {
  Arena arena;
  IntList list(KeyComparator(), &arena);
  const size_t before = arena.MemoryUsage();
  for (Key k = 0; k < 10000; ++k) list.Insert(k);
  // Each node holds at least its key and one link.
  EXPECT_GE(arena.MemoryUsage() - before, 10000 * 2 * sizeof(void*));
}

// One writer inserts a known sequence of keys while readers run. A reader
// first notes how many inserts had completed, then scans the list: it must be
// strictly sorted and must contain every key inserted before the scan began.
class SkipListConcurrencyTest : public testing::Test {
 protected:
  void Reader(const std::vector<Key>& order, const std::atomic<size_t>& done,
              const std::atomic<bool>& finished, const IntList& list,
              std::atomic<int>* failures, std::atomic<int>* scans) {
    Random rnd(reinterpret_cast<uintptr_t>(&rnd));
    while (true) {
      const bool last_round = finished.load(std::memory_order_acquire);
      const size_t n = done.load(std::memory_order_acquire);
      std::vector<Key> known(order.begin(), order.begin() + n);
      std::sort(known.begin(), known.end());

      // Point lookups of a few known keys.
      for (int i = 0; i < 20 && n > 0; ++i) {
        if (!list.Contains(order[rnd.Uniform(n)])) failures->fetch_add(1);
      }

      IntList::Iterator iter(&list);
      iter.SeekToFirst();
      size_t next_known = 0;
      bool have_prev = false;
      Key prev = 0;
      while (iter.Valid()) {
        const Key k = iter.key();
        if (have_prev && !(prev < k)) failures->fetch_add(1);
        if (next_known < known.size() && known[next_known] == k) ++next_known;
        prev = k;
        have_prev = true;
        iter.Next();
      }
      if (next_known != known.size()) failures->fetch_add(1);
      scans->fetch_add(1);
      if (last_round) return;
    }
  }
};

TEST_F(SkipListConcurrencyTest, WriterAndTwoReaders) {
  const size_t kKeys = Sanitized() ? 5000 : 50000;
  std::vector<Key> order(kKeys);
  Random rnd(42);
  std::set<Key> used;
  for (size_t i = 0; i < kKeys; ++i) {
    Key k;
    do {
      k = rnd.Next64();
    } while (!used.insert(k).second);
    order[i] = k;
  }

  Arena arena;
  IntList list(KeyComparator(), &arena);
  std::atomic<size_t> done{0};
  std::atomic<bool> finished{false};
  std::atomic<int> failures{0};
  std::atomic<int> scans{0};

  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back(
        [&] { Reader(order, done, finished, list, &failures, &scans); });
  }
  for (size_t i = 0; i < kKeys; ++i) {
    list.Insert(order[i]);
    done.store(i + 1, std::memory_order_release);
    if (i % 1024 == 0) std::this_thread::yield();
  }
  finished.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(scans.load(), 2);
  // After the writer is done every key is visible.
  for (Key k : order) ASSERT_TRUE(list.Contains(k));
}

}  // namespace
}  // namespace sift
