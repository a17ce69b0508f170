#ifndef SIFT_FILTER_FILTER_H_
#define SIFT_FILTER_FILTER_H_

// The per-table filter (two Bloom layouts and a binary fuse filter): a builder
// that hashes each key once and emits the serialized, self-describing form
// (doc/filter_format.md), and a reader that parses it into cache-line-aligned
// memory and answers membership queries.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "filter/bloom_probe.h"
#include "sift/options.h"
#include "util/hash.h"

namespace sift {

// The hash seed written into filters by the builders below, unless given.
inline constexpr uint64_t kDefaultFilterSeed = 0x736966742d626c6dULL;

// XORed into a filter's seed for a key's second hash (AddKeySecondHash,
// FilterKeyHash's `seed_tweak`): the same key under a hash independent of its
// first. A table stores a prefix under both when its prefixes are few beside
// its keys, and a prefix query then asks both (doc/filters.md, "Prefix
// filters").
inline constexpr uint64_t kSecondHashTweak = 0x9e3779b97f4a7c15ULL;

// Facts about a filter, from its serialized header (what kvtool reports).
struct FilterInfo {
  uint8_t kind = 0;         // on-disk layout tag (see doc/filter_format.md)
  uint8_t version = 0;      // format version
  bool known = false;       // false: unknown kind/version, every query "maybe"
  uint32_t num_probes = 0;  // k (Bloom); slots read per query (fuse: 3)
  uint64_t num_bits = 0;    // m (Bloom); slots * fingerprint bits (fuse)
  uint32_t fingerprint_bits = 0;  // w (binary fuse); 0 for the Bloom layouts
  uint64_t num_keys = 0;          // n, distinct keys added
  uint64_t seed = 0;              // hash seed
  // Modular Bloom (kind 4): units on disk and units in memory (queries
  // consult the resident ones); 0 for the other kinds.
  uint32_t num_units = 0;
  uint32_t resident_units = 0;
  double bits_per_key() const {
    return num_keys == 0 ? 0.0 : static_cast<double>(num_bits) / num_keys;
  }
};

// Builds one filter.
//
// Thread safety: not safe for concurrent use.
class FilterBuilder {
 public:
  virtual ~FilterBuilder() = default;

  // A builder for `kind` with `bits_per_key` bits per distinct key
  // (fractional allowed). REQUIRES: bits_per_key > 0. kBinaryFuse maps the
  // budget to a fingerprint width when the number of distinct keys is known,
  // FingerprintBitsFor in filter/fuse_math.h (a million keys at 10 bits/key:
  // 8.85 bits a fingerprint, so 9 bits with probability 0.85, else 8).
  static std::unique_ptr<FilterBuilder> Make(FilterKind kind,
                                             double bits_per_key);
  // A builder sized for `expected_keys` keys at false-positive rate
  // `target_fpr`: m = -n ln p / (ln 2)^2. REQUIRES: 0 < target_fpr < 1.
  // The blocked layout gets the slightly larger m that reaches target_fpr
  // with its own k (BitsPerKeyForFpr in filter/bloom_math.h). If more than
  // expected_keys distinct keys are added, m grows with them, so the target
  // still holds; if fewer, the filter keeps the expected size. kBinaryFuse
  // takes the narrowest fingerprint reaching target_fpr and sizes its array
  // from the keys actually added (expected_keys is not needed).
  static std::unique_ptr<FilterBuilder> MakeForFpr(FilterKind kind,
                                                   uint64_t expected_keys,
                                                   double target_fpr);
  // As above, with a hash seed other than kDefaultFilterSeed (tests use it to
  // draw independent filters over the same keys).
  static std::unique_ptr<FilterBuilder> Make(FilterKind kind,
                                             double bits_per_key,
                                             uint64_t seed);
  static std::unique_ptr<FilterBuilder> MakeForFpr(FilterKind kind,
                                                   uint64_t expected_keys,
                                                   double target_fpr,
                                                   uint64_t seed);

