#include "util/cache.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "util/mutex.h"
#include "util/random.h"

namespace sift {
namespace {

// Values are ints encoded in the void*; deleters record what they deleted.
void* V(intptr_t v) { return reinterpret_cast<void*>(v); }
intptr_t AsInt(void* v) { return reinterpret_cast<intptr_t>(v); }

Mutex deleted_mu;
std::vector<std::pair<std::string, intptr_t>>* deleted = nullptr;

void RecordDeleter(std::string_view key, void* value) {
  MutexLock lock(&deleted_mu);
  deleted->emplace_back(std::string(key), AsInt(value));
}

class CacheTest : public testing::Test {
 protected:
  CacheTest() { deleted = &deleted_; }
  ~CacheTest() override {
    cache_.reset();
    deleted = nullptr;
  }

  void Reset(size_t capacity) { cache_ = NewLRUCache(capacity); }

  // Insert and release at once.
  void Put(const std::string& key, intptr_t value, size_t charge = 1) {
    cache_->Release(cache_->Insert(key, V(value), charge, &RecordDeleter));
  }
  // The value for key, or -1 on a miss.
  intptr_t Get(const std::string& key) {
    Cache::Handle* h = cache_->Lookup(key);
    if (h == nullptr) return -1;
    const intptr_t v = AsInt(cache_->Value(h));
    cache_->Release(h);
    return v;
  }

  // `n` distinct keys that all fall in shard 0, so that LRU order among
  // them is the order of one shard.
  static std::vector<std::string> SameShardKeys(int n) {
    std::vector<std::string> keys;
    for (int i = 0; static_cast<int>(keys.size()) < n; ++i) {
      std::string k = absl::StrCat("key", i);
      if (LRUCacheShardOf(k) == 0) keys.push_back(k);
    }
    return keys;
  }

  std::vector<std::pair<std::string, intptr_t>> Deleted() {
    MutexLock lock(&deleted_mu);
    return deleted_;
  }

  std::vector<std::pair<std::string, intptr_t>> deleted_;
  std::unique_ptr<Cache> cache_;
};

TEST_F(CacheTest, HitAndMiss) {
  Reset(1000);
  EXPECT_EQ(Get("a"), -1);
  Put("a", 1);
  EXPECT_EQ(Get("a"), 1);
  Put("b", 2);
  EXPECT_EQ(Get("a"), 1);
  EXPECT_EQ(Get("b"), 2);
  EXPECT_EQ(Get("c"), -1);
  EXPECT_TRUE(Deleted().empty());
}

TEST_F(CacheTest, ShardsAreStableAndSpread) {
  std::set<int> shards;
  for (int i = 0; i < 1000; ++i) {
    const std::string k = absl::StrCat("k", i);
    const int s = LRUCacheShardOf(k);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, kLRUCacheShards);
    ASSERT_EQ(s, LRUCacheShardOf(k));
    shards.insert(s);
  }
  EXPECT_EQ(shards.size(), static_cast<size_t>(kLRUCacheShards));
}

TEST_F(CacheTest, EvictsLeastRecentlyUsedWithinShard) {
  // Capacity 3 per shard.
  Reset(3 * kLRUCacheShards);
  const std::vector<std::string> k = SameShardKeys(5);
  Put(k[0], 0);
  Put(k[1], 1);
  Put(k[2], 2);
  EXPECT_EQ(Get(k[0]), 0);  // k[0] becomes most recent; k[1] is now oldest
  Put(k[3], 3);             // evicts k[1]
  EXPECT_EQ(Get(k[1]), -1);
  EXPECT_EQ(Get(k[0]), 0);
  EXPECT_EQ(Get(k[2]), 2);
  EXPECT_EQ(Get(k[3]), 3);
  Put(k[4], 4);  // order now k0 k2 k3 (oldest first): evicts k[0]
  EXPECT_EQ(Get(k[0]), -1);
  const auto d = Deleted();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], std::make_pair(k[1], intptr_t{1}));
  EXPECT_EQ(d[1], std::make_pair(k[0], intptr_t{0}));
}

