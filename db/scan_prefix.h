#ifndef SIFT_DB_SCAN_PREFIX_H_
#define SIFT_DB_SCAN_PREFIX_H_

// When an iteration is confined to the keys of one prefix, so that tables
// whose prefix filter rules the prefix out can be left out of it
// (doc/filters.md, "Prefix filters").

#include <optional>
#include <string>
#include <string_view>

#include "sift/options.h"
#include "sift/prefix_extractor.h"

namespace sift {

// The smallest key after every key that starts with `prefix` (bytewise):
// prefix without its trailing 0xff bytes, last byte incremented. std::nullopt
// when prefix is empty or all 0xff: then every key at or after prefix starts
// with it.
std::optional<std::string> PrefixSuccessor(std::string_view prefix);

// The prefix shared by every key inside options' iteration bounds, if the
// bounds confine them to one prefix of `extractor`: the lower bound is in
// the domain, and the upper bound is at or before PrefixSuccessor of its
// prefix (or there is none). By the prefix rules (PrefixExtractor) every key
// in such bounds is in the domain with that prefix. A view into
// *options.iterate_lower_bound. std::nullopt if `extractor` is null or the
// bounds are not so confined.
std::optional<std::string_view> ScanPrefix(const ReadOptions& options,
                                           const PrefixExtractor* extractor);

}  // namespace sift

#endif  // SIFT_DB_SCAN_PREFIX_H_