  // Add a key. A key equal to the one added just before is counted once, so
  // the table builder may pass every entry's user key. (Repeats are detected
  // by comparing 64-bit hashes; two different adjacent keys with equal hashes
  // would set the same bits anyway, so at worst NumKeys is one lower.)
  // kBinaryFuse also removes repeats that are not adjacent, at Finish.
  virtual void AddKey(std::string_view key) = 0;
  // Add `key` under its second hash, Hash64(key, seed ^ kSecondHashTweak):
  // an entry of its own, independent of AddKey(key)'s, which a query reaches
  // through FilterKeyHash(key, kSecondHashTweak). Counted in NumKeys like any
  // other entry (a repeat of the entry just added is counted once).
  virtual void AddKeySecondHash(std::string_view key) = 0;
  // Distinct keys added so far.
  virtual uint64_t NumKeys() const = 0;
  // Serialize the filter over every key added and reset the builder. With
  // no keys added the filter has no bits and answers "no" to every key.
  // (kBinaryFuse: NumKeys counts adjacent repeats once; the serialized
  // num_keys counts distinct hashes, which may be fewer.)
  virtual std::string Finish() = 0;
};

// The keys of every builder kind enter as 64-bit hashes under the builder's
// seed: AddKey and AddKeySecondHash hash and hand the hash to
// Derived::AddHash(uint64_t), which keeps it unless it repeats the hash just
// added (CRTP, so the per-key call stays one virtual call).
template <typename Derived>
class HashingFilterBuilder : public FilterBuilder {
 public:
  void AddKey(std::string_view key) final {
    static_cast<Derived*>(this)->AddHash(Hash64(key, seed_));
  }
  void AddKeySecondHash(std::string_view key) final {
    static_cast<Derived*>(this)->AddHash(Hash64(key, seed_ ^ kSecondHashTweak));
  }

 protected:
  explicit HashingFilterBuilder(uint64_t seed) : seed_(seed) {}
  const uint64_t seed_;  // written into the filter's header
};

// The hash a filter query of one key starts from, Hash64(key, seed),
// computed once per seed. Every table of a database is built with the same
// seed, so a lookup that probes the filters of several tables (and a batch
// that prefetches before it probes) hashes its key once instead of twice per
// table.
//
// Holds a view of the key: it lives for one lookup, inside the call that
// owns the key. Not thread-safe (it caches). With `seed_tweak` =
// kSecondHashTweak it is the key's second hash (FilterBuilder::
// AddKeySecondHash), so every reader's query asks for that entry instead.
class FilterKeyHash {
 public:
  explicit FilterKeyHash(std::string_view key, uint64_t seed_tweak = 0)
      : key_(key), tweak_(seed_tweak) {}

  uint64_t ForSeed(uint64_t seed) {
    if (!valid_ || seed != seed_) {
      hash_ = Hash64(key_, seed ^ tweak_);
      seed_ = seed;
      valid_ = true;
    }
    return hash_;
  }

 private:
  std::string_view key_;
  uint64_t tweak_;
  uint64_t seed_ = 0;
  uint64_t hash_ = 0;
  bool valid_ = false;
};

// A parsed filter, owning its bit array.
//
// Queries are not virtual for the blocked Bloom layout (the default kind):
// a lookup probes one filter per table it meets, and a batch probes dozens in
// a row, so MayMatch and Prefetch inline its probe at the caller and reach
// the other kinds through a virtual call.
//
// Thread safety: const methods are safe for concurrent use.
class FilterReader {
 public:
  virtual ~FilterReader() = default;

