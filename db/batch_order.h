#ifndef SIFT_DB_BATCH_ORDER_H_
#define SIFT_DB_BATCH_ORDER_H_

// The order in which DB::MultiGet walks a batch of keys.

#include <cstdint>
#include <string_view>

#include "absl/types/span.h"
#include "util/comparator.h"

namespace sift {

// Sets `order` to the indexes of `keys` in `ucmp`'s order (equal keys in any
// order), as Version::MultiGet requires: the lookups of one table are a run,
// and a level is walked once. The caller provides the space, so that a batch
// can keep it on the stack. REQUIRES: order.size() == keys.size()
void BatchOrder(const Comparator* ucmp, absl::Span<const std::string_view> keys,
                absl::Span<uint32_t> order);

}  // namespace sift

#endif  // SIFT_DB_BATCH_ORDER_H_
