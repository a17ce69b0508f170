// FilterBuilder for the binary fuse filter. Keys are hashed as they arrive and
// only the hashes are kept (8 bytes a key); the array is sized and filled at
// Finish, when the number of distinct keys is known.
//
// Construction (Graf & Lemire): every key adds itself to its slots' counts
// (four slots a key in format version 2, three in version 1) and to their XOR
// of hashes. A slot with exactly one key left names that key (its XOR is the
// key's hash), so the key is peeled off: it is removed from its other slots,
// which may leave them with one key in turn. If every key is peeled, the
// slots are filled in reverse peel order, each key's peeled slot set to its
// fingerprint XOR its other slots (which no later-filled key changes). If
// some keys remain, the attempt failed; the next attempt remixes the hashes
// (FuseRemix) and, after every few failures, grows the array.

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "filter/fuse_math.h"
#include "filter/fuse_probe.h"
#include "util/hash.h"

namespace sift {
namespace {

// Attempts are stored in one header byte.
constexpr uint32_t kMaxAttempts = 256;
// Failures between two growths of the array.
constexpr uint32_t kAttemptsPerSize = 4;

// The keys' hashes in the order added, in blocks of 2^16. Appending never
// moves what is stored: a vector doubling its way to 8 MiB for a million keys
// would copy the hashes about once more and touch twice the memory.
class HashBlocks {
 public:
  void Add(uint64_t h) {
    if (next_ == block_end_) AddBlock();
    *next_++ = h;
  }
  uint64_t size() const {
    if (blocks_.empty()) return 0;
    return (blocks_.size() - 1) * kBlockSize +
           static_cast<uint64_t>(next_ - blocks_.back().get());
  }
  bool empty() const { return blocks_.empty(); }
  // The first and the last hash added. REQUIRES: !empty().
  uint64_t front() const { return blocks_.front()[0]; }
  uint64_t back() const { return next_[-1]; }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const uint64_t* p = blocks_[i].get();
      const uint64_t* end = i + 1 == blocks_.size() ? next_ : p + kBlockSize;
      for (; p != end; ++p) fn(*p);
    }
  }

  // Keeps one of each hash (in increasing order).
  void RemoveRepeats() {
    std::vector<uint64_t> all;
    all.reserve(size());
    ForEach([&](uint64_t h) { all.push_back(h); });
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    Clear();
    for (uint64_t h : all) Add(h);
  }

  void Clear() {
    blocks_.clear();
    next_ = block_end_ = nullptr;
  }

 private:
  static constexpr size_t kBlockSize = size_t{1} << 16;

  // Out of line, so that Add (once a key) does not save registers for it.
  [[gnu::noinline]] void AddBlock() {
    blocks_.push_back(std::make_unique_for_overwrite<uint64_t[]>(kBlockSize));
    next_ = blocks_.back().get();
    block_end_ = next_ + kBlockSize;
  }

  // Every block is full but the last, which is filled up to next_.
  std::vector<std::unique_ptr<uint64_t[]>> blocks_;
  uint64_t* next_ = nullptr;
  uint64_t* block_end_ = nullptr;
};

