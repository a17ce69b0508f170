#include "filter/range_filter.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift {
namespace {

// Header: kind u8, version u8, low_bits u8, five zero bytes, then
// block_length, universe, num_keys and seed as fixed64.
constexpr size_t kHeaderLength = 40;
constexpr size_t kTrailerLength = 4;  // Checksum32 of everything before
// Codes stay below 2^62, so high positions and sums never overflow.
constexpr uint64_t kMaxUniverse = uint64_t{1} << 62;

uint64_t WordsFor(uint64_t bits) { return bits / 64 + (bits % 64 != 0); }

// The k-th (0-based) set bit of `word`. REQUIRES: popcount(word) > k.
uint32_t SelectInWord(uint64_t word, uint64_t k) {
  for (; k > 0; --k) word &= word - 1;
  return static_cast<uint32_t>(std::countr_zero(word));
}

uint64_t HashBlock(uint64_t block, uint64_t seed, uint64_t universe) {
  char bytes[8];
  EncodeFixed64(bytes, block);
  const uint64_t h = Hash64(std::string_view(bytes, 8), seed);
  // Multiply-shift onto [0, universe) (no modulo bias worth the name).
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * universe) >>
                               64);
}

uint64_t Code(uint64_t key, uint64_t block_length, uint64_t universe,
              uint64_t seed) {
  const uint64_t q = HashBlock(key / block_length, seed, universe);
  return (q + key % universe) % universe;
}

void SetBits(std::vector<uint64_t>* words, uint64_t offset, uint64_t value,
             uint32_t width) {
  if (width == 0) return;
  const uint64_t w = offset / 64;
  const uint32_t shift = offset % 64;
  (*words)[w] |= value << shift;
  if (shift + width > 64) (*words)[w + 1] |= value >> (64 - shift);
}

}  // namespace

double RangeFilterInfo::FprBound(uint64_t length) const {
  if (universe == 0) return 0.0;
  return std::min(1.0, static_cast<double>(num_keys) *
                           static_cast<double>(length) /
                           static_cast<double>(universe));
}

RangeFilterBuilder::RangeFilterBuilder(double bits_per_key,
                                       uint64_t block_length, uint64_t seed)
    : bits_per_key_(bits_per_key), block_length_(block_length), seed_(seed) {
  assert(bits_per_key >= 2.0);
  assert(block_length >= 1);
}

std::string RangeFilterBuilder::Finish() {
  std::vector<uint64_t> keys = std::move(keys_);
  keys_.clear();
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const uint64_t n = keys.size();

  uint64_t universe = 0;
  std::vector<uint64_t> codes;
  if (n > 0) {
    const double scaled = std::ceil(
        static_cast<double>(n) * std::exp2(std::max(bits_per_key_, 2.0) - 2.0));
    universe = scaled >= static_cast<double>(kMaxUniverse)
                   ? kMaxUniverse
                   : std::max<uint64_t>(static_cast<uint64_t>(scaled), n);
    codes.reserve(n);
    for (uint64_t x : keys) {
      codes.push_back(Code(x, block_length_, universe, seed_));
    }
    std::sort(codes.begin(), codes.end());
    codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  }
  const uint64_t m = codes.size();
  const uint32_t low_bits =
      m == 0 ? 0 : static_cast<uint32_t>(std::bit_width(universe / m) - 1);
  const uint64_t high_bits = m == 0 ? 0 : m + (universe >> low_bits) + 1;
  std::vector<uint64_t> low(WordsFor(m * low_bits), 0);
  std::vector<uint64_t> high(WordsFor(high_bits), 0);
  const uint64_t low_mask = low_bits == 0 ? 0 : (uint64_t{1} << low_bits) - 1;
  for (uint64_t i = 0; i < m; ++i) {
    SetBits(&low, i * low_bits, codes[i] & low_mask, low_bits);
    const uint64_t pos = (codes[i] >> low_bits) + i;
    high[pos / 64] |= uint64_t{1} << (pos % 64);
  }

  std::string out;
  out.reserve(kHeaderLength + 8 * (low.size() + high.size()) + kTrailerLength);
  out.push_back(static_cast<char>(kGrafiteRangeFilterTag));
  out.push_back(static_cast<char>(kRangeFilterFormatVersion));
  out.push_back(static_cast<char>(low_bits));
  out.append(5, '\0');
  PutFixed64(&out, block_length_);
  PutFixed64(&out, universe);
  PutFixed64(&out, m);
  PutFixed64(&out, seed_);
  for (uint64_t w : low) PutFixed64(&out, w);
  for (uint64_t w : high) PutFixed64(&out, w);
  PutFixed32(&out, Checksum32(out));
  return out;
}

