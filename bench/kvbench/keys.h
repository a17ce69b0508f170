#ifndef SIFT_BENCH_KVBENCH_KEYS_H_
#define SIFT_BENCH_KVBENCH_KEYS_H_

// The data every benchmark in bench/ writes and reads: a key space, value
// bytes and a skewed (Zipfian) index generator. kvbench and peer_bench share
// them so every engine sees the same keys and values.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sift::bench {

// Key i of a key space of `num` keys (0 <= i < num) is the decimal number 2*i,
// zero-padded to `key_size` bytes. Present keys are even numbers; the absent
// probes of readmissing are the odd numbers 2*i+1, interleaved with the
// present keys inside the same key range, so no table can be skipped by a
// key-range check and only its filter can rule a probe out. Zero padding keeps
// bytewise order equal to numeric order.
//
// The binary format instead writes the number n (2*i or 2*i+1) as the
// integer n * 2^16, 8 bytes big-endian, right-aligned and zero-padded on the
// left to key_size bytes: the same order, with 2^16 - 1 absent integers
// after each key (EmptyRange) for range-filter workloads, whose ranges are
// then runs of consecutive integers.
class KeySpace {
 public:
  enum class KeyFormat { kDecimal, kBinary };
  // Absent integers after each key in the binary format: 2^kBinaryShift - 1.
  static constexpr int kBinaryShift = 16;

  // REQUIRES: Validate(num, key_size, format).ok()
  KeySpace(uint64_t num, int key_size, KeyFormat format = KeyFormat::kDecimal);

  // OK if `key_size` bytes can hold every key (present and absent) of a key
  // space of `num` keys.
  static absl::Status Validate(uint64_t num, int key_size,
                               KeyFormat format = KeyFormat::kDecimal);

  bool binary() const { return format_ == KeyFormat::kBinary; }
  // The `length` consecutive integers right after present key i, as the
  // bounds [lower, upper) (key_size bytes each). None is a key.
  // REQUIRES: binary(), 1 <= length < 2^kBinaryShift.
  void EmptyRange(uint64_t i, uint64_t length, char* lower, char* upper) const;

  uint64_t num() const { return num_; }
  int key_size() const { return key_size_; }

  // Write key i (present: 2*i, absent: 2*i+1) into out[0, key_size).
  void Present(uint64_t i, char* out) const { Format(2 * i, out); }
  void Missing(uint64_t i, char* out) const { Format(2 * i + 1, out); }
  std::string PresentKey(uint64_t i) const;
  std::string MissingKey(uint64_t i) const;

 private:
  void Format(uint64_t n, char* out) const;
  void FormatBinary(uint64_t value, char* out) const;

  uint64_t num_;
  int key_size_;
  KeyFormat format_;
};

// Value bytes: slices of a fixed pseudo-random buffer in which each 32-byte
// run of random bytes is followed by a copy of itself, so a value compresses
// to about half with Snappy (as real data tends to) and costs nothing to make;
// or, not `compressible`, random bytes throughout (already compressed or
// encrypted data, which Snappy cannot shrink).
//
// Thread safety: const methods are safe for concurrent use.
class ValueSource {
 public:
  ValueSource(int value_size, uint64_t seed, bool compressible = true);
  // The value for write number `n` (any number; different n, different slice).
  // The view lives as long as this object.
  std::string_view Get(uint64_t n) const;
  int value_size() const { return value_size_; }

 private:
  int value_size_;
  std::string data_;
};

// A random order of 0..num-1 that costs no memory per key: At(i) is a keyed
// bijection of [0, num), so fillrandom writes every key exactly once, in
// random order, and a 100M-key fill does not hold a 400 MB permutation array
// (which would dwarf the engine's own memory in the peak-RSS figure).
//
// The bijection is a four-round Feistel network on the smallest domain of
// 2^(2h) values that holds num, walked in cycles until it lands inside
// [0, num): the network permutes its domain, so the walk permutes [0, num).
// The domain is under 4 * num, so a walk takes under four rounds on average.
//
// Thread safety: At is const; one object serves many threads.
class RandomOrder {
 public:
  // REQUIRES: num > 0
  RandomOrder(uint64_t num, uint64_t seed);
  // The i-th element of the order. REQUIRES: i < num()
  uint64_t At(uint64_t i) const;
  uint64_t num() const { return num_; }

 private:
  uint64_t Encrypt(uint64_t x) const;

  uint64_t num_;
  int half_bits_;
  uint64_t half_mask_;
  uint64_t round_keys_[4];
};

// Indexes in [0, n) drawn from a Zipfian distribution with exponent `theta`
// (0.99 as in YCSB), using the closed-form approximation of Gray et al.
// ("Quickly generating billion-record synthetic databases", 1994). Rank r is
// mapped to a key index by a hash, so the hot keys are spread over the whole
// key space (and over many tables) rather than clustered at the start.
//
// Thread safety: Next is const and takes the uniform draw as input, so one
// generator serves many threads, each with its own Random.
class ZipfianGenerator {
 public:
  ZipfianGenerator(uint64_t n, double theta);
  // `u` uniform in [0, 1). Returns an index in [0, n).
  uint64_t Next(double u) const;
  // The most popular rank's index (for tests of the skew).
  uint64_t IndexOfRank(uint64_t rank) const;

 private:
  uint64_t n_;
  double theta_;
  double zetan_;
  double alpha_;
  double eta_;
  double half_pow_theta_;
};

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_KEYS_H_
