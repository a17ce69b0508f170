#include "util/cache.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "util/hash.h"
#include "util/mutex.h"

namespace sift {
namespace {

constexpr int kShardBits = 4;
constexpr size_t kMinDoorWindow = 64;
static_assert(kLRUCacheShards == 1 << kShardBits);

// One cached key/value. Lifetime: an entry is deleted (and its deleter run)
// exactly when it is neither in its shard's table nor pinned by a handle.
struct Entry : Cache::Handle {
  std::string key;
  void* value;
  size_t charge;
  Cache::Deleter deleter;
  // Index of the shard holding the entry (saves rehashing on Release).
  int shard;
  // Handles given out and not yet released.
  int pins = 0;
  // In the shard's table (and counted in its usage).
  bool in_table = true;
  // Neighbours on the shard's LRU list; only entries that are in the table
  // and unpinned are on it.
  Entry* prev = nullptr;
  Entry* next = nullptr;
};

// Entries whose deleters must run once the shard lock is dropped (deleters
// may do real work, such as closing a table).
using Garbage = std::vector<Entry*>;

void Destroy(Garbage& garbage) {
  for (Entry* e : garbage) {
    e->deleter(e->key, e->value);
    delete e;
  }
}

class LRUShard {
 public:
  LRUShard() {
    lru_.prev = &lru_;
    lru_.next = &lru_;
  }
  LRUShard(const LRUShard&) = delete;
  LRUShard& operator=(const LRUShard&) = delete;

  ~LRUShard() {
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      for (auto& [key, e] : table_) {
        assert(e->pins == 0 && "cache destroyed with pinned handles");
        garbage.push_back(e);
      }
      table_.clear();
    }
    Destroy(garbage);
  }

  void SetCapacity(size_t capacity) {
    MutexLock lock(&mu_);
    capacity_ = capacity;
  }

  Cache::Handle* Insert(int shard, std::string_view key, void* value,
                        size_t charge, Cache::Deleter deleter) {
    auto* e = new Entry;
    e->shard = shard;
    e->key.assign(key.data(), key.size());
    e->value = value;
    e->charge = charge;
    e->deleter = deleter;
    e->pins = 1;
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      auto [it, inserted] = table_.try_emplace(e->key, e);
      if (!inserted) {
        // The map's key views the old entry's string: re-point it at ours.
        Entry* old = it->second;
        table_.erase(it);
        Detach(old, garbage);
        table_.emplace(e->key, e);
      }
      usage_ += charge;
      EvictToCapacity(garbage);
    }
    Destroy(garbage);
    return e;
  }

  bool Admit(uint64_t hash) {
    MutexLock lock(&mu_);
    const size_t entries = table_.size();
    if (entries == 0 || usage_ + usage_ / entries <= capacity_) return true;
    // A window spans as many refusals as the shard holds entries, and at
    // least kMinDoorWindow, so that a shard of a few large entries still
    // remembers a key between its two misses.
    const size_t window = std::max(entries, kMinDoorWindow);
    if (door_.empty() || refusals_ >= window) {
      // A new window: a power of two of at least 16 bits per refusal it may
      // hold, in 64-bit words.
      size_t words = 1;
      while (words * 64 < window * 16) words *= 2;
      door_.assign(words, 0);
      refusals_ = 0;
    }
    // Two bits per key, from hash bits below the shard's.
    const uint64_t bits = door_.size() * 64 - 1;
    const size_t a = static_cast<size_t>(hash & bits);
    const size_t b = static_cast<size_t>((hash >> 24) & bits);
    const uint64_t mask_a = uint64_t{1} << (a % 64);
    const uint64_t mask_b = uint64_t{1} << (b % 64);
    if ((door_[a / 64] & mask_a) != 0 && (door_[b / 64] & mask_b) != 0) {
      return true;
    }
    door_[a / 64] |= mask_a;
    door_[b / 64] |= mask_b;
    ++refusals_;
    return false;
  }

  Cache::Handle* Lookup(std::string_view key) {
    MutexLock lock(&mu_);
    auto it = table_.find(key);
    if (it == table_.end()) return nullptr;
    Entry* e = it->second;
    if (e->pins == 0) Unlink(e);  // pinned entries stay off the LRU list
    ++e->pins;
    return e;
  }

