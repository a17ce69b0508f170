#include "filter/modular_bloom.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "filter/bloom_math.h"
#include "filter/bloom_probe.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift {
namespace {

// Byte offsets inside the header (doc/filter_format.md).
constexpr size_t kKindOffset = 0;
constexpr size_t kVersionOffset = 1;
constexpr size_t kUnitsOffset = 2;
constexpr size_t kReservedOffset = 3;  // 5 zero bytes, 3..7
constexpr size_t kNumKeysOffset = 8;
constexpr size_t kSeedOffset = 16;
constexpr size_t kDirectoryOffset = 24;
constexpr size_t kDirectoryEntry = 16;  // num_bits (8), k (1), 7 zero bytes

absl::Status Corrupt(std::string_view what, uint64_t offset) {
  return absl::DataLossError(absl::StrCat(
      "modular filter: ", absl::string_view(what.data(), what.size()),
      " at offset ", offset));
}

uint32_t UnitChecksum(uint32_t unit, std::string_view bits) {
  return static_cast<uint32_t>(Hash64(bits, uint64_t{unit} + 1));
}

}  // namespace

uint32_t FilterUnitsFor(double bits_per_key) {
  if (!(bits_per_key > 0)) return 1;
  const double units = std::round(bits_per_key / kFilterUnitBitsPerKey);
  return static_cast<uint32_t>(
      std::clamp(units, 1.0, static_cast<double>(kMaxFilterUnits)));
}

uint64_t ModularHeader::UnitOffset(uint32_t u) const {
  uint64_t offset = EncodedLength();
  for (uint32_t i = 0; i < u; ++i) offset += UnitLength(units[i]);
  return offset;
}

uint64_t ModularHeader::TotalLength() const {
  return UnitOffset(static_cast<uint32_t>(units.size()));
}

void ModularHeader::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  dst->resize(start + EncodedLength() - 4, '\0');
  char* p = dst->data() + start;
  p[kKindOffset] = static_cast<char>(kModularBloomTag);
  p[kVersionOffset] = static_cast<char>(kModularFormatVersion);
  p[kUnitsOffset] = static_cast<char>(units.size());
  EncodeFixed64(p + kNumKeysOffset, num_keys);
  EncodeFixed64(p + kSeedOffset, seed);
  for (size_t u = 0; u < units.size(); ++u) {
    char* e = p + kDirectoryOffset + u * kDirectoryEntry;
    EncodeFixed64(e, units[u].num_bits);
    e[8] = static_cast<char>(units[u].num_probes);
  }
  const uint32_t crc = Checksum32(std::string_view(p, EncodedLength() - 4));
  char buf[4];
  EncodeFixed32(buf, crc);
  dst->append(buf, 4);
}

absl::Status ModularHeader::DecodeFrom(std::string_view input) {
  if (input.size() < kDirectoryOffset) {
    return Corrupt(absl::StrCat("header truncated to ", input.size(), " bytes"),
                   0);
  }
  const char* p = input.data();
  if (static_cast<uint8_t>(p[kKindOffset]) != kModularBloomTag ||
      static_cast<uint8_t>(p[kVersionOffset]) != kModularFormatVersion) {
    return Corrupt("not a version-1 modular filter", 0);
  }
  const uint32_t count = static_cast<uint8_t>(p[kUnitsOffset]);
  if (count < 1 || count > kMaxFilterUnits) {
    return Corrupt(absl::StrCat(count, " units"), kUnitsOffset);
  }
  const size_t length = 28 + kDirectoryEntry * count;
  if (input.size() < length) {
    return Corrupt(absl::StrCat("header of ", count, " units truncated to ",
                                input.size(), " bytes"),
                   0);
  }
  if (DecodeFixed32(p + length - 4) !=
      Checksum32(std::string_view(p, length - 4))) {
    return Corrupt("header checksum mismatch", length - 4);
  }
  for (size_t i = kReservedOffset; i < kNumKeysOffset; ++i) {
    if (p[i] != 0) return Corrupt("nonzero reserved byte", i);
  }
  num_keys = DecodeFixed64(p + kNumKeysOffset);
  seed = DecodeFixed64(p + kSeedOffset);
  units.assign(count, Unit{});
  for (uint32_t u = 0; u < count; ++u) {
    const size_t at = kDirectoryOffset + u * kDirectoryEntry;
    const char* e = p + at;
    for (size_t i = 9; i < kDirectoryEntry; ++i) {
      if (e[i] != 0) return Corrupt("nonzero reserved byte", at + i);
    }
    units[u].num_bits = DecodeFixed64(e);
    units[u].num_probes = static_cast<uint8_t>(e[8]);
    if (units[u].num_bits % kFilterLineBits != 0 ||
        units[u].num_bits > (uint64_t{1} << 50)) {
      return Corrupt(absl::StrCat("unit ", u, " has ", units[u].num_bits,
                                  " bits, not a whole number of lines"),
                     at);
    }
    if (units[u].num_probes < 1 || units[u].num_probes > kMaxFilterProbes) {
      return Corrupt(absl::StrCat("unit ", u, " has k = ", units[u].num_probes),
                     at + 8);
    }
    if ((units[u].num_bits == 0) != (num_keys == 0)) {
      return Corrupt(absl::StrCat("unit ", u, " has ", units[u].num_bits,
                                  " bits for ", num_keys, " keys"),
                     at);
    }
  }
  return absl::OkStatus();
}

