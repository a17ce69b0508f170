#include "bench/kvbench/keys.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/random.h"

namespace sift::bench {
namespace {

int DecimalDigits(uint64_t n) {
  int digits = 1;
  while (n >= 10) {
    n /= 10;
    ++digits;
  }
  return digits;
}

// A bijective 64-bit mixer (the SplitMix64 finalizer): spreads Zipfian ranks
// over the key space.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Multiply-shift range reduction: a uniform 64-bit value to [0, n).
uint64_t Reduce(uint64_t x, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * n) >> 64);
}

}  // namespace

KeySpace::KeySpace(uint64_t num, int key_size, KeyFormat format)
    : num_(num), key_size_(key_size), format_(format) {}

absl::Status KeySpace::Validate(uint64_t num, int key_size, KeyFormat format) {
  if (num == 0) return absl::InvalidArgumentError("--num must be at least 1");
  if (num > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError("--num must be at most 2^32");
  }
  if (format == KeyFormat::kBinary) {
    if (key_size < 8) {
      return absl::InvalidArgumentError(
          "binary keys need --key_size of at least 8");
    }
    return absl::OkStatus();
  }
  const int needed = DecimalDigits(2 * num + 1);
  if (key_size < needed) {
    return absl::InvalidArgumentError(
        absl::StrCat("--key_size ", key_size, " is too small for --num ", num,
                     ": keys need ", needed, " digits"));
  }
  return absl::OkStatus();
}

void KeySpace::FormatBinary(uint64_t value, char* out) const {
  std::memset(out, 0, static_cast<size_t>(key_size_ - 8));
  char* p = out + key_size_;
  for (int b = 0; b < 8; ++b, value >>= 8) *--p = static_cast<char>(value);
}

void KeySpace::EmptyRange(uint64_t i, uint64_t length, char* lower,
                          char* upper) const {
  const uint64_t first = ((2 * i) << kBinaryShift) + 1;
  FormatBinary(first, lower);
  FormatBinary(first + length, upper);
}

void KeySpace::Format(uint64_t n, char* out) const {
  if (format_ == KeyFormat::kBinary)
    return FormatBinary(n << kBinaryShift, out);
  // Right-aligned decimal, zero-padded on the left to key_size_ bytes. A key
  // is made per operation, inside the timed loops: two digits per step, so
  // the chain of divisions is half as long.
  static constexpr char kPairs[] =
      "0001020304050607080910111213141516171819"
      "2021222324252627282930313233343536373839"
      "4041424344454647484950515253545556575859"
      "6061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char* p = out + key_size_;
  while (p - out >= 2 && n >= 10) {
    const uint64_t pair = n % 100;
    n /= 100;
    p -= 2;
    std::memcpy(p, kPairs + 2 * pair, 2);
  }
  if (p > out && n != 0) *--p = static_cast<char>('0' + n % 10);
  std::memset(out, '0', static_cast<size_t>(p - out));
}

std::string KeySpace::PresentKey(uint64_t i) const {
  std::string key(key_size_, '\0');
  Present(i, key.data());
  return key;
}

std::string KeySpace::MissingKey(uint64_t i) const {
  std::string key(key_size_, '\0');
  Missing(i, key.data());
  return key;
}

ValueSource::ValueSource(int value_size, uint64_t seed, bool compressible)
    : value_size_(value_size) {
  // At least 1 MiB, and room for any value to start anywhere in the first MiB.
  const size_t size = (size_t{1} << 20) + static_cast<size_t>(value_size);
  Random rnd(seed ^ 0x76616c7565ULL);
  data_.reserve(size + 64);
  while (data_.size() < size) {
    char run[32];
    for (char& c : run) c = static_cast<char>(rnd.Next() & 0xff);
    data_.append(run, sizeof(run));
    if (compressible) {
      data_.append(run, sizeof(run));
    }
  }
}

std::string_view ValueSource::Get(uint64_t n) const {
  // Start offsets step by a prime so consecutive values differ.
  const size_t offset = static_cast<size_t>((n * 997) % (size_t{1} << 20));
  return std::string_view(data_).substr(offset, value_size_);
}

RandomOrder::RandomOrder(uint64_t num, uint64_t seed) : num_(num) {
  int bits = 1;
  while (bits < 64 && (uint64_t{1} << bits) < num) ++bits;
  half_bits_ = (bits + 1) / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  Random rnd(seed ^ 0x6f72646572ULL);
  for (uint64_t& k : round_keys_) k = rnd.Next64();
}

uint64_t RandomOrder::Encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_;
  uint64_t right = x & half_mask_;
  for (const uint64_t k : round_keys_) {
    const uint64_t next = left ^ (Mix64(right ^ k) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t RandomOrder::At(uint64_t i) const {
  uint64_t x = Encrypt(i);
  while (x >= num_) x = Encrypt(x);
  return x;
}

ZipfianGenerator::ZipfianGenerator(uint64_t n, double theta)
    : n_(n), theta_(theta) {
  double zeta = 0;
  for (uint64_t i = 1; i <= n; ++i) zeta += 1.0 / std::pow(double(i), theta);
  zetan_ = zeta;
  const double zeta2 = 1.0 + 1.0 / std::pow(2.0, theta);
  alpha_ = 1.0 / (1.0 - theta);
  eta_ =
      (1.0 - std::pow(2.0 / double(n), 1.0 - theta)) / (1.0 - zeta2 / zetan_);
  half_pow_theta_ = 1.0 + std::pow(0.5, theta);
}

uint64_t ZipfianGenerator::Next(double u) const {
  const double uz = u * zetan_;
  uint64_t rank;
  if (uz < 1.0) {
    rank = 0;
  } else if (uz < half_pow_theta_) {
    rank = 1;
  } else {
    rank = static_cast<uint64_t>(double(n_) *
                                 std::pow(eta_ * u - eta_ + 1.0, alpha_));
    if (rank >= n_) rank = n_ - 1;
  }
  return IndexOfRank(rank);
}

uint64_t ZipfianGenerator::IndexOfRank(uint64_t rank) const {
  return Reduce(Mix64(rank + 0x9e3779b97f4a7c15ULL), n_);
}

}  // namespace sift::bench
