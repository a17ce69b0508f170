// FilterReader for both Bloom layouts: parses the serialized form into
// cache-line-aligned words and answers queries. One class per layout keeps the
// layout test off the hot path. FilterReader::Parse, here, dispatches every
// kind (the binary fuse reader is in fuse_reader.cc).

#include <bit>
#include <cstring>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "filter/aligned_words.h"
#include "filter/bloom_math.h"
#include "filter/bloom_probe.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "util/hash.h"

namespace sift {
namespace {

// Owns a copy of the bit array. Invariant: words_ holds at least
// num_bits / 64 words and at least one zeroed line.
//
// Layout: what a query reads (the vtable pointer and, for the blocked layout,
// FilterReader's inline copy of the parameters; here, seed, k, the range and
// the words pointer) comes first and the object starts on a cache line, so a
// query touches one line of the object besides the filter's own line. With
// thousands of open tables the objects are not all cached, and a second miss
// per query would cost as much as the filter's.
class alignas(kCacheLineBytes) BloomReaderBase : public FilterReader {
 public:
  // `range` is what the layout maps hashes onto: bits or lines.
  BloomReaderBase(const FilterContents& contents, uint64_t range)
      : seed_(contents.info.seed),
        range_(range),
        num_probes_(contents.info.num_probes),
        words_(contents.info.num_bits / 64),
        info_(contents.info) {
    const size_t bytes = contents.bits.size();
    if (bytes > 0) std::memcpy(words_.data(), contents.bits.data(), bytes);
    if constexpr (std::endian::native == std::endian::big) {
      for (uint64_t i = 0; i < info_.num_bits / 64; ++i) {
        words_.data()[i] = __builtin_bswap64(words_.data()[i]);
      }
    }
  }

  FilterInfo info() const override { return info_; }

  size_t MemoryUsage() const override {
    return sizeof(*this) + words_.size_bytes();
  }

  double FillRatio() const override {
    if (info_.num_bits == 0) return 0.0;
    uint64_t set = 0;
    for (uint64_t i = 0; i < info_.num_bits / 64; ++i) {
      set += std::popcount(words_.data()[i]);
    }
    return static_cast<double>(set) / static_cast<double>(info_.num_bits);
  }

 protected:
  const uint64_t seed_;
  const uint64_t range_;
  const uint32_t num_probes_;
  AlignedWords words_;
  const FilterInfo info_;
};

class StandardBloomReader final : public BloomReaderBase {
 public:
  explicit StandardBloomReader(const FilterContents& contents)
      : BloomReaderBase(contents, contents.info.num_bits) {}

 protected:
  bool DoMayMatch(FilterKeyHash* key) const override {
    return StandardMayContain(key->ForSeed(seed_), num_probes_, range_,
                              words_.data());
  }
  // The first probe's word: an absent key usually stops there or at the
  // second.
  void DoPrefetch(FilterKeyHash* key) const override {
    ForEachStandardProbe(key->ForSeed(seed_), 1, range_, [this](uint64_t bit) {
      __builtin_prefetch(words_.data() + (bit >> 6));
      return false;
    });
  }
};

class BlockedBloomReader final : public BloomReaderBase {
 public:
  // Queries run inline in FilterReader::MayMatch and Prefetch (every probe
  // of a key is in one line, the one prefetched).
  explicit BlockedBloomReader(const FilterContents& contents)
      : BloomReaderBase(contents, contents.info.num_bits / kFilterLineBits) {
    SetBlockedBloom(words_.data(), range_, num_probes_, seed_);
  }

 protected:
  bool DoMayMatch(FilterKeyHash* key) const override {
    return BlockedMayContain(key->ForSeed(seed_), num_probes_, range_,
                             words_.data());
  }
};

// A filter this code cannot read: never excludes a key.
class UnknownFilterReader final : public FilterReader {
 public:
  explicit UnknownFilterReader(const FilterInfo& info) : info_(info) {}
  FilterInfo info() const override { return info_; }
  size_t MemoryUsage() const override { return sizeof(*this); }
  double FillRatio() const override { return 0.0; }

 protected:
  bool DoMayMatch(FilterKeyHash*) const override { return true; }

 private:
  const FilterInfo info_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FilterReader>> FilterReader::Parse(
    std::string_view serialized) {
  absl::StatusOr<FilterContents> contents = DecodeFilter(serialized);
  if (!contents.ok()) return contents.status();
  if (!contents->info.known) {
    return std::make_unique<UnknownFilterReader>(contents->info);
  }
  if (contents->info.kind == kBinaryFuseTag) {
    return NewFuseFilterReader(*contents);
  }
  if (contents->info.kind == kBlockedBloomTag) {
    return std::make_unique<BlockedBloomReader>(*contents);
  }
  return std::make_unique<StandardBloomReader>(*contents);
}

}  // namespace sift