absl::StatusOr<std::unique_ptr<RangeFilterReader>> RangeFilterReader::Parse(
    std::string_view serialized) {
  auto bad = [](const char* what) {
    return absl::DataLossError(absl::StrCat("bad range filter: ", what));
  };
  if (serialized.size() < 2) return bad("truncated header");
  std::unique_ptr<RangeFilterReader> r(new RangeFilterReader());
  RangeFilterInfo& info = r->info_;
  info.kind = static_cast<uint8_t>(serialized[0]);
  info.version = static_cast<uint8_t>(serialized[1]);
  if (info.kind != kGrafiteRangeFilterTag ||
      info.version != kRangeFilterFormatVersion) {
    return r;  // unknown: every range "maybe"
  }
  if (serialized.size() < kHeaderLength + kTrailerLength) {
    return bad("truncated header");
  }
  const std::string_view body =
      serialized.substr(0, serialized.size() - kTrailerLength);
  if (DecodeFixed32(serialized.data() + body.size()) != Checksum32(body)) {
    return bad("checksum mismatch");
  }
  for (size_t i = 3; i < 8; ++i) {
    if (serialized[i] != 0) return bad("nonzero reserved bytes");
  }
  info.low_bits = static_cast<uint8_t>(serialized[2]);
  info.block_length = DecodeFixed64(serialized.data() + 8);
  info.universe = DecodeFixed64(serialized.data() + 16);
  info.num_keys = DecodeFixed64(serialized.data() + 24);
  info.seed = DecodeFixed64(serialized.data() + 32);
  const uint64_t m = info.num_keys;
  const uint64_t available_bits = 8 * (body.size() - kHeaderLength);
  if (info.block_length == 0) return bad("zero block length");
  if (info.universe > kMaxUniverse) return bad("universe too large");
  if (m > info.universe) return bad("more codes than the universe holds");
  const uint32_t expected_low_bits =
      m == 0 ? 0 : static_cast<uint32_t>(std::bit_width(info.universe / m) - 1);
  if (info.low_bits != expected_low_bits) {
    return bad("low bits do not match the universe and key count");
  }
  // m <= universe / 2^low_bits here, so these stay far from overflow.
  if (m > available_bits) return bad("arrays shorter than the key count");
  r->high_bits_ = m == 0 ? 0 : m + (info.universe >> info.low_bits) + 1;
  const uint64_t low_words = WordsFor(m * info.low_bits);
  const uint64_t high_words = WordsFor(r->high_bits_);
  if (8 * (low_words + high_words) != body.size() - kHeaderLength) {
    return bad("array size does not match the header");
  }
  info.num_bits = m * info.low_bits + r->high_bits_;
  info.known = true;
  const char* p = body.data() + kHeaderLength;
  r->low_.resize(low_words);
  for (uint64_t& w : r->low_) w = DecodeFixed64(p), p += 8;
  r->high_.resize(high_words);
  for (uint64_t& w : r->high_) w = DecodeFixed64(p), p += 8;

  // The high array: exactly m ones, nothing past its length, and the last
  // code inside the universe; then sample its zeros for SelectZero.
  uint64_t ones = 0;
  for (uint64_t w : r->high_) ones += std::popcount(w);
  if (r->high_bits_ % 64 != 0 && !r->high_.empty() &&
      (r->high_.back() >> (r->high_bits_ % 64)) != 0) {
    return bad("bits set past the high array");
  }
  if (ones != m) return bad("high array does not hold one bit per code");
  if (m > 0) {
    uint64_t last = high_words - 1;
    while (r->high_[last] == 0) --last;
    const uint64_t pos = 64 * last + 63 - std::countl_zero(r->high_[last]);
    const uint64_t value = ((pos - (m - 1)) << info.low_bits) | r->Low(m - 1);
    if (value >= info.universe) return bad("code outside the universe");
  }
  uint64_t zeros_seen = 0, next = 0;
  for (uint64_t w = 0; w < high_words; ++w) {
    uint64_t inverted = ~r->high_[w];
    if (w == high_words - 1 && r->high_bits_ % 64 != 0) {
      inverted &= (uint64_t{1} << (r->high_bits_ % 64)) - 1;
    }
    const uint64_t c = std::popcount(inverted);
    while (next < zeros_seen + c) {
      r->zero_samples_.push_back(64 * w +
                                 SelectInWord(inverted, next - zeros_seen));
      next += kZeroSample;
    }
    zeros_seen += c;
  }
  return r;
}

