#ifndef SIFT_TOOLS_SIFT_STRESS_KEY_VALUE_H_
#define SIFT_TOOLS_SIFT_STRESS_KEY_VALUE_H_

// Keys and values of the soak. Keys are "k" plus a zero-padded index, so
// their bytewise order is the index order and a key range is an index range.
// A value is a pure function of (key index, version): "<index>.<version>."
// followed by filler derived from both. Reading a value back therefore tells
// which write produced it, and regenerating it detects any value that was
// never written (another key's value, a damaged one, a made-up version).

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace sift::stress {

// Debian's Abseil has its own string_view type (doc: design.md); StrCat
// takes std::string_view only through this.
inline absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }

std::string KeyOf(uint32_t index);
// The index of `key`; false if `key` is not a key of the soak.
bool ParseKey(std::string_view key, uint32_t* index);

// The value written by version `version` (>= 1) of key `index`. Lengths vary
// from a few bytes to about 2 KiB so that blocks hold a varying number of
// entries and some values span most of a small block.
std::string ValueOf(uint32_t index, uint64_t version);
// The version that wrote `value` to key `index`, if `value` is exactly what
// ValueOf gives for it; false otherwise.
bool ParseValue(uint32_t index, std::string_view value, uint64_t* version);

}  // namespace sift::stress

#endif  // SIFT_TOOLS_SIFT_STRESS_KEY_VALUE_H_
