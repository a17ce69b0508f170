#ifndef SIFT_UTIL_CODING_H_
#define SIFT_UTIL_CODING_H_

// Fixed-width little-endian and varint encodings used by every on-disk format.
// Put* append to a string; Get* consume from the front of a string_view and
// return false (leaving the input unspecified) if it is truncated or malformed.
// Decode* read from a buffer the caller has already bounds-checked.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sift {

// On a little-endian machine the encoding is the value's own bytes: one
// store. (GCC does not merge the byte loop of a 64-bit value into a store; it
// rebuilds the value a byte at a time, about 30 instructions per call on the
// lookup key every point read builds.)
inline void EncodeFixed32(char* dst, uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, &v, sizeof(v));
  } else {
    for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>(v >> (8 * i));
  }
}
inline void EncodeFixed64(char* dst, uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, &v, sizeof(v));
  } else {
    for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>(v >> (8 * i));
  }
}
inline uint32_t DecodeFixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) |
         (static_cast<uint32_t>(u[2]) << 16) |
         (static_cast<uint32_t>(u[3]) << 24);
}
inline uint64_t DecodeFixed64(const char* p) {
  return static_cast<uint64_t>(DecodeFixed32(p)) |
         (static_cast<uint64_t>(DecodeFixed32(p + 4)) << 32);
}

// The 8 bytes of `bytes` from `offset` as a big-endian integer, bytes past
// the end counting as zero: two such windows compare as their bytes do
// bytewise (used to order keys by one integer compare). When fewer than 8
// bytes remain, the load still reads 8 bytes, ending at the end of `bytes`,
// and shifts: a variable-length copy into a stack word would stall on the
// reload (store forwarding fails), and this runs once per key per level on
// the read path. REQUIRES: offset <= bytes.size()
inline uint64_t BigEndianWindow(std::string_view bytes, size_t offset) {
  const size_t n = bytes.size() - offset;
  auto load = [](const char* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    if constexpr (std::endian::native == std::endian::little) {
      v = __builtin_bswap64(v);
    }
    return v;
  };
  if (n >= 8) return load(bytes.data() + offset);
  if (n == 0) return 0;
  if (bytes.size() >= 8) {
    return load(bytes.data() + bytes.size() - 8) << (8 * (8 - n));
  }
  uint64_t v = 0;  // a string shorter than 8 bytes: byte by byte
  for (size_t i = 0; i < n; ++i) {
    v |= uint64_t{static_cast<unsigned char>(bytes[offset + i])}
         << (56 - 8 * i);
  }
  return v;
}

void PutFixed32(std::string* dst, uint32_t v);
void PutFixed64(std::string* dst, uint64_t v);
void PutVarint32(std::string* dst, uint32_t v);
void PutVarint64(std::string* dst, uint64_t v);
// Varint32 length, then the bytes.
void PutLengthPrefixed(std::string* dst, std::string_view value);

// Bytes PutVarint64 would write for `v` (1..10).
int VarintLength(uint64_t v);

// Write a varint at `dst` (room for 5 / 10 bytes) and return the byte after it.
char* EncodeVarint32(char* dst, uint32_t v);
char* EncodeVarint64(char* dst, uint64_t v);

bool GetFixed32(std::string_view* input, uint32_t* value);
bool GetFixed64(std::string_view* input, uint64_t* value);
// Reject varints that are truncated, longer than the type allows, or overflow.
bool GetVarint32(std::string_view* input, uint32_t* value);
bool GetVarint64(std::string_view* input, uint64_t* value);
// The result views bytes of *input.
bool GetLengthPrefixed(std::string_view* input, std::string_view* result);

// Decode a varint in [p, limit); nullptr if truncated or malformed, else the
// byte after it.
const char* GetVarint32PtrFallback(const char* p, const char* limit,
                                   uint32_t* value);
// One-byte varints (every key and value length under 128) decode inline:
// memtable and block searches decode a length on every comparison.
inline const char* GetVarint32Ptr(const char* p, const char* limit,
                                  uint32_t* value) {
  if (p < limit) {
    const uint32_t byte = *reinterpret_cast<const unsigned char*>(p);
    if ((byte & 0x80) == 0) {
      *value = byte;
      return p + 1;
    }
  }
  return GetVarint32PtrFallback(p, limit, value);
}
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value);

}  // namespace sift

#endif  // SIFT_UTIL_CODING_H_