size_t RangeFilterReader::MemoryUsage() const {
  return sizeof(*this) +
         8 * (low_.capacity() + high_.capacity() + zero_samples_.capacity());
}

uint64_t RangeFilterReader::Low(uint64_t i) const {
  const uint32_t width = info_.low_bits;
  if (width == 0) return 0;
  const uint64_t offset = i * width;
  const uint64_t w = offset / 64;
  const uint32_t shift = offset % 64;
  uint64_t v = low_[w] >> shift;
  if (shift + width > 64) v |= low_[w + 1] << (64 - shift);
  return v & ((uint64_t{1} << width) - 1);
}

uint64_t RangeFilterReader::SelectZero(uint64_t z) const {
  uint64_t pos = zero_samples_[z / kZeroSample];
  uint64_t remaining = z % kZeroSample;
  if (remaining == 0) return pos;
  ++pos;
  uint64_t w = pos / 64;
  uint64_t inverted = ~high_[w] & (~uint64_t{0} << (pos % 64));
  while (true) {
    const uint64_t c = std::popcount(inverted);
    if (c >= remaining) return 64 * w + SelectInWord(inverted, remaining - 1);
    remaining -= c;
    inverted = ~high_[++w];
  }
}

bool RangeFilterReader::AnyCodeIn(uint64_t c1, uint64_t c2) const {
  const uint64_t m = info_.num_keys;
  const uint32_t l = info_.low_bits;
  // The first code whose high part is at least c1's: just after the zero
  // that ends the buckets below (the (h-1)-th zero), preceded by pos - h
  // codes.
  const uint64_t h = c1 >> l;
  uint64_t pos = h == 0 ? 0 : SelectZero(h - 1) + 1;
  uint64_t i = pos - h;
  while (i < m) {
    uint64_t w = pos / 64;
    uint64_t bits = high_[w] & (~uint64_t{0} << (pos % 64));
    while (bits == 0) bits = high_[++w];  // i < m: a one lies ahead
    const uint64_t p = 64 * w + std::countr_zero(bits);
    // Code i sits at position high + i.
    const uint64_t value = ((p - i) << l) | Low(i);
    if (value >= c1) return value <= c2;
    ++i;
    pos = p + 1;
  }
  return false;
}

bool RangeFilterReader::MayContain(uint64_t lo, uint64_t hi) const {
  assert(lo <= hi);
  if (!info_.known) return true;
  if (info_.num_keys == 0) return false;
  const uint64_t length = info_.block_length;
  const uint64_t universe = info_.universe;
  const uint64_t first = lo / length, last = hi / length;
  if (last - first >= kMaxBlocksSearched) return true;
  for (uint64_t block = first; block <= last; ++block) {
    // The part of [lo, hi] inside this block; no overflow: block * length
    // <= hi, and a block before the last ends before hi.
    const uint64_t s = block == first ? lo : block * length;
    const uint64_t e = block == last ? hi : block * length + (length - 1);
    if (e - s >= universe - 1) return true;  // covers every code
    const uint64_t c1 =
        (HashBlock(block, info_.seed, universe) + s % universe) % universe;
    const uint64_t c2 = c1 + (e - s);
    if (c2 < universe) {
      if (AnyCodeIn(c1, c2)) return true;
    } else if (AnyCodeIn(c1, universe - 1) || AnyCodeIn(0, c2 - universe)) {
      return true;
    }
  }
  return false;
}

}  // namespace sift
