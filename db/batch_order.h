#ifndef SIFT_DB_BATCH_ORDER_H_
#define SIFT_DB_BATCH_ORDER_H_

// The order in which DB::MultiGet walks a batch of keys.

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "util/comparator.h"

namespace sift {

// The indexes of `keys` in `ucmp`'s order (equal keys in any order), as
// Version::MultiGet requires: the lookups of one table are a run, and a
// level is walked once.
std::vector<uint32_t> BatchOrder(const Comparator* ucmp,
                                 absl::Span<const std::string_view> keys);

}  // namespace sift

#endif  // SIFT_DB_BATCH_ORDER_H_