std::string EncodeFilterUnit(uint32_t unit, std::string_view bits) {
  std::string out(bits);
  char buf[4];
  EncodeFixed32(buf, UnitChecksum(unit, bits));
  out.append(buf, 4);
  return out;
}

namespace {

class ModularBloomBuilder final
    : public HashingFilterBuilder<ModularBloomBuilder> {
 public:
  ModularBloomBuilder(double bits_per_key, uint64_t seed)
      : HashingFilterBuilder(seed),
        bits_per_key_(std::clamp(bits_per_key, 0.01, 1e6)),
        num_units_(FilterUnitsFor(bits_per_key_)) {}

  void AddHash(uint64_t h) {
    if (!hashes_.empty() && hashes_.back() == h) return;
    hashes_.push_back(h);
  }
  uint64_t NumKeys() const override { return hashes_.size(); }

  std::string Finish() override {
    ModularHeader header;
    header.num_keys = hashes_.size();
    header.seed = seed_;
    const double unit_bits = bits_per_key_ / num_units_;
    const uint32_t k = BlockedNumProbes(unit_bits);
    for (uint32_t u = 0; u < num_units_; ++u) {
      uint64_t bits = 0;
      if (!hashes_.empty()) {
        const double raw = std::min(
            std::ceil(static_cast<double>(hashes_.size()) * unit_bits), 0x1p50);
        const uint64_t lines = std::max<uint64_t>(
            1, (static_cast<uint64_t>(raw) + kFilterLineBits - 1) /
                   kFilterLineBits);
        bits = lines * kFilterLineBits;
      }
      header.units.push_back({bits, k});
    }
    std::string out;
    header.EncodeTo(&out);
    for (uint32_t u = 0; u < num_units_; ++u) {
      const uint64_t num_bits = header.units[u].num_bits;
      AlignedWords words(num_bits / 64);
      const uint64_t lines = num_bits / kFilterLineBits;
      for (uint64_t h : hashes_) {
        BlockedAdd(UnitHash(h, u), k, lines, words.data());
      }
      if constexpr (std::endian::native == std::endian::big) {
        for (uint64_t i = 0; i < num_bits / 64; ++i) {
          words.data()[i] = __builtin_bswap64(words.data()[i]);
        }
      }
      out += EncodeFilterUnit(
          u, std::string_view(reinterpret_cast<const char*>(words.data()),
                              num_bits / 8));
    }
    hashes_.clear();
    return out;
  }

 private:
  const double bits_per_key_;
  const uint32_t num_units_;
  std::vector<uint64_t> hashes_;
};

}  // namespace

std::unique_ptr<FilterBuilder> NewModularBloomBuilder(double bits_per_key,
                                                      uint64_t seed) {
  return std::make_unique<ModularBloomBuilder>(bits_per_key, seed);
}

ModularBloomReader::ModularBloomReader(ModularHeader header)
    : header_(std::move(header)) {}

double ModularBloomReader::UnitFpr(uint32_t u) const {
  const ModularHeader::Unit& unit = header_.units[u];
  return StandardFpr(unit.num_bits, header_.num_keys, unit.num_probes);
}

absl::StatusOr<std::unique_ptr<ModularBloomReader>> ModularBloomReader::Parse(
    std::string_view serialized, uint32_t max_units) {
  ModularHeader header;
  if (absl::Status s = header.DecodeFrom(serialized); !s.ok()) return s;
  if (serialized.size() != header.TotalLength()) {
    return Corrupt(absl::StrCat(serialized.size(),
                                " bytes where the header "
                                "describes ",
                                header.TotalLength()),
                   0);
  }
  std::unique_ptr<ModularBloomReader> reader(
      new ModularBloomReader(std::move(header)));
  const uint32_t load = std::min(max_units, reader->num_units());
  for (uint32_t u = 0; u < load; ++u) {
    const ModularHeader::Unit& unit = reader->header_.units[u];
    if (absl::Status s = reader->LoadNextUnit(serialized.substr(
            reader->header_.UnitOffset(u), ModularHeader::UnitLength(unit)));
        !s.ok()) {
      return s;
    }
  }
  return reader;
}

