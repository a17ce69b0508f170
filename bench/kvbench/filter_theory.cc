#include "bench/kvbench/filter_theory.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "filter/bloom_math.h"
#include "filter/filter.h"

namespace sift::bench {

absl::StatusOr<FilterShape> ShapeOfFilter(FilterKind kind,
                                          double bits_per_key) {
  std::unique_ptr<FilterBuilder> builder =
      FilterBuilder::Make(kind, bits_per_key);
  // Enough keys that rounding the array up to whole cache lines is noise.
  constexpr int kSampleKeys = 100000;
  for (int i = 0; i < kSampleKeys; ++i) {
    builder->AddKey(absl::StrCat("theory-sample-", i));
  }
  const std::string bytes = builder->Finish();
  absl::StatusOr<std::unique_ptr<FilterReader>> reader =
      FilterReader::Parse(bytes);
  if (!reader.ok()) return reader.status();
  const FilterInfo info = (*reader)->info();
  FilterShape shape;
  shape.num_probes = info.num_probes;
  shape.bits_per_key = info.bits_per_key();
  shape.theoretical_fpr = TheoreticalFpr(info);
  return shape;
}

}  // namespace sift::bench
