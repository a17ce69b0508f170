#ifndef SIFT_FILTER_FUSE_PROBE_H_
#define SIFT_FILTER_FUSE_PROBE_H_

// Where a key's slots are and what its fingerprint is, for the binary fuse
// filter, and how w-bit slots are packed. The builder, the reader, the tests
// and the benchmarks all use these functions, so they agree by construction.
//
// A key is hashed once, h = XXH3-64(key, seed). Construction may fail for one
// hash function (a 2-core remains after peeling), so the array is built from
// g = FuseRemix(h, attempt) and the attempt that succeeded is stored. With L
// the segment length (a power of two <= 2^18) and m = L - 1:
//   slot 0 = FastRange64(g, segment_count * L)          (the high bits of g)
//   slot 1 = (slot 0 + L) ^ ((g >> 18) & m)
//   slot 2 = (slot 0 + 2L) ^ (g & m)
//   slot 3 = (slot 0 + 3L) ^ ((g >> 36) & m)            (4-wise only)
// Adding jL moves j segments on and the XOR only changes the offset inside
// the segment, so a key's slots lie in consecutive segments and are always
// distinct. Format version 1 is 3-wise (slots 0..2), version 2 4-wise.
//
// The fingerprint must not be a function of the slots: an absent key matches
// with probability 2^-w only if its fingerprint is uniform whatever its slots
// are. Version 1 folds g, (g ^ (g >> 32)) & (2^w - 1), whose bit i pairs g's
// bits i and 32 + i; with the fourth offset taking bits 36.. as well, both
// bits of a pair can be slot offsets (bits 4..7 with 2^8-slot segments).
// Version 2 takes the fingerprint from the high half of g * C instead, each
// bit of which depends on all the lower bits of g, slot offsets and unused
// bits alike:
//   fingerprint = ((g * C) >> 32) & (2^w - 1),   C = 0x9e3779b97f4a7c15

#include <bit>
#include <cstdint>
#include <cstring>

#include "filter/bloom_probe.h"

namespace sift {

// A bijection of h for each attempt, so every attempt draws fresh slots for
// the same keys (and distinct keys keep distinct g).
inline uint64_t FuseRemix(uint64_t h, uint32_t attempt) {
  uint64_t g = h ^ ((uint64_t{attempt} + 1) * kProbeMix);
  g ^= g >> 31;
  g *= 0xbf58476d1ce4e5b9ULL;
  g ^= g >> 29;
  return g;
}

// A key's slots: Arity of them (3 for format version 1, 4 for version 2).
template <uint32_t Arity>
struct FuseSlots {
  static_assert(Arity == 3 || Arity == 4);
  uint64_t slot[Arity];
};

// REQUIRES: segment_range == segment_count << segment_length_log2 and
// segment_length_log2 <= 18.
template <uint32_t Arity>
inline FuseSlots<Arity> FuseSlotsOf(uint64_t g, uint64_t segment_range,
                                    uint32_t segment_length_log2) {
  const uint64_t length = uint64_t{1} << segment_length_log2;
  const uint64_t mask = length - 1;
  const uint64_t s0 = FastRange64(g, segment_range);
  const uint64_t s1 = (s0 + length) ^ ((g >> 18) & mask);
  const uint64_t s2 = (s0 + 2 * length) ^ (g & mask);
  if constexpr (Arity == 3) {
    return {{s0, s1, s2}};
  } else {
    return {{s0, s1, s2, (s0 + 3 * length) ^ ((g >> 36) & mask)}};
  }
}

template <uint32_t Arity>
inline uint32_t FuseFingerprint(uint64_t g, uint32_t fingerprint_mask) {
  if constexpr (Arity == 3) {
    return static_cast<uint32_t>(g ^ (g >> 32)) & fingerprint_mask;
  } else {
    return static_cast<uint32_t>((g * kProbeMix) >> 32) & fingerprint_mask;
  }
}

// 2^w - 1 for w in 1..32.
inline uint32_t FingerprintMask(uint32_t fingerprint_bits) {
  return static_cast<uint32_t>((uint64_t{1} << fingerprint_bits) - 1);
}

// ---- Bit-packed slots ----------------------------------------------------
//
// Slot i occupies bits [i*w, (i+1)*w) of the array, bit b being bit b % 8 of
// byte b / 8 (little-endian, as on disk). A slot is read with one unaligned
// 8-byte load at byte (i*w) / 8, so the array must be followed by 7 readable
// bytes (the reader pads it).

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) {
    v = __builtin_bswap64(v);
  }
  return v;
}

inline uint32_t LoadPackedSlot(const uint8_t* array, uint64_t slot,
                               uint32_t fingerprint_bits,
                               uint32_t fingerprint_mask) {
  const uint64_t bit = slot * fingerprint_bits;
  return static_cast<uint32_t>(LoadLittleEndian64(array + (bit >> 3)) >>
                               (bit & 7)) &
         fingerprint_mask;
}

// Byte-aligned widths: the same bytes, read without the shift.
template <typename Word>
inline uint32_t LoadAlignedSlot(const uint8_t* array, uint64_t slot) {
  Word v;
  std::memcpy(&v, array + slot * sizeof(Word), sizeof(Word));
  if constexpr (std::endian::native == std::endian::big) {
    if constexpr (sizeof(Word) == 2) v = __builtin_bswap16(v);
    if constexpr (sizeof(Word) == 4) v = __builtin_bswap32(v);
  }
  return v;
}

// Byte-aligned widths: writes `value` (< 2^(8 * sizeof(Word))) to slot i,
// the same bytes StorePackedSlot writes into a zeroed slot.
template <typename Word>
inline void StoreAlignedSlot(uint8_t* array, uint64_t slot, uint32_t value) {
  Word v = static_cast<Word>(value);
  if constexpr (std::endian::native == std::endian::big) {
    if constexpr (sizeof(Word) == 2) v = __builtin_bswap16(v);
    if constexpr (sizeof(Word) == 4) v = __builtin_bswap32(v);
  }
  std::memcpy(array + slot * sizeof(Word), &v, sizeof(Word));
}

// ORs `value` (< 2^w) into slot i of a zeroed array with 7 bytes of slack.
inline void StorePackedSlot(uint8_t* array, uint64_t slot,
                            uint32_t fingerprint_bits, uint32_t value) {
  const uint64_t bit = slot * fingerprint_bits;
  uint64_t window = LoadLittleEndian64(array + (bit >> 3));
  window |= uint64_t{value} << (bit & 7);
  if constexpr (std::endian::native == std::endian::big) {
    window = __builtin_bswap64(window);
  }
  std::memcpy(array + (bit >> 3), &window, sizeof(window));
}

}  // namespace sift

#endif  // SIFT_FILTER_FUSE_PROBE_H_