  // Parse serialized filter bytes (copied; `serialized` need not outlive the
  // call). Truncated or inconsistent bytes: absl::DataLossError. An unknown
  // kind or version is not an error: the reader answers "maybe" to every key
  // and info().known is false.
  static absl::StatusOr<std::unique_ptr<FilterReader>> Parse(
      std::string_view serialized);
  // The same, keeping at most the first `max_units` units of a modular
  // filter (filter/modular_bloom.h) in memory; other kinds are whole.
  static absl::StatusOr<std::unique_ptr<FilterReader>> Parse(
      std::string_view serialized, uint32_t max_units);

  // False only if the key was certainly not added. Never a false negative.
  bool MayMatch(FilterKeyHash* key) const {
    if (blocked_.words != nullptr) {
      return BlockedMayContain(key->ForSeed(blocked_.seed), blocked_.num_probes,
                               blocked_.num_lines, blocked_.words);
    }
    return DoMayMatch(key);
  }
  bool KeyMayMatch(std::string_view key) const {
    FilterKeyHash hash(key);
    return MayMatch(&hash);
  }
  // Start loading the memory MayMatch(key) will read, without waiting for
  // it: a batch of lookups prefetches every key's line before probing any,
  // so the cache misses overlap. A hint only.
  void Prefetch(FilterKeyHash* key) const { (void)Locate(key); }

  // Where a key's probe of this filter reads, found by Locate, which also
  // prefetches it; MayMatch(located, key) then tests without hashing the
  // key or finding its line again. A batch locates its keys in every filter
  // of a round before it tests any. Valid as long as the reader.
  struct Located {
    const uint64_t* line = nullptr;  // blocked Bloom: the key's line
    uint64_t fields = 0;             // blocked Bloom: ProbeRemix of its hash
  };
  Located Locate(FilterKeyHash* key) const {
    if (blocked_.words != nullptr) {
      const uint64_t h = key->ForSeed(blocked_.seed);
      const uint64_t* line =
          blocked_.words + BlockedLine(h, blocked_.num_lines) * kLineWords;
      __builtin_prefetch(line);
      return {line, ProbeRemix(h)};
    }
    DoPrefetch(key);
    return {};
  }
  // MayMatch(key). REQUIRES: `located` is Locate(key) of this reader.
  bool MayMatch(const Located& located, FilterKeyHash* key) const {
    if (blocked_.words != nullptr) {
      return BlockedLineMayContain(located.line, located.fields,
                                   blocked_.num_probes);
    }
    return DoMayMatch(key);
  }
  void Prefetch(std::string_view key) const {
    FilterKeyHash hash(key);
    Prefetch(&hash);
  }
  virtual FilterInfo info() const = 0;
  // Bytes of memory the reader holds (bit array and object).
  virtual size_t MemoryUsage() const = 0;
  // Fraction of bits set (0 for an unknown filter); for a binary fuse filter
  // the fraction of nonzero slots.
  virtual double FillRatio() const = 0;

 protected:
  // The query of a filter that is not a blocked Bloom filter (a blocked one
  // never reaches it). Default: "maybe", the answer of a filter that cannot
  // rule anything out.
  virtual bool DoMayMatch(FilterKeyHash* key) const {
    (void)key;
    return true;
  }
  // Its prefetch. Default: nothing.
  virtual void DoPrefetch(FilterKeyHash* key) const { (void)key; }

  // A blocked Bloom reader calls this from its constructor; from then on
  // MayMatch and Prefetch are BlockedMayContain and BlockedLine over
  // `words`, which the reader owns for its whole life and which hold at
  // least one line (bloom_probe.h).
  void SetBlockedBloom(const uint64_t* words, uint64_t num_lines,
                       uint32_t num_probes, uint64_t seed) {
    blocked_ = {words, num_lines, seed, num_probes};
  }

 private:
  // words == nullptr: another kind, queried through DoMayMatch.
  struct BlockedBloom {
    const uint64_t* words = nullptr;
    uint64_t num_lines = 0;
    uint64_t seed = 0;
    uint32_t num_probes = 0;
  };
  BlockedBloom blocked_;
};

}  // namespace sift

#endif  // SIFT_FILTER_FILTER_H_
