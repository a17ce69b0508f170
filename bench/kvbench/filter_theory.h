#ifndef SIFT_BENCH_KVBENCH_FILTER_THEORY_H_
#define SIFT_BENCH_KVBENCH_FILTER_THEORY_H_

// The false-positive rate theory predicts for the filters sift writes, to
// print next to the rate kvbench measures.

#include <cstdint>

#include "absl/status/statusor.h"
#include "sift/options.h"

namespace sift::bench {

struct FilterShape {
  uint32_t num_probes = 0;  // k the filter builder chose
  double bits_per_key = 0;  // m / n of a built filter
  double theoretical_fpr = 0;
};

// Build a filter of `kind` at `bits_per_key` over a sample of keys with the
// engine's own builder, read back its k and m/n, and evaluate the theory for
// that layout with filter/bloom_math.h: (1 - e^(-k n / m))^k for the
// standard layout, the mixture over per-cache-line loads for the blocked one,
// 2^-w for a binary fuse filter with w-bit fingerprints.
absl::StatusOr<FilterShape> ShapeOfFilter(FilterKind kind, double bits_per_key);

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_FILTER_THEORY_H_