TEST_F(CacheTest, ChargeAccounting) {
  Reset(100 * kLRUCacheShards);
  const std::vector<std::string> k = SameShardKeys(4);
  EXPECT_EQ(cache_->TotalCharge(), 0u);
  EXPECT_EQ(cache_->Capacity(), 100u * kLRUCacheShards);
  Put(k[0], 0, 30);
  Put(k[1], 1, 30);
  Put(k[2], 2, 30);
  EXPECT_EQ(cache_->TotalCharge(), 90u);
  // 90 + 50 > 100: the oldest entries go until the shard fits again.
  Put(k[3], 3, 50);
  EXPECT_EQ(Get(k[0]), -1);
  EXPECT_EQ(Get(k[1]), -1);
  EXPECT_EQ(Get(k[2]), 2);
  EXPECT_EQ(Get(k[3]), 3);
  EXPECT_EQ(cache_->TotalCharge(), 80u);
  cache_->Erase(k[2]);
  EXPECT_EQ(cache_->TotalCharge(), 50u);
  cache_->Erase("missing");  // no effect
  EXPECT_EQ(cache_->TotalCharge(), 50u);
  cache_->Prune();
  EXPECT_EQ(cache_->TotalCharge(), 0u);
  EXPECT_EQ(Deleted().size(), 4u);
}

TEST_F(CacheTest, PinnedEntriesAreNeverEvicted) {
  Reset(2 * kLRUCacheShards);
  const std::vector<std::string> k = SameShardKeys(20);
  Cache::Handle* pinned = cache_->Insert(k[0], V(100), 1, &RecordDeleter);
  for (int i = 1; i < 20; ++i) Put(k[i], i);
  // Over capacity many times, yet the pinned entry stays and is found.
  EXPECT_EQ(AsInt(cache_->Value(pinned)), 100);
  EXPECT_EQ(Get(k[0]), 100);
  // Pinned entries count in the total; only one unpinned entry fits beside.
  EXPECT_EQ(cache_->TotalCharge(), 2u);
  cache_->Prune();
  EXPECT_EQ(Get(k[0]), 100);
  EXPECT_EQ(cache_->TotalCharge(), 1u);
  for (const auto& [key, value] : Deleted()) EXPECT_NE(key, k[0]);
  cache_->Release(pinned);
  EXPECT_EQ(Get(k[0]), 100);  // still cached after release (fits)
}

TEST_F(CacheTest, LookupPinsAndReleaseMakesMostRecent) {
  Reset(2 * kLRUCacheShards);
  const std::vector<std::string> k = SameShardKeys(3);
  Put(k[0], 0);
  Put(k[1], 1);
  Cache::Handle* h = cache_->Lookup(k[0]);
  ASSERT_NE(h, nullptr);
  Put(k[2], 2);  // k[0] is pinned, so k[1] goes
  EXPECT_EQ(AsInt(cache_->Value(h)), 0);
  cache_->Release(h);
  EXPECT_EQ(Get(k[1]), -1);
  EXPECT_EQ(Get(k[0]), 0);
  EXPECT_EQ(Get(k[2]), 2);
}

TEST_F(CacheTest, EraseWhilePinnedDeletesOnLastRelease) {
  Reset(1000);
  Cache::Handle* h1 = cache_->Insert("k", V(7), 5, &RecordDeleter);
  Cache::Handle* h2 = cache_->Lookup("k");
  ASSERT_NE(h2, nullptr);
  cache_->Erase("k");
  EXPECT_EQ(Get("k"), -1);               // gone from the cache at once
  EXPECT_EQ(cache_->TotalCharge(), 0u);  // and no longer charged
  EXPECT_TRUE(Deleted().empty());        // but the value is alive
  EXPECT_EQ(AsInt(cache_->Value(h1)), 7);
  cache_->Release(h1);
  EXPECT_TRUE(Deleted().empty());
  EXPECT_EQ(AsInt(cache_->Value(h2)), 7);
  cache_->Release(h2);
  ASSERT_EQ(Deleted().size(), 1u);
  EXPECT_EQ(Deleted()[0], std::make_pair(std::string("k"), intptr_t{7}));
}

