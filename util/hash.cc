#include "util/hash.h"

// XXH3 compiled in rather than called through the shared library: a filter
// probe hashes a short key, where the call costs about as much as the hash.
// Same algorithm, same values.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sift {

uint64_t Hash64(std::string_view data, uint64_t seed) {
  return XXH3_64bits_withSeed(data.data(), data.size(), seed);
}

uint32_t Checksum32(std::string_view data) {
  return static_cast<uint32_t>(XXH3_64bits(data.data(), data.size()));
}

}  // namespace sift