// A scratch array of trivial T, kept across attempts and grown only when an
// attempt needs more. The arrays are large (megabytes for a million keys) and
// each build gets them fresh from the allocator, so they are not written more
// than needed: Zeroed takes a new block from calloc, which skips the writing
// when the system hands out pages already zeroed, and Uninitialized leaves
// the block unwritten, for arrays the caller fills before reading.
template <typename T>
class ScratchArray {
 public:
  T* Zeroed(size_t n) {
    if (n > capacity_) {
      Reset(std::calloc(n, sizeof(T)), n);
    } else {
      std::memset(data_.get(), 0, n * sizeof(T));
    }
    return data_.get();
  }
  T* Uninitialized(size_t n) {
    if (n > capacity_) Reset(std::malloc(n * sizeof(T)), n);
    return data_.get();
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  void Reset(void* p, size_t n) {
    if (p == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<T*>(p));
    capacity_ = n;
  }

  std::unique_ptr<T[], Free> data_;
  size_t capacity_ = 0;
};

// Scratch space of the construction for one arity (3 or 4 slots a key),
// reused across attempts. Per slot it
// keeps one count byte and the XOR of the hashes of the keys in the slot
// (~9 bytes a slot, ~10 MiB for a million keys); per key the remixed hash and
// a byte. Every phase walks these arrays close to address order (see
// SortBySegment and Peel), so they are read a cache line at a time instead of
// missing the cache on each key.
template <uint32_t Arity>
class FusePeeler {
 public:
  // Peels `hashes` (distinct) under `layout`. On success fills `slots`
  // (layout.num_bytes() bytes plus 8 of slack, bit-packed) and returns true.
  bool Build(const HashBlocks& hashes, const FuseLayout& layout,
             std::string* slots) {
    range_ = layout.segment_count << layout.segment_length_log2;
    log2_ = layout.segment_length_log2;
    SortBySegment(hashes, layout);
    if (!CountKeys(layout.num_slots())) return false;
    if (!Peel()) return false;
    Fill(layout, slots);
    return true;
  }

  // After a failed Build: whether a slot was left holding two keys with the
  // same hash (count 2, XOR 0), i.e. a key added twice. That is how a
  // repeated key usually shows: every other key peels, and the two copies
  // are left alone in their slots. Reads a byte a slot.
  bool LeftARepeatedHash() const {
    for (uint64_t i = 0; i < num_slots_; ++i) {
      if ((count_[i] >> 2) == 2 && xor_[i] == 0) return true;
    }
    return false;
  }

 private:
  // Fills sorted_ with the remixed hashes in order of their first slot's
  // segment (a counting sort: two passes). Keys then visit the count arrays
  // in address order, a few segments at a time, instead of at random: with
  // a million keys the arrays are ~10 MiB, and random visits would miss the
  // cache on every slot of a key. The result does not depend on the order.
  // (Remixing twice is cheaper than keeping a third array of hashes.)
  void SortBySegment(const HashBlocks& hashes, const FuseLayout& layout) {
    const uint64_t segments = layout.segment_count;
    const uint32_t attempt = layout.attempt;
    bucket_start_.assign(segments + 1, 0);
    uint64_t* const bucket_start = bucket_start_.data();
    hashes.ForEach([=](uint64_t h) {
      // FastRange64(g, c * L) / L == FastRange64(g, c): the segment.
      ++bucket_start[FastRange64(FuseRemix(h, attempt), segments) + 1];
    });
    for (uint64_t i = 1; i <= segments; ++i) {
      bucket_start_[i] += bucket_start_[i - 1];
    }
    num_keys_ = hashes.size();
    sorted_ = sorted_array_.Uninitialized(num_keys_);
    uint64_t* const sorted = sorted_;
    hashes.ForEach([=](uint64_t h) {
      const uint64_t g = FuseRemix(h, attempt);
      sorted[bucket_start[FastRange64(g, segments)]++] = g;
    });
  }

  // Adds every key to its slots. count_[i] holds 4 per key in its high six
  // bits and, in its low two, the XOR of the keys' indexes of slot i among
  // their Arity (<= 4) slots: once one key is left, its index. Six bits count
  // to 63;
  // a slot reaching 64 keys would wrap and could then pass for a slot with
  // one key (whose XOR is not a key's hash), so the attempt fails instead.
  // Only repeated hashes get there (at the paper's sizes a slot holds a
  // handful of distinct keys), and the first failure removes those.
  bool CountKeys(uint64_t num_slots) {
    num_slots_ = num_slots;
    count_ = count_array_.Zeroed(num_slots);
    xor_ = xor_array_.Zeroed(num_slots);
    bool overflow = false;
    for (size_t k = 0; k < num_keys_; ++k) {
      const uint64_t g = sorted_[k];
      const FuseSlots<Arity> s = FuseSlotsOf<Arity>(g, range_, log2_);
      for (uint32_t j = 0; j < Arity; ++j) {
        const uint8_t c = static_cast<uint8_t>(count_[s.slot[j]] + 4);
        overflow |= c < 4;
        count_[s.slot[j]] = static_cast<uint8_t>(c ^ j);
        xor_[s.slot[j]] ^= g;
      }
    }
    return !overflow;
  }

