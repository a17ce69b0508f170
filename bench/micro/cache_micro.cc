// Block cache lookups: hits on a warm cache, from one and from two threads.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "util/cache.h"
#include "util/random.h"

namespace sift::bench {
namespace {

constexpr int kEntries = 4096;

void NoopDeleter(std::string_view, void*) {}

Cache* SharedCache() {
  static Cache* const cache = [] {
    Cache* c = NewLRUCache(8 << 20).release();
    for (int i = 0; i < kEntries; ++i) {
      c->Release(c->Insert(absl::StrCat("table-", i / 64, "-block-", i),
                           nullptr, 1024, &NoopDeleter));
    }
    return c;
  }();
  return cache;
}

void BM_CacheLookupHit(benchmark::State& state) {
  Cache* cache = SharedCache();
  std::vector<std::string> keys;
  for (int i = 0; i < kEntries; ++i) {
    keys.push_back(absl::StrCat("table-", i / 64, "-block-", i));
  }
  Random rnd(state.thread_index() + 1);
  for (auto _ : state) {
    Cache::Handle* h = cache->Lookup(keys[rnd.Uniform(kEntries)]);
    if (h != nullptr) cache->Release(h);
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheLookupHit)->Threads(1)->Threads(2);

void BM_CacheLookupMiss(benchmark::State& state) {
  Cache* cache = SharedCache();
  Random rnd(7);
  std::vector<std::string> keys;
  for (int i = 0; i < kEntries; ++i) keys.push_back(absl::StrCat("absent-", i));
  for (auto _ : state) {
    Cache::Handle* h = cache->Lookup(keys[rnd.Uniform(kEntries)]);
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheLookupMiss);

}  // namespace
}  // namespace sift::bench
