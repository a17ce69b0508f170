// FilterBuilder for the binary fuse filter. Keys are hashed as they arrive and
// only the hashes are kept (8 bytes a key); the array is sized and filled at
// Finish, when the number of distinct keys is known.
//
// Construction (Graf & Lemire): every key adds itself to its three slots'
// counts and to their XOR of hashes. A slot with exactly one key left names
// that key (its XOR is the key's hash), so the key is peeled off: it is
// removed from its other two slots, which may leave them with one key in turn.
// If every key is peeled, the slots are filled in reverse peel order, each
// key's peeled slot set to its fingerprint XOR its other two slots (which no
// later-filled key changes). If some keys remain, the attempt failed; the
// next attempt remixes the hashes (FuseRemix) and, after every few failures,
// grows the array.

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <memory>
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

// Scratch space of the construction, reused across attempts.
class FusePeeler {
 public:
  // Peels `hashes` (distinct) under `layout`. On success fills `slots`
  // (layout.num_bytes() bytes plus 8 of slack, bit-packed) and returns true.
  bool Build(const std::vector<uint64_t>& hashes, const FuseLayout& layout,
             std::string* slots) {
    const uint64_t num_slots = layout.num_slots();
    const uint64_t range = layout.segment_count << layout.segment_length_log2;
    const uint32_t log2 = layout.segment_length_log2;
    SortBySegment(hashes, layout);
    degree_.assign(num_slots, 0);
    xor_.assign(num_slots, 0);
    for (uint64_t g : sorted_) {
      const FuseSlots s = FuseSlotsOf(g, range, log2);
      for (uint32_t j = 0; j < kFuseArity; ++j) {
        // 4 per key plus, in the low two bits, the XOR of the keys' indexes
        // of this slot among their three: once one key is left, its index.
        degree_[s.slot[j]] = (degree_[s.slot[j]] + 4) ^ j;
        xor_[s.slot[j]] ^= g;
      }
    }

    // Sized once: growing it as keys peel would copy it over and over.
    stack_.clear();
    stack_.reserve(sorted_.size());
    for (uint64_t i = 0; i < num_slots; ++i) {
      if ((degree_[i] >> 2) == 1) stack_.push_back(i);
    }
    // The peel order reuses sorted_, which the counts above no longer need:
    // key k of the order is sorted_[k], peeled from its slot
    // peeled_index_[k] (one fresh array less to fault in).
    peeled_index_.resize(sorted_.size());
    size_t num_peeled = 0;
    while (!stack_.empty()) {
      const uint64_t i = stack_.back();
      stack_.pop_back();
      if ((degree_[i] >> 2) != 1) continue;  // emptied since it was pushed
      const uint64_t g = xor_[i];
      const uint32_t index = degree_[i] & 3;
      sorted_[num_peeled] = g;
      peeled_index_[num_peeled++] = static_cast<uint8_t>(index);
      const FuseSlots s = FuseSlotsOf(g, range, log2);
      for (uint32_t j = 0; j < kFuseArity; ++j) {
        const uint64_t other = s.slot[j];
        degree_[other] = (degree_[other] - 4) ^ j;
        xor_[other] ^= g;
        if (j != index && (degree_[other] >> 2) == 1) stack_.push_back(other);
      }
    }
    if (num_peeled != sorted_.size()) return false;

    const uint32_t w = layout.fingerprint_bits;
    const uint32_t mask = FingerprintMask(w);
    slots->assign(layout.num_bytes() + 8, '\0');
    uint8_t* array = reinterpret_cast<uint8_t*>(slots->data());
    for (size_t k = num_peeled; k-- > 0;) {
      const uint64_t g = sorted_[k];
      const uint32_t index = peeled_index_[k];
      const FuseSlots s = FuseSlotsOf(g, range, log2);
      uint32_t value = FuseFingerprint(g, mask);
      for (uint32_t j = 0; j < kFuseArity; ++j) {
        if (j != index) value ^= LoadPackedSlot(array, s.slot[j], w, mask);
      }
      // The peeled slot is still zero: each slot is peeled at most once.
      StorePackedSlot(array, s.slot[index], w, value);
    }
    return true;
  }

