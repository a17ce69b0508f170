// FilterReader for the binary fuse filter: parses the packed slots into
// cache-line-aligned memory and answers a query with one hash, a slot load
// per slot of the key (four in format version 2, three in version 1) and a
// compare. 8-, 16- and 32-bit fingerprints are loaded as whole bytes; other
// widths with a shift and a mask. The arity and the width are template
// parameters, picked once when the filter is parsed, so a query neither
// branches on them nor allocates.

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>

#include "filter/aligned_words.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "filter/fuse_math.h"
#include "filter/fuse_probe.h"
#include "util/hash.h"

namespace sift {
namespace {

// Owns a copy of the slots. Invariant: words_ holds the layout's num_bytes()
// followed by at least 8 zero bytes, so every slot load stays inside it.
// As for the Bloom readers, what a query reads comes first and the object
// starts on a cache line.
class alignas(kCacheLineBytes) FuseReaderBase : public FilterReader {
 public:
  explicit FuseReaderBase(const FilterContents& contents)
      : seed_(contents.info.seed),
        range_(contents.fuse.segment_count
               << contents.fuse.segment_length_log2),
        segment_length_log2_(contents.fuse.segment_length_log2),
        attempt_(contents.fuse.attempt),
        fingerprint_bits_(contents.fuse.fingerprint_bits),
        fingerprint_mask_(FingerprintMask(contents.fuse.fingerprint_bits)),
        words_(contents.bits.size() / 8 + 2),
        num_slots_(contents.fuse.num_slots()),
        info_(contents.info) {
    if (!contents.bits.empty()) {
      std::memcpy(words_.data(), contents.bits.data(), contents.bits.size());
    }
  }

  FilterInfo info() const override { return info_; }

  size_t MemoryUsage() const override {
    return sizeof(*this) + words_.size_bytes();
  }

  double FillRatio() const override {
    if (num_slots_ == 0) return 0.0;
    uint64_t nonzero = 0;
    for (uint64_t i = 0; i < num_slots_; ++i) {
      nonzero +=
          LoadPackedSlot(array(), i, fingerprint_bits_, fingerprint_mask_) != 0;
    }
    return static_cast<double>(nonzero) / static_cast<double>(num_slots_);
  }

 protected:
  const uint8_t* array() const {
    return reinterpret_cast<const uint8_t*>(words_.data());
  }

  const uint64_t seed_;
  const uint64_t range_;
  const uint32_t segment_length_log2_;
  const uint32_t attempt_;
  const uint32_t fingerprint_bits_;
  const uint32_t fingerprint_mask_;
  AlignedWords words_;
  const uint64_t num_slots_;
  const FilterInfo info_;
};

// Arity: slots per key (3: version 1, 4: version 2). Word: the slot type for
// byte-aligned widths; void for any other width.
template <uint32_t Arity, typename Word>
class FuseReader final : public FuseReaderBase {
 public:
  using FuseReaderBase::FuseReaderBase;

 protected:
  bool DoMayMatch(FilterKeyHash* key) const override {
    const uint64_t g = FuseRemix(key->ForSeed(seed_), attempt_);
    const FuseSlots<Arity> s =
        FuseSlotsOf<Arity>(g, range_, segment_length_log2_);
    uint32_t x = Load(s.slot[0]) ^ Load(s.slot[1]) ^ Load(s.slot[2]);
    if constexpr (Arity == 4) x ^= Load(s.slot[3]);
    return x == FuseFingerprint<Arity>(g, fingerprint_mask_);
  }

  // The slots' bytes, one segment apart: a cache line each.
  void DoPrefetch(FilterKeyHash* key) const override {
    const uint64_t g = FuseRemix(key->ForSeed(seed_), attempt_);
    const FuseSlots<Arity> s =
        FuseSlotsOf<Arity>(g, range_, segment_length_log2_);
    for (uint64_t slot : s.slot) {
      __builtin_prefetch(array() + slot * fingerprint_bits_ / 8);
    }
  }

 private:
  uint32_t Load(uint64_t slot) const {
    if constexpr (std::is_void_v<Word>) {
      return LoadPackedSlot(array(), slot, fingerprint_bits_,
                            fingerprint_mask_);
    } else {
      return LoadAlignedSlot<Word>(array(), slot);
    }
  }
};

// No keys: every answer is "no".
class EmptyFuseReader final : public FuseReaderBase {
 public:
  using FuseReaderBase::FuseReaderBase;

 protected:
  bool DoMayMatch(FilterKeyHash*) const override { return false; }
};

}  // namespace

namespace {

template <uint32_t Arity>
std::unique_ptr<FilterReader> NewReaderForArity(
    const FilterContents& contents) {
  switch (contents.fuse.fingerprint_bits) {
    case 8:
      return std::make_unique<FuseReader<Arity, uint8_t>>(contents);
    case 16:
      return std::make_unique<FuseReader<Arity, uint16_t>>(contents);
    case 32:
      return std::make_unique<FuseReader<Arity, uint32_t>>(contents);
    default:
      return std::make_unique<FuseReader<Arity, void>>(contents);
  }
}

}  // namespace

std::unique_ptr<FilterReader> NewFuseFilterReader(
    const FilterContents& contents) {
  if (contents.fuse.segment_count == 0) {
    return std::make_unique<EmptyFuseReader>(contents);
  }
  // DecodeFilter accepted the version, so the arity is one of these.
  return contents.fuse.arity == kFuseArityV1
             ? NewReaderForArity<kFuseArityV1>(contents)
             : NewReaderForArity<kFuseArity>(contents);
}

}  // namespace sift