TEST_F(CacheTest, ReplaceKeepsOldValueAliveWhilePinned) {
  Reset(1000);
  Cache::Handle* old_handle = cache_->Insert("k", V(1), 10, &RecordDeleter);
  Put("k", 2, 20);
  EXPECT_EQ(Get("k"), 2);
  EXPECT_EQ(cache_->TotalCharge(), 20u);
  EXPECT_TRUE(Deleted().empty());
  EXPECT_EQ(AsInt(cache_->Value(old_handle)), 1);
  cache_->Release(old_handle);
  ASSERT_EQ(Deleted().size(), 1u);
  EXPECT_EQ(Deleted()[0].second, 1);
  // Replacing an unpinned entry deletes the old value at once.
  Put("k", 3, 20);
  ASSERT_EQ(Deleted().size(), 2u);
  EXPECT_EQ(Deleted()[1].second, 2);
  EXPECT_EQ(Get("k"), 3);
}

TEST_F(CacheTest, ZeroCapacityRetainsNothingAfterRelease) {
  Reset(0);
  Cache::Handle* h = cache_->Insert("k", V(5), 1, &RecordDeleter);
  EXPECT_EQ(AsInt(cache_->Value(h)), 5);
  EXPECT_TRUE(Deleted().empty());
  cache_->Release(h);
  EXPECT_EQ(Deleted().size(), 1u);
  EXPECT_EQ(Get("k"), -1);
  EXPECT_EQ(cache_->TotalCharge(), 0u);
  for (int i = 0; i < 100; ++i) Put(absl::StrCat("x", i), i);
  EXPECT_EQ(Deleted().size(), 101u);
  EXPECT_EQ(cache_->TotalCharge(), 0u);
}

TEST_F(CacheTest, OversizedEntryIsDroppedOnRelease) {
  Reset(10 * kLRUCacheShards);
  Cache::Handle* h = cache_->Insert("big", V(1), 1000, &RecordDeleter);
  EXPECT_EQ(Get("big"), 1);  // usable while pinned
  cache_->Release(h);
  EXPECT_EQ(Get("big"), -1);
  EXPECT_EQ(cache_->TotalCharge(), 0u);
}

TEST_F(CacheTest, AdmitsEverythingWhileThereIsRoom) {
  Reset(3 * kLRUCacheShards);
  const std::vector<std::string> k = SameShardKeys(4);
  EXPECT_TRUE(cache_->Admit(k[0]));
  Put(k[0], 0);
  EXPECT_TRUE(cache_->Admit(k[1]));
  Put(k[1], 1);
  EXPECT_TRUE(cache_->Admit(k[2]));
  Put(k[2], 2);
  // The shard is full: a key missed for the first time is refused, the
  // second time admitted.
  EXPECT_FALSE(cache_->Admit(k[3]));
  EXPECT_TRUE(cache_->Admit(k[3]));
  // Room again: everything is admitted.
  cache_->Erase(k[0]);
  cache_->Erase(k[1]);
  const std::vector<std::string> more = SameShardKeys(40);
  for (size_t i = 4; i < more.size(); ++i) {
    EXPECT_TRUE(cache_->Admit(more[i])) << i;
  }
  // Other shards are not full and admit everything.
  for (int i = 0; i < 100; ++i) {
    const std::string key = absl::StrCat("other", i);
    if (LRUCacheShardOf(key) != 0) {
      EXPECT_TRUE(cache_->Admit(key)) << key;
    }
  }
}

