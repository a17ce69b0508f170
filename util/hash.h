#ifndef SIFT_UTIL_HASH_H_
#define SIFT_UTIL_HASH_H_

// Hashing and checksums, all XXH3. One hash family keeps the engine small; XXH3
// is fast on short keys (filter probes, cache shards) and long blocks alike.

#include <cstdint>
#include <string_view>

namespace sift {

// 64-bit XXH3 of `data` with `seed`. Stable across platforms and releases:
// filters and checksums on disk depend on it.
uint64_t Hash64(std::string_view data, uint64_t seed = 0);

// The 32-bit checksum stored after blocks and log records: the low 32 bits of
// XXH3-64 (seed 0) over `data`.
uint32_t Checksum32(std::string_view data);

}  // namespace sift

#endif  // SIFT_UTIL_HASH_H_
