#ifndef SIFT_UTIL_CACHE_H_
#define SIFT_UTIL_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace sift {

// A map from keys to values with a capacity in "charge" units (bytes, for the
// block cache; 1 per table, for the table cache). When the total charge passes
// the capacity, the least recently used entries that no handle pins are evicted
// and their deleter runs. Serves as block cache and table cache.
//
// Thread safety: all methods are safe for concurrent use. The implementation
// is sharded by key hash so concurrent readers rarely contend.
class Cache {
 public:
  // An entry pinned by a caller. Opaque.
  struct Handle {};
  // Called once for each entry when it leaves the cache and is unpinned.
  using Deleter = void (*)(std::string_view key, void* value);

  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  // REQUIRES: no handle is still pinned. Runs the deleter of every entry.
  virtual ~Cache() = default;

  // Insert key -> value, replacing an entry with the same key (the old one is
  // deleted once unpinned). Returns a handle that pins the new entry; the
  // caller must Release it. Key bytes are copied.
  virtual Handle* Insert(std::string_view key, void* value, size_t charge,
                         Deleter deleter) = 0;
  // A pinned handle for key, or nullptr. A hit makes the entry most recent.
  virtual Handle* Lookup(std::string_view key) = 0;
  // Whether a value for `key`, which Lookup has just missed, is worth
  // inserting. A cache with room admits everything; a full one may refuse a
  // key it has not missed recently, so that values used once (a scan's
  // blocks, a random read over data many times the cache) do not evict
  // those used again. A refused key is remembered: asking again soon
  // admits it. Callers that insert regardless (the table cache) need not ask.
  virtual bool Admit(std::string_view key) = 0;
  // Unpin. REQUIRES: handle came from this cache and is not yet released.
  virtual void Release(Handle* handle) = 0;
  // REQUIRES: handle is pinned. The value lives at least until Release.
  virtual void* Value(Handle* handle) = 0;
  // Drop key's entry (deleted once no handle pins it).
  virtual void Erase(std::string_view key) = 0;
  // A new number, unique for this cache: lets clients partition the key space
  // (the block cache keys blocks by table id + offset).
  virtual uint64_t NewId() = 0;
  // Evict every unpinned entry.
  virtual void Prune() = 0;
  // Sum of the charges of all entries, pinned ones included.
  virtual size_t TotalCharge() const = 0;
  virtual size_t Capacity() const = 0;
};

// A sharded LRU cache holding up to `capacity` units of charge. Keys are
// spread over kLRUCacheShards shards by hash; each shard has its own lock, LRU
// order and capacity / kLRUCacheShards (rounded up), so eviction is LRU within
// a shard and the total retained may exceed `capacity` by up to
// kLRUCacheShards - 1. An unpinned entry is evicted as soon as its shard is
// over capacity, so with capacity 0 nothing is retained once released.
//
// Admit: a shard with room for one more entry of its average charge admits
// every key. A full shard admits a key on its second miss within a window:
// the first miss sets the key's two bits in a Bloom filter of 16 bits per
// refusal the window holds (the "door"), the second finds them set and
// admits. The door is cleared after as many refusals as the shard holds
// entries (at least 64), so a key counts as used again if it misses twice
// within about one cache's worth of other misses. A first miss finds its
// bits set by other keys, and is admitted at once, at most about 1.4% of the
// time (a full window), 0.5% on average: a scan many times the cache still
// evicts some of the entries in use, at that rate.
std::unique_ptr<Cache> NewLRUCache(size_t capacity);

inline constexpr int kLRUCacheShards = 16;
// The shard of `key` in caches from NewLRUCache (in [0, kLRUCacheShards)).
// Exposed so that tests can reason about eviction order within one shard.
int LRUCacheShardOf(std::string_view key);

}  // namespace sift

#endif  // SIFT_UTIL_CACHE_H_
