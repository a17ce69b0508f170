#include "db/batch_order.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <string_view>
#include <vector>

#include "util/coding.h"

namespace sift {
namespace {

// The largest batch RankByPrefix orders.
constexpr size_t kMaxRanked = 64;

// Puts index i at the place of the number of values below values[i],
// counting over all pairs with no branch on the values. The count of every
// value grows at once, one candidate j at a time, so the compilers vectorize
// across i and need no horizontal sums. Returns false, with *order
// unspecified, if two values are equal: equal values take the same place, so
// some place is never written. REQUIRES: n <= kMaxRanked, order holds at
// least n places.
template <typename T>
[[gnu::always_inline]] inline bool RankDistinct(const T* values, size_t n,
                                                uint32_t* order) {
  T below[kMaxRanked];  // as wide as the values: one vector lane each
  std::fill_n(below, n, T{0});
  for (size_t j = 0; j < n; ++j) {
    const T value = values[j];
    for (size_t i = 0; i < n; ++i) below[i] += value < values[i];
  }
  constexpr uint32_t kUnwritten = ~uint32_t{0};
  std::fill_n(order, n, kUnwritten);
  for (size_t i = 0; i < n; ++i) {
    order[static_cast<size_t>(below[i])] = static_cast<uint32_t>(i);
  }
  return std::find(order, order + n, kUnwritten) == order + n;
}

// RankDistinct on 32-bit values, the usual case. Where the compiler can build
// a function for several instruction sets and pick one by the CPU when the
// program loads (target_clones in GCC and Clang, an ifunc on Linux), it gets
// AVX2 and AVX-512 versions: its inner loop then compares 8 or 16 values per
// instruction instead of SSE2's 4. (By callgrind, in batches of 32 keys:
// 30 instructions a key with AVX2 and 67 with SSE2, where keeping the counts
// in memory costs more than a horizontal sum per value, 59.)
//
// Not under ThreadSanitizer: the ifunc's resolver runs while the program is
// relocated, before the sanitizer's runtime is set up, and its instrumented
// code crashes there.
#if defined(__SANITIZE_THREAD__)
#define SIFT_NO_TARGET_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIFT_NO_TARGET_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    !defined(SIFT_NO_TARGET_CLONES)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
bool RankDistinct32(const int32_t* values, size_t n, uint32_t* order) {
  return RankDistinct(values, n, order);
}

// Ranks a small batch by its keys' 64-bit prefixes (RankDistinct). A
// comparison sort of random keys mispredicts about every other branch; the
// n^2 branch-free compares cost less up to a few dozen keys. Returns false,
// with *order unspecified, if two prefixes are equal.
//
// First on 32 bits (four compares to a 128-bit vector): the window starts at
// the first bit in which the prefixes differ. Only if that leaves a tie, on
// the whole 64 bits.
// REQUIRES: order holds prefixes.size() <= kMaxRanked places.
bool RankByPrefix(absl::Span<const uint64_t> prefixes, uint32_t* order) {
  const size_t n = prefixes.size();
  uint64_t differ = 0;
  for (const uint64_t p : prefixes) differ |= p ^ prefixes[0];
  if (differ == 0) return n <= 1;
  const int shift = std::countl_zero(differ);
  int32_t narrow[kMaxRanked];
  for (size_t i = 0; i < n; ++i) {
    // Signed compares of the flipped top bit order as unsigned ones would.
    narrow[i] = static_cast<int32_t>(
        static_cast<uint32_t>((prefixes[i] << shift) >> 32) ^ 0x80000000u);
  }
  return RankDistinct32(narrow, n, order) ||
         RankDistinct(prefixes.data(), n, order);
}

// The length of the longest prefix every key of `keys` shares.
// REQUIRES: !keys.empty()
size_t CommonPrefix(absl::Span<const std::string_view> keys) {
  const std::string_view first = keys[0];
  // Eight bytes at a time, over the whole batch at once, with no branch on
  // the bytes: the OR of every key's word XOR the first key's holds a bit
  // wherever some key differs, and the lowest such byte in memory order is
  // where the batch parts. Invariant: every key is at least `offset` bytes
  // long and they all share those bytes.
  size_t offset = 0;
  for (; first.size() >= offset + 8; offset += 8) {
    uint64_t head;
    std::memcpy(&head, first.data() + offset, 8);
    uint64_t differ = 0;
    bool key_ends = false;
    for (const std::string_view key : keys.subspan(1)) {
      if (key.size() < offset + 8) {
        key_ends = true;
        break;
      }
      uint64_t word;
      std::memcpy(&word, key.data() + offset, 8);
      differ |= word ^ head;
    }
    if (key_ends) break;
    if (differ != 0) {
      return offset +
             static_cast<size_t>(std::endian::native == std::endian::little
                                     ? std::countr_zero(differ)
                                     : std::countl_zero(differ)) /
                 8;
    }
  }
  // A key ends within the next eight bytes: byte by byte from `offset`.
  size_t common = first.size();
  for (const std::string_view key : keys.subspan(1)) {
    const size_t n = std::min(common, key.size());
    size_t i = offset;
    while (i < n && first[i] == key[i]) ++i;
    common = i;
  }
  return common;
}

}  // namespace

void BatchOrder(const Comparator* ucmp, absl::Span<const std::string_view> keys,
                absl::Span<uint32_t> order) {
  assert(order.size() == keys.size());
  if (keys.empty()) return;
  if (ucmp != BytewiseComparator()) {
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return ucmp->Compare(keys[a], keys[b]) < 0;
    });
    return;
  }
  // Bytewise (every DB's order). Keys of a batch often share a prefix (a
  // table id, zero-padded numbers), so the 8 bytes after the batch's common
  // prefix are compared as one big-endian integer, and only pairs equal
  // there compare whole keys. (Zero padding keeps the order: a key and its
  // zero-extended version tie and are told apart by the whole compare.)
  const size_t common = CommonPrefix(keys);
  // Equal prefixes (duplicates, or keys that differ further on) are left to
  // the comparison sort.
  if (keys.size() <= kMaxRanked) {
    uint64_t prefixes[kMaxRanked];  // on the stack: batches are small
    for (size_t i = 0; i < keys.size(); ++i) {
      prefixes[i] = BigEndianWindow(keys[i], common);
    }
    if (RankByPrefix(absl::MakeConstSpan(prefixes, keys.size()),
                     order.data())) {
      return;
    }
  }
  struct Entry {
    uint64_t prefix;
    uint32_t index;
  };
  std::vector<Entry> entries(keys.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    entries[i] = Entry{BigEndianWindow(keys[i], common), i};
  }
  std::sort(entries.begin(), entries.end(),
            [&](const Entry& a, const Entry& b) {
              if (a.prefix != b.prefix) return a.prefix < b.prefix;
              return keys[a.index] < keys[b.index];
            });
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = entries[i].index;
}

}  // namespace sift