TEST_F(CacheTest, AFullShardForgetsRefusalsAfterAWindow) {
  Reset(3 * kLRUCacheShards);
  const std::vector<std::string> k = SameShardKeys(3 + 1 + 1000);
  for (int i = 0; i < 3; ++i) Put(k[i], i);
  const std::string& remembered = k[3];
  EXPECT_FALSE(cache_->Admit(remembered));
  // The window is 64 refusals for a shard of 3 entries: the 1,000 keys that
  // follow, each asked once, are refused all but rarely (their bits are a
  // Bloom filter's), and clear the door many times over.
  int admitted_at_once = 0;
  for (size_t i = 4; i < k.size(); ++i) admitted_at_once += cache_->Admit(k[i]);
  EXPECT_LE(admitted_at_once, 30);  // expected about 5 (0.5%)
  // `remembered`'s first refusal is forgotten: refused again, then admitted.
  EXPECT_FALSE(cache_->Admit(remembered));
  EXPECT_TRUE(cache_->Admit(remembered));
  // Admit decides; it inserts nothing.
  EXPECT_EQ(cache_->TotalCharge(), 3u);
}

TEST_F(CacheTest, DestructorDeletesEverything) {
  Reset(1000);
  for (int i = 0; i < 50; ++i) Put(absl::StrCat("k", i), i);
  cache_.reset();
  EXPECT_EQ(Deleted().size(), 50u);
}

TEST_F(CacheTest, NewIdIsUnique) {
  Reset(10);
  std::set<uint64_t> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(cache_->NewId());
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_EQ(ids.count(0), 0u);
}

TEST_F(CacheTest, KeysAreCopied) {
  Reset(1000);
  std::string key = "temporary";
  Put(key, 9);
  key.assign("overwritt");
  EXPECT_EQ(Get("temporary"), 9);
  EXPECT_EQ(Get(key), -1);
}

// Four threads insert, look up, pin across other operations, erase and take
// ids; every pinned value must stay intact and the accounting must add up.
TEST(CacheConcurrencyTest, FourThreads) {
  constexpr int kThreads = 4;
  const int ops = std::getenv("SIFT_SANITIZED") != nullptr ? 5000 : 20000;
  std::atomic<int64_t> live{0};
  struct Value {
    std::string key;
    std::atomic<int64_t>* live;
  };
  auto deleter = [](std::string_view key, void* v) {
    auto* value = static_cast<Value*>(v);
    ASSERT_EQ(key, value->key);
    value->live->fetch_sub(1);
    delete value;
  };
  std::unique_ptr<Cache> cache = NewLRUCache(200);
  std::vector<std::vector<uint64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Random r(1000 + t);
      std::vector<Cache::Handle*> pins;
      for (int i = 0; i < ops; ++i) {
        const std::string key = absl::StrCat("k", r.Uniform(500));
        const uint64_t op = r.Uniform(100);
        if (op < 40) {
          live.fetch_add(1);
          Cache::Handle* h = cache->Insert(key, new Value{key, &live},
                                           1 + r.Uniform(3), deleter);
          pins.push_back(h);
        } else if (op < 85) {
          if (Cache::Handle* h = cache->Lookup(key)) pins.push_back(h);
        } else if (op < 95) {
          cache->Erase(key);
        } else {
          ids[t].push_back(cache->NewId());
        }
        // Keep a few pins around across other threads' operations.
        while (pins.size() > 4) {
          const size_t victim = r.Uniform(pins.size());
          auto* v = static_cast<Value*>(cache->Value(pins[victim]));
          ASSERT_EQ(v->key.substr(0, 1), "k");
          cache->Release(pins[victim]);
          pins.erase(pins.begin() + victim);
        }
      }
      for (Cache::Handle* h : pins) cache->Release(h);
    });
  }
  for (auto& th : threads) th.join();
  // Nothing pinned: every shard is back within its capacity
  // (200 / 16 rounded up = 13 per shard).
  EXPECT_LE(cache->TotalCharge(), 13u * kLRUCacheShards);
  std::set<uint64_t> all_ids;
  size_t total_ids = 0;
  for (const auto& v : ids) {
    all_ids.insert(v.begin(), v.end());
    total_ids += v.size();
  }
  EXPECT_EQ(all_ids.size(), total_ids);
  cache->Prune();
  EXPECT_EQ(cache->TotalCharge(), 0u);
  EXPECT_EQ(live.load(), 0);
  cache.reset();
  EXPECT_EQ(live.load(), 0);
}

}  // namespace
}  // namespace sift
