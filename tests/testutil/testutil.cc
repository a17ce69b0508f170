#include "tests/testutil/testutil.h"

#include <cstdio>

namespace sift::test {

std::string RandomKey(Random* rnd, int len) {
  // Printable keys keep failures readable; the alphabet is small enough to
  // produce shared prefixes that exercise prefix compression.
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string key(len, ' ');
  for (int i = 0; i < len; ++i) {
    key[i] = kAlphabet[rnd->Uniform(sizeof(kAlphabet) - 1)];
  }
  return key;
}

std::string RandomString(Random* rnd, int len) {
  std::string s(len, ' ');
  for (int i = 0; i < len; ++i) {
    s[i] = static_cast<char>(' ' + rnd->Uniform(95));
  }
  return s;
}

std::string NumberKey(uint64_t n, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*llu", width,
                static_cast<unsigned long long>(n));
  return buf;
}

int ReverseComparator::Compare(std::string_view a, std::string_view b) const {
  return -CompareBytes(a, b);
}

}  // namespace sift::test
