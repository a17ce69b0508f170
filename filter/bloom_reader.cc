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
#include "filter/modular_bloom.h"
#include "util/hash.h"

namespace sift {
namespace {

// Owns a copy of the bit array. Invariant: words_ holds at least
// num_bits / 64 words and at least one zeroed line.
//
// Layout: what a blocked query reads (the vtable pointer and FilterReader's
// parameters of the blocked layout) comes first and the object starts on a
// cache line, so a query touches one line of the object besides the
// filter's own line. With thousands of open tables the objects are not all
// cached, and a second miss per query would cost as much as the filter's.
class alignas(kCacheLineBytes) BloomReaderBase : public FilterReader {
 public:
  explicit BloomReaderBase(const FilterContents& contents)
      : words_(contents.info.num_bits / 64), info_(contents.info) {
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
  AlignedWords words_;
  const FilterInfo info_;
};

// Probes k bits anywhere in the array, through the virtual DoMayMatch (the
// blocked layout is the default and the one inlined).
class StandardBloomReader final : public BloomReaderBase {
 public:
  explicit StandardBloomReader(const FilterContents& contents)
      : BloomReaderBase(contents) {}

 protected:
  bool DoMayMatch(FilterKeyHash* key) const override {
    return StandardMayContain(key->ForSeed(info_.seed), info_.num_probes,
                              info_.num_bits, words_.data());
  }
  // The first probe's word: an absent key usually stops there or at the
  // second.
  void DoPrefetch(FilterKeyHash* key) const override {
    ForEachStandardProbe(key->ForSeed(info_.seed), 1, info_.num_bits,
                         [this](uint64_t bit) {
                           __builtin_prefetch(words_.data() + (bit >> 6));
                           return false;
                         });
  }
};

// Hands its words and parameters to FilterReader, whose inline MayMatch and
// Prefetch answer every query (every probe of a key is in one line, the one
// prefetched); it overrides no query of its own.
class BlockedBloomReader final : public BloomReaderBase {
 public:
  explicit BlockedBloomReader(const FilterContents& contents)
      : BloomReaderBase(contents) {
    SetBlockedBloom(words_.data(), info_.num_bits / kFilterLineBits,
                    info_.num_probes, info_.seed);
  }
};

// A filter this code cannot read: never excludes a key.
// DoMayMatch's default answers "maybe".
class UnknownFilterReader final : public FilterReader {
 public:
  explicit UnknownFilterReader(const FilterInfo& info) : info_(info) {}
  FilterInfo info() const override { return info_; }
  size_t MemoryUsage() const override { return sizeof(*this); }
  double FillRatio() const override { return 0.0; }

 private:
  const FilterInfo info_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FilterReader>> FilterReader::Parse(
    std::string_view serialized) {
  return Parse(serialized, kMaxFilterUnits);
}

absl::StatusOr<std::unique_ptr<FilterReader>> FilterReader::Parse(
    std::string_view serialized, uint32_t max_units) {
  if (serialized.size() >= 2 &&
      static_cast<uint8_t>(serialized[0]) == kModularBloomTag &&
      static_cast<uint8_t>(serialized[1]) == kModularFormatVersion) {
    absl::StatusOr<std::unique_ptr<ModularBloomReader>> modular =
        ModularBloomReader::Parse(serialized, max_units);
    if (!modular.ok()) return modular.status();
    return std::unique_ptr<FilterReader>(*std::move(modular));
  }
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
