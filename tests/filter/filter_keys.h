#ifndef SIFT_TESTS_FILTER_FILTER_KEYS_H_
#define SIFT_TESTS_FILTER_FILTER_KEYS_H_

// Key sequences for filter tests: key i of a family is a fixed function of i,
// distinct for distinct i, so "keys 0..n-1 added, keys n.. probed" gives
// disjoint present and absent sets without a lookup table, and generating the
// next key costs a few nanoseconds (the FPR tests probe millions of keys).

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "util/coding.h"

namespace sift::test {

enum class KeyFamily {
  kRandom,   // 8 bytes, a bijective mix of i: what a good hash sees anyway
  kDecimal,  // i as decimal text: "0", "1", ..., "999999"
  kPrefixed  // "user:" and i as at least 8 zero-padded digits: "user:00000001"
};

inline const char* KeyFamilyName(KeyFamily f) {
  switch (f) {
    case KeyFamily::kRandom:
      return "random";
    case KeyFamily::kDecimal:
      return "decimal";
    case KeyFamily::kPrefixed:
      return "prefixed";
  }
  return "?";
}

// Keys first, first+1, ... of one family.
class KeySequence {
 public:
  KeySequence(KeyFamily family, uint64_t first)
      : family_(family), next_(first) {
    if (family_ == KeyFamily::kRandom) return;
    char buf[48];
    const int len =
        std::snprintf(buf, sizeof(buf),
                      family_ == KeyFamily::kDecimal ? "%llu" : "user:%08llu",
                      static_cast<unsigned long long>(first));
    text_.assign(buf, len);
    digits_begin_ = family_ == KeyFamily::kDecimal ? 0 : 5;
  }

  // The next key; the view is valid until the following call.
  std::string_view Next() {
    const uint64_t i = next_++;
    if (family_ == KeyFamily::kRandom) {
      EncodeFixed64(raw_, Mix(i));
      return std::string_view(raw_, sizeof(raw_));
    }
    if (!first_call_) Increment();
    first_call_ = false;
    return text_;
  }

 private:
  // The murmur3 64-bit finalizer: a bijection, so distinct i give distinct
  // keys.
  static uint64_t Mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
  }

  // Add one to the decimal digits in place, growing by a digit on overflow.
  void Increment() {
    size_t pos = text_.size();
    while (pos > digits_begin_) {
      --pos;
      if (text_[pos] != '9') {
        ++text_[pos];
        return;
      }
      text_[pos] = '0';
    }
    text_.insert(text_.begin() + digits_begin_, '1');
  }

  const KeyFamily family_;
  uint64_t next_;
  char raw_[8] = {};
  std::string text_;
  size_t digits_begin_ = 0;
  bool first_call_ = true;
};

}  // namespace sift::test

#endif  // SIFT_TESTS_FILTER_FILTER_KEYS_H_