  void Release(Entry* e) {
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      assert(e->pins > 0);
      if (--e->pins == 0) {
        if (e->in_table) {
          AppendToLru(e);
          EvictToCapacity(garbage);
        } else {
          garbage.push_back(e);
        }
      }
    }
    Destroy(garbage);
  }

  void Erase(std::string_view key) {
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      auto it = table_.find(key);
      if (it == table_.end()) return;
      Entry* e = it->second;
      table_.erase(it);
      Detach(e, garbage);
    }
    Destroy(garbage);
  }

  void Prune() {
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      while (lru_.next != &lru_) EvictOldest(garbage);
    }
    Destroy(garbage);
  }

  size_t Usage() const {
    MutexLock lock(&mu_);
    return usage_;
  }

 private:
  using Table = absl::flat_hash_map<std::string_view, Entry*>;

  void Unlink(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = nullptr;
  }

  // Newest end of the list is lru_.prev, oldest is lru_.next.
  void AppendToLru(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e->next = &lru_;
    e->prev = lru_.prev;
    e->prev->next = e;
    lru_.prev = e;
  }

  // `e` has just been removed from table_: stop charging for it and delete
  // it now, or when its last pin is released.
  void Detach(Entry* e, Garbage& garbage) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e->in_table = false;
    usage_ -= e->charge;
    if (e->pins == 0) {
      Unlink(e);
      garbage.push_back(e);
    }
  }

  void EvictOldest(Garbage& garbage) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Entry* oldest = lru_.next;
    table_.erase(std::string_view(oldest->key));
    Detach(oldest, garbage);
  }

  void EvictToCapacity(Garbage& garbage) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (usage_ > capacity_ && lru_.next != &lru_) EvictOldest(garbage);
  }

  mutable Mutex mu_;
  size_t capacity_ ABSL_GUARDED_BY(mu_) = 0;
  // Sum of the charges of the entries in table_.
  size_t usage_ ABSL_GUARDED_BY(mu_) = 0;
  // Keys view the entries' own key strings.
  Table table_ ABSL_GUARDED_BY(mu_);
  // Dummy head of the circular LRU list of unpinned entries in table_.
  Entry lru_ ABSL_GUARDED_BY(mu_);
  // Admit's door: bits of keys refused since the window began, and how many
  // were refused. Empty until the shard is first full.
  std::vector<uint64_t> door_ ABSL_GUARDED_BY(mu_);
  size_t refusals_ ABSL_GUARDED_BY(mu_) = 0;
};

class ShardedLRUCache final : public Cache {
 public:
  explicit ShardedLRUCache(size_t capacity) : capacity_(capacity) {
    const size_t per_shard = (capacity + kLRUCacheShards - 1) / kLRUCacheShards;
    for (LRUShard& s : shards_) s.SetCapacity(per_shard);
  }

  Handle* Insert(std::string_view key, void* value, size_t charge,
                 Deleter deleter) override {
    const int shard = LRUCacheShardOf(key);
    return shards_[shard].Insert(shard, key, value, charge, deleter);
  }
  Handle* Lookup(std::string_view key) override {
    return ShardFor(key).Lookup(key);
  }
  bool Admit(std::string_view key) override {
    // The shard takes the hash's top bits; the door its low ones.
    const uint64_t hash = Hash64(key);
    return shards_[hash >> (64 - kShardBits)].Admit(hash);
  }
  void Release(Handle* handle) override {
    Entry* e = static_cast<Entry*>(handle);
    shards_[e->shard].Release(e);
  }
  void* Value(Handle* handle) override {
    return static_cast<Entry*>(handle)->value;
  }
  void Erase(std::string_view key) override { ShardFor(key).Erase(key); }
  uint64_t NewId() override {
    return next_id_.fetch_add(1, std::memory_order_relaxed);
  }
  void Prune() override {
    for (LRUShard& s : shards_) s.Prune();
  }
  size_t TotalCharge() const override {
    size_t total = 0;
    for (const LRUShard& s : shards_) total += s.Usage();
    return total;
  }
  size_t Capacity() const override { return capacity_; }

 private:
  LRUShard& ShardFor(std::string_view key) {
    return shards_[LRUCacheShardOf(key)];
  }

  const size_t capacity_;
  std::atomic<uint64_t> next_id_{1};
  LRUShard shards_[kLRUCacheShards];
};

}  // namespace

int LRUCacheShardOf(std::string_view key) {
  return static_cast<int>(Hash64(key) >> (64 - kShardBits));
}

std::unique_ptr<Cache> NewLRUCache(size_t capacity) {
  return std::make_unique<ShardedLRUCache>(capacity);
}

}  // namespace sift