  // Peels keys until no slot holds exactly one: returns whether every key
  // was. The slots are scanned in address order; peeling a key can leave
  // one key in its other slots, and those after the scan position are met by
  // the scan, so only those at or before it wait on stack_ (a few at a time).
  // A key's slots lie in consecutive segments, so the slots touched
  // stay within a few segments of the scan position, in cache.
  // The peel order reuses sorted_, which the counts no longer need: key k of
  // the order is sorted_[k], peeled from its slot peeled_index_[k].
  bool Peel() {
    peeled_index_ = peeled_index_array_.Uninitialized(num_keys_);
    num_peeled_ = 0;
    stack_size_ = 0;
    for (uint64_t scan = 0; scan < num_slots_; ++scan) {
      if ((count_[scan] >> 2) != 1) continue;
      PeelSlot(scan, scan);
      while (stack_size_ > 0) {
        const uint64_t i = stack_[--stack_size_];
        // Emptied since it was pushed?
        if ((count_[i] >> 2) == 1) PeelSlot(i, scan);
      }
    }
    return num_peeled_ == num_keys_;
  }

  // Peels the one key left in slot i; pushes those of its other slots at or
  // before `scan` that it leaves with one key. The push is a store and an
  // add rather than a branch: whether a slot is left with one key depends on
  // the data, and the branch was mispredicted often enough to cost more
  // than the extra stores.
  void PeelSlot(uint64_t i, uint64_t scan) {
    // Room for the Arity writes below; the stack rarely holds more than a
    // few slots, so this seldom grows it.
    if (stack_size_ + Arity > stack_.size()) {
      stack_.resize(2 * stack_.size() + 64);
    }
    // Each key is peeled once, so only a broken count (see CountKeys) could
    // peel more keys than there are.
    assert(num_peeled_ < num_keys_);
    const uint64_t g = xor_[i];
    const uint32_t index = count_[i] & 3;
    sorted_[num_peeled_] = g;
    peeled_index_[num_peeled_++] = static_cast<uint8_t>(index);
    const FuseSlots<Arity> s = FuseSlotsOf<Arity>(g, range_, log2_);
    for (uint32_t j = 0; j < Arity; ++j) {
      const uint64_t other = s.slot[j];
      const uint8_t c = static_cast<uint8_t>((count_[other] - 4) ^ j);
      count_[other] = c;
      xor_[other] ^= g;
      // Slot i itself drops to no key, so it is never pushed.
      stack_[stack_size_] = other;
      stack_size_ += static_cast<size_t>(other <= scan) & ((c >> 2) == 1);
    }
  }

  // Sets the slots in reverse peel order: a key's peeled slot gets its
  // fingerprint XOR its other slots, which no key set later changes (a key
  // set later was peeled earlier, alone in its peeled slot while this key
  // was still in all of its own). The peeled slot is still zero when the key
  // is set (each slot is peeled at most once), so all of them are
  // XORed in without a branch. Byte-aligned widths (8 bits is the common
  // one) read and write their slots without the bit shifting.
  void Fill(const FuseLayout& layout, std::string* slots) const {
    const uint32_t w = layout.fingerprint_bits;
    slots->assign(layout.num_bytes() + 8, '\0');
    uint8_t* array = reinterpret_cast<uint8_t*>(slots->data());
    switch (w) {
      case 8:
        return SetSlots(AlignedSlots<uint8_t>{array}, w);
      case 16:
        return SetSlots(AlignedSlots<uint16_t>{array}, w);
      case 32:
        return SetSlots(AlignedSlots<uint32_t>{array}, w);
      default:
        return SetSlots(PackedSlots{array, w, FingerprintMask(w)}, w);
    }
  }

