// Filter build and query cost per key, both layouts.

#include <memory>
#include <string>
#include <vector>

#include "bench/micro/micro_util.h"
#include "benchmark/benchmark.h"
#include "filter/filter.h"
#include "util/random.h"

namespace sift::bench {
namespace {

constexpr uint64_t kKeys = 100000;

FilterKind KindOf(const benchmark::State& state) {
  return state.range(0) == 0 ? FilterKind::kStandardBloom
                             : FilterKind::kBlockedBloom;
}

void BM_FilterBuild(benchmark::State& state) {
  const std::vector<std::string> keys = SortedKeys(kKeys);
  for (auto _ : state) {
    std::unique_ptr<FilterBuilder> b = FilterBuilder::Make(KindOf(state), 10);
    for (const std::string& k : keys) b->AddKey(k);
    std::string bytes = b->Finish();
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
  state.SetLabel(state.range(0) == 0 ? "standard" : "blocked");
}
BENCHMARK(BM_FilterBuild)->Arg(0)->Arg(1);

// Query a hot filter (fits in cache) with present (range(1) == 1) or absent
// keys.
void BM_FilterQuery(benchmark::State& state) {
  const std::vector<std::string> keys = SortedKeys(kKeys);
  std::unique_ptr<FilterBuilder> b = FilterBuilder::Make(KindOf(state), 10);
  for (const std::string& k : keys) b->AddKey(k);
  auto reader = FilterReader::Parse(b->Finish());
  if (!reader.ok()) {
    state.SkipWithError(reader.status().ToString().c_str());
    return;
  }
  const PackedKeys probes(state.range(1) == 1 ? keys : MissingKeys(kKeys));
  Random rnd(1);
  uint64_t hits = 0;
  for (auto _ : state) {
    hits += (*reader)->KeyMayMatch(probes[rnd.Uniform(kKeys)]);
  }
  benchmark::DoNotOptimize(hits);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(state.range(0) == 0 ? "standard" : "blocked") +
                 (state.range(1) == 1 ? ", present" : ", absent"));
}
BENCHMARK(BM_FilterQuery)->ArgsProduct({{0, 1}, {0, 1}});

}  // namespace
}  // namespace sift::bench
