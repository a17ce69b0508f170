// Seeking in one data block, and point lookups in a whole table (held in an
// in-memory Env, block cache warm) with the filter ruling out absent keys.

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/micro/micro_util.h"
#include "benchmark/benchmark.h"
#include "sift/env.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "util/cache.h"
#include "util/comparator.h"
#include "util/random.h"

namespace sift::bench {
namespace {

void BM_BlockSeek(benchmark::State& state) {
  // A full 4 KiB block of 16-byte keys and 100-byte values, restart every 16.
  const std::vector<std::string> keys = SortedKeys(4096);
  const std::string value(100, 'v');
  BlockBuilder builder(16);
  size_t n = 0;
  while (n < keys.size() && builder.CurrentSizeEstimate() < 4096) {
    builder.Add(keys[n++], value);
  }
  const std::string_view raw = builder.Finish();
  BlockContents contents;
  contents.data = std::make_unique<char[]>(raw.size());
  std::memcpy(contents.data.get(), raw.data(), raw.size());
  contents.size = raw.size();
  auto block = Block::Create(std::move(contents), 0, "bench");
  if (!block.ok()) {
    state.SkipWithError(block.status().ToString().c_str());
    return;
  }
  std::unique_ptr<BlockIterator> it =
      (*block)->NewIterator(BytewiseComparator(), nullptr);
  const PackedKeys probes(keys);
  Random rnd(1);
  for (auto _ : state) {
    it->Seek(probes[rnd.Uniform(n)]);
    benchmark::DoNotOptimize(it->Valid());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::to_string(n) + " entries");
}
BENCHMARK(BM_BlockSeek);

// One table of 16,000 keys (about 2 MiB, as sift's tables), opened once.
struct TableFixture {
  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
  std::unique_ptr<Cache> cache = NewLRUCache(8 << 20);
  std::unique_ptr<Table> table;
  std::vector<std::string> keys = SortedKeys(16000);
  PackedKeys present_probes{keys};
  PackedKeys missing_probes{MissingKeys(16000)};
  absl::Status status;

  TableFixture() {
    TableOptions options;
    options.compression = Compression::kNone;
    options.block_cache = cache.get();
    auto file = env->NewWritableFile("/table");
    if (!file.ok()) {
      status = file.status();
      return;
    }
    TableBuilder builder(options, file->get());
    const std::string value(100, 'v');
    for (const std::string& k : keys) builder.Add(k, value);
    status = builder.Finish();
    if (status.ok()) status = (*file)->Close();
    if (!status.ok()) return;
    const uint64_t size = builder.FileSize();
    auto raf = env->NewRandomAccessFile("/table");
    if (!raf.ok()) {
      status = raf.status();
      return;
    }
    auto opened = Table::Open(options, *std::move(raf), size, "/table");
    if (!opened.ok()) {
      status = opened.status();
      return;
    }
    table = *std::move(opened);
  }
};

void BM_TableGet(benchmark::State& state) {
  static TableFixture* const fx = new TableFixture();
  if (!fx->status.ok()) {
    state.SkipWithError(fx->status.ToString().c_str());
    return;
  }
  const bool present = state.range(0) == 1;
  const PackedKeys& probes = present ? fx->present_probes : fx->missing_probes;
  Random rnd(3);
  ReadStats stats;
  uint64_t found = 0;
  for (auto _ : state) {
    const std::string_view key = probes[rnd.Uniform(probes.size())];
    absl::Status s = fx->table->Get(
        ReadOptions(), key,
        [&](std::string_view k, std::string_view) {
          const bool hit = k == key;
          found += hit;
          return hit;
        },
        &stats);
    benchmark::DoNotOptimize(s.ok());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["blocks_read_per_get"] =
      double(stats.block_reads) / double(state.iterations());
  state.SetLabel(present ? "present keys" : "absent keys");
}
BENCHMARK(BM_TableGet)->Arg(1)->Arg(0);

}  // namespace
}  // namespace sift::bench