  // Slot access for Fill, any width.
  struct PackedSlots {
    uint8_t* array;
    uint32_t w;
    uint32_t mask;
    uint32_t Load(uint64_t i) const {
      return LoadPackedSlot(array, i, w, mask);
    }
    void Store(uint64_t i, uint32_t v) const {
      StorePackedSlot(array, i, w, v);
    }
  };
  // Slot access for Fill, widths of one Word.
  template <typename Word>
  struct AlignedSlots {
    uint8_t* array;
    uint32_t Load(uint64_t i) const { return LoadAlignedSlot<Word>(array, i); }
    void Store(uint64_t i, uint32_t v) const {
      StoreAlignedSlot<Word>(array, i, v);
    }
  };

  template <typename Slots>
  void SetSlots(const Slots& array, uint32_t w) const {
    const uint32_t mask = FingerprintMask(w);
    for (size_t k = num_peeled_; k-- > 0;) {
      const uint64_t g = sorted_[k];
      const FuseSlots<Arity> s = FuseSlotsOf<Arity>(g, range_, log2_);
      uint32_t value = FuseFingerprint<Arity>(g, mask);
      for (uint32_t j = 0; j < Arity; ++j) value ^= array.Load(s.slot[j]);
      array.Store(s.slot[peeled_index_[k]], value);
    }
  }

  uint64_t range_ = 0;  // segment_count << segment_length_log2
  uint32_t log2_ = 0;   // segment_length_log2
  std::vector<uint64_t> bucket_start_;
  ScratchArray<uint64_t> sorted_array_;
  ScratchArray<uint8_t> count_array_;
  ScratchArray<uint64_t> xor_array_;
  ScratchArray<uint8_t> peeled_index_array_;
  // The arrays above as this attempt uses them.
  size_t num_keys_ = 0;
  uint64_t num_slots_ = 0;
  uint64_t* sorted_ = nullptr;       // num_keys_ hashes
  uint8_t* count_ = nullptr;         // num_slots_ counts
  uint64_t* xor_ = nullptr;          // num_slots_ XORs of hashes
  uint8_t* peeled_index_ = nullptr;  // num_keys_ slot indexes
  // stack_[0, stack_size_): slots behind the scan left with one key. The
  // vector's size is the stack's capacity.
  std::vector<uint64_t> stack_;
  size_t stack_size_ = 0;
  size_t num_peeled_ = 0;
};

class FuseFilterBuilder final : public HashingFilterBuilder<FuseFilterBuilder> {
 public:
  // Fingerprints of `fixed_bits` bits, or (fixed_bits == 0) the widest the
  // budget of `bits_per_key` affords for the number of distinct keys, in the
  // layout of `format_version` (1: 3-wise, 2: 4-wise).
  FuseFilterBuilder(uint32_t fixed_bits, double bits_per_key, uint64_t seed,
                    uint32_t format_version)
      : HashingFilterBuilder(seed),
        fixed_bits_(fixed_bits),
        bits_per_key_(bits_per_key),
        arity_(FuseArityOfVersion(format_version)) {
    assert(fixed_bits <= kMaxFingerprintBits);
    assert(arity_ != 0);
  }

  void AddHash(uint64_t h) {
    if (!hashes_.empty() && hashes_.back() == h) return;
    hashes_.Add(h);
  }

  uint64_t NumKeys() const override { return hashes_.size(); }

  std::string Finish() override {
    FuseHeader header;
    header.seed = seed_;
    std::string slots;
    header.layout.arity = arity_;
    header.layout.fingerprint_bits = WidthFor(0);
    if (!hashes_.empty()) {
      header.layout = arity_ == kFuseArityV1 ? Construct<kFuseArityV1>(&slots)
                                             : Construct<kFuseArity>(&slots);
    }
    header.num_keys = hashes_.size();
    slots.resize(header.layout.num_bytes());
    hashes_.Clear();
    return EncodeFuseFilter(header, slots);
  }

