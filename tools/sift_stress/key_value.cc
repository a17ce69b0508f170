#include "tools/sift_stress/key_value.h"

#include <charconv>
#include <cstdio>

#include "tools/sift_stress/random.h"

namespace sift::stress {

std::string KeyOf(uint32_t index) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%07u", index);
  return buf;
}

bool ParseKey(std::string_view key, uint32_t* index) {
  if (key.size() != 8 || key[0] != 'k') return false;
  const char* end = key.data() + key.size();
  auto [p, ec] = std::from_chars(key.data() + 1, end, *index);
  return ec == std::errc() && p == end;
}

std::string ValueOf(uint32_t index, uint64_t version) {
  std::string v = std::to_string(index) + "." + std::to_string(version) + ".";
  Rng rng(Mix64((uint64_t{index} << 40) ^ version));
  // Mostly short values, some long ones (a tenth up to 2 KiB).
  const size_t len = rng.OneIn(10) ? rng.Range(100, 2048) : rng.Range(0, 100);
  // Compressible runs with random letters between them, so Snappy sometimes
  // helps and sometimes does not.
  while (v.size() < len + 8) {
    const char c = static_cast<char>('a' + rng.Uniform(26));
    v.append(rng.Uniform(8) + 1, c);
  }
  return v;
}

bool ParseValue(uint32_t index, std::string_view value, uint64_t* version) {
  const size_t dot1 = value.find('.');
  if (dot1 == std::string_view::npos) return false;
  const size_t dot2 = value.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return false;
  uint64_t v = 0;
  auto [p, ec] =
      std::from_chars(value.data() + dot1 + 1, value.data() + dot2, v);
  if (ec != std::errc() || p != value.data() + dot2 || v == 0) return false;
  if (ValueOf(index, v) != value) return false;
  *version = v;
  return true;
}

}  // namespace sift::stress