 private:
  // Fills sorted_ with the remixed hashes in order of their first slot's
  // segment (a counting sort: two passes). Keys then visit the count arrays
  // in address order, a few segments at a time, instead of at random: with
  // a million keys the arrays are ~13 MiB, and random visits would miss the
  // cache three times a key. The result does not depend on the order.
  // (Remixing twice is cheaper than keeping a third array of hashes.)
  void SortBySegment(const std::vector<uint64_t>& hashes,
                     const FuseLayout& layout) {
    const uint64_t segments = layout.segment_count;
    bucket_start_.assign(segments + 1, 0);
    for (uint64_t h : hashes) {
      // FastRange64(g, c * L) / L == FastRange64(g, c): the segment.
      ++bucket_start_[FastRange64(FuseRemix(h, layout.attempt), segments) + 1];
    }
    for (uint64_t i = 1; i <= segments; ++i) {
      bucket_start_[i] += bucket_start_[i - 1];
    }
    sorted_.resize(hashes.size());
    for (uint64_t h : hashes) {
      const uint64_t g = FuseRemix(h, layout.attempt);
      sorted_[bucket_start_[FastRange64(g, segments)]++] = g;
    }
  }

  std::vector<uint64_t> bucket_start_;
  std::vector<uint64_t> sorted_;
  std::vector<uint32_t> degree_;
  std::vector<uint64_t> xor_;
  std::vector<uint64_t> stack_;
  std::vector<uint8_t> peeled_index_;
};

class FuseFilterBuilder final : public FilterBuilder {
 public:
  // Fingerprints of `fixed_bits` bits, or (fixed_bits == 0) the widest the
  // budget of `bits_per_key` affords for the number of distinct keys.
  FuseFilterBuilder(uint32_t fixed_bits, double bits_per_key, uint64_t seed)
      : fixed_bits_(fixed_bits), bits_per_key_(bits_per_key), seed_(seed) {
    assert(fixed_bits <= kMaxFingerprintBits);
  }

  void AddKey(std::string_view key) override {
    const uint64_t h = Hash64(key, seed_);
    if (!hashes_.empty() && hashes_.back() == h) return;
    hashes_.push_back(h);
  }

  uint64_t NumKeys() const override { return hashes_.size(); }

  std::string Finish() override {
    FuseHeader header;
    header.seed = seed_;
    std::string slots;
    header.layout.fingerprint_bits = WidthFor(0);
    if (!hashes_.empty()) header.layout = Construct(&slots);
    header.num_keys = hashes_.size();
    slots.resize(header.layout.num_bytes());
    hashes_.clear();
    return EncodeFuseFilter(header, slots);
  }

 private:
  // Runs attempts until one peels every key; returns its layout. Keys added
  // twice (not adjacently) share a hash and can never be peeled, so the first
  // failure also removes repeated hashes. The array grows by about 6% every
  // kAttemptsPerSize failures, so construction ends long before kMaxAttempts
  // (a failure at the paper's sizes is rare: one attempt in hundreds or less).
  FuseLayout Construct(std::string* slots) {
    const uint64_t n = hashes_.size();
    FuseLayout layout = FuseLayoutFor(n, WidthFor(n));
    FusePeeler peeler;
    for (uint32_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
      layout.attempt = attempt;
      if (peeler.Build(hashes_, layout, slots)) return layout;
      if (attempt == 0) {
        std::sort(hashes_.begin(), hashes_.end());
        hashes_.erase(std::unique(hashes_.begin(), hashes_.end()),
                      hashes_.end());
        const uint64_t distinct = hashes_.size();
        layout = FuseLayoutFor(distinct, WidthFor(distinct));
      } else if ((attempt + 1) % kAttemptsPerSize == 0) {
        layout.segment_count += 1 + layout.segment_count / 16;
      }
    }
    // Unreachable in practice (the array has grown many times over); stated
    // so that a broken invariant fails loudly instead of writing a filter
    // with false negatives.
    assert(false && "binary fuse construction did not converge");
    std::abort();
  }

  uint32_t WidthFor(uint64_t num_keys) const {
    return fixed_bits_ != 0
               ? fixed_bits_
               : FingerprintBitsFor(bits_per_key_, num_keys, WidthCoin());
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
  const uint64_t seed_;
  std::vector<uint64_t> hashes_;  // distinct-from-previous keys' hashes
};

}  // namespace

std::unique_ptr<FilterBuilder> NewFuseFilterBuilder(uint32_t fingerprint_bits,
                                                    uint64_t seed) {
  assert(fingerprint_bits >= 1 && fingerprint_bits <= kMaxFingerprintBits);
  return std::make_unique<FuseFilterBuilder>(fingerprint_bits, 0.0, seed);
}

std::unique_ptr<FilterBuilder> NewFuseFilterBuilderForBudget(
    double bits_per_key, uint64_t seed) {
  return std::make_unique<FuseFilterBuilder>(0, bits_per_key, seed);
}

}  // namespace sift
