#include "util/hash.h"

#include <xxhash.h>

namespace sift {

uint64_t Hash64(std::string_view data, uint64_t seed) {
  return XXH3_64bits_withSeed(data.data(), data.size(), seed);
}

uint32_t Checksum32(std::string_view data) {
  return static_cast<uint32_t>(XXH3_64bits(data.data(), data.size()));
}

}  // namespace sift