FilterInfo ModularBloomReader::info() const {
  FilterInfo info;
  info.kind = kModularBloomTag;
  info.version = kModularFormatVersion;
  info.known = true;
  info.num_keys = header_.num_keys;
  info.seed = header_.seed;
  for (const ModularHeader::Unit& unit : header_.units) {
    info.num_bits += unit.num_bits;
    info.num_probes += unit.num_probes;
  }
  info.num_units = num_units();
  info.resident_units = resident_units();
  return info;
}

size_t ModularBloomReader::UnitMemory(uint32_t u) const {
  return AlignedWords::BytesFor(header_.units[u].num_bits / 64);
}

size_t ModularBloomReader::MemoryUsage() const {
  size_t bytes = sizeof(*this);
  const uint32_t resident = resident_units();
  for (uint32_t u = 0; u < resident; ++u) bytes += UnitMemory(u);
  return bytes;
}

double ModularBloomReader::FillRatio() const {
  const uint32_t resident = resident_units();
  uint64_t set = 0, bits = 0;
  for (uint32_t u = 0; u < resident; ++u) {
    const uint64_t* words = words_[u].load(std::memory_order_relaxed);
    const uint64_t n = header_.units[u].num_bits / 64;
    for (uint64_t i = 0; i < n; ++i) set += std::popcount(words[i]);
    bits += header_.units[u].num_bits;
  }
  return bits == 0 ? 0.0 : static_cast<double>(set) / static_cast<double>(bits);
}

absl::Status ModularBloomReader::LoadNextUnit(
    std::string_view unit_bytes) const {
  const uint32_t u = resident_.load(std::memory_order_relaxed);
  const ModularHeader::Unit& unit = header_.units[u];
  const uint64_t offset = header_.UnitOffset(u);
  if (unit_bytes.size() != ModularHeader::UnitLength(unit)) {
    return Corrupt(
        absl::StrCat("unit ", u, " is ", unit_bytes.size(), " bytes, not ",
                     ModularHeader::UnitLength(unit)),
        offset);
  }
  const std::string_view bits = unit_bytes.substr(0, unit.num_bits / 8);
  if (DecodeFixed32(unit_bytes.data() + bits.size()) != UnitChecksum(u, bits)) {
    return Corrupt(absl::StrCat("unit ", u, " checksum mismatch"),
                   offset + bits.size());
  }
  auto words = std::make_unique<AlignedWords>(unit.num_bits / 64);
  if (!bits.empty()) std::memcpy(words->data(), bits.data(), bits.size());
  if constexpr (std::endian::native == std::endian::big) {
    for (uint64_t i = 0; i < unit.num_bits / 64; ++i) {
      words->data()[i] = __builtin_bswap64(words->data()[i]);
    }
  }
  words_[u].store(words->data(), std::memory_order_relaxed);
  owned_[u] = std::move(words);
  resident_.store(u + 1, std::memory_order_release);
  return absl::OkStatus();
}

std::unique_ptr<AlignedWords> ModularBloomReader::DropLastUnit() const {
  const uint32_t u = resident_.load(std::memory_order_relaxed) - 1;
  resident_.store(u, std::memory_order_release);
  return std::move(owned_[u]);
}

bool ModularBloomReader::DoMayMatch(FilterKeyHash* key) const {
  const uint64_t h = key->ForSeed(header_.seed);
  const uint32_t resident = resident_.load(std::memory_order_acquire);
  for (uint32_t u = 0; u < resident; ++u) {
    const ModularHeader::Unit& unit = header_.units[u];
    if (!BlockedMayContain(UnitHash(h, u), unit.num_probes,
                           unit.num_bits / kFilterLineBits,
                           words_[u].load(std::memory_order_relaxed))) {
      return false;
    }
  }
  return true;
}

void ModularBloomReader::DoPrefetch(FilterKeyHash* key) const {
  if (resident_.load(std::memory_order_acquire) == 0) return;
  const ModularHeader::Unit& unit = header_.units[0];
  const uint64_t* words = words_[0].load(std::memory_order_relaxed);
  __builtin_prefetch(words +
                     BlockedLine(UnitHash(key->ForSeed(header_.seed), 0),
                                 unit.num_bits / kFilterLineBits) *
                         kLineWords);
}

}  // namespace sift