 private:
  // Runs attempts until one peels every key; returns its layout. Keys added
  // twice (not adjacently) share a hash and can never be peeled. Removing
  // repeated hashes sorts all of them, about the cost of an attempt, and the
  // 4-wise sizes are chosen so that an attempt fails now and then
  // (FuseSizeFactor), so it is done only once a failed attempt shows a
  // repeat (FusePeeler::LeftARepeatedHash) or before the array would grow;
  // the array is then sized for the distinct keys. The array grows by about
  // 6% every kAttemptsPerSize failures at one size, so construction ends
  // long before kMaxAttempts (at the writers' sizes most first attempts
  // succeed).
  template <uint32_t Arity>
  FuseLayout Construct(std::string* slots) {
    FuseLayout layout =
        FuseLayoutFor(hashes_.size(), WidthFor(hashes_.size()), Arity);
    FusePeeler<Arity> peeler;
    bool deduplicated = false;
    uint32_t failures_at_size = 0;
    for (uint32_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
      layout.attempt = attempt;
      if (peeler.Build(hashes_, layout, slots)) return layout;
      if (!deduplicated && (failures_at_size + 1 == kAttemptsPerSize ||
                            peeler.LeftARepeatedHash())) {
        deduplicated = true;
        const uint64_t before = hashes_.size();
        hashes_.RemoveRepeats();
        if (hashes_.size() != before) {
          layout =
              FuseLayoutFor(hashes_.size(), WidthFor(hashes_.size()), Arity);
          failures_at_size = 0;
          continue;
        }
      }
      if (++failures_at_size == kAttemptsPerSize) {
        layout.segment_count += 1 + layout.segment_count / 16;
        failures_at_size = 0;
      }
    }
    // Unreachable in practice (the array has grown many times over); stated
    // so that a broken invariant fails loudly instead of writing a filter
    // with false negatives.
    assert(false && "binary fuse construction did not converge");
    std::abort();
  }

  uint32_t WidthFor(uint64_t num_keys) const {
    return fixed_bits_ != 0 ? fixed_bits_
                            : FingerprintBitsFor(bits_per_key_, num_keys,
                                                 WidthCoin(), arity_);
  }

  // The coin that rounds a fractional width (FingerprintBitsFor): uniform in
  // [0, 1) over key sets, yet the same for the same keys, so that a table
  // rebuilt from the same keys gets the same filter. The hashes are uniform,
  // and the first and last keys differ from table to table.
  double WidthCoin() const {
    if (hashes_.empty()) return 0.0;
    const uint64_t mixed = FuseRemix(
        hashes_.front() ^ (hashes_.back() * kProbeMix) ^ hashes_.size(), 0);
    return static_cast<double>(mixed >> 11) * 0x1.0p-53;
  }

  const uint32_t fixed_bits_;
  const double bits_per_key_;
  const uint32_t arity_;
  HashBlocks hashes_;  // distinct-from-previous keys' hashes
};

}  // namespace

std::unique_ptr<FilterBuilder> NewFuseFilterBuilder(uint32_t fingerprint_bits,
                                                    uint64_t seed,
                                                    uint32_t format_version) {
  assert(fingerprint_bits >= 1 && fingerprint_bits <= kMaxFingerprintBits);
  return std::make_unique<FuseFilterBuilder>(fingerprint_bits, 0.0, seed,
                                             format_version);
}

std::unique_ptr<FilterBuilder> NewFuseFilterBuilderForBudget(
    double bits_per_key, uint64_t seed, uint32_t format_version) {
  return std::make_unique<FuseFilterBuilder>(0, bits_per_key, seed,
                                             format_version);
}

}  // namespace sift
