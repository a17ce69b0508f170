// Table benchmark: point lookups and seeks on one table, with the data blocks
// in the block cache and without a block cache (one pread per block).
//
//   table_bench [--entries=N] [benchmark flags]
//
// The table (default 200,000 entries, 16-byte keys, 100-byte values, Snappy,
// blocked Bloom filter at 10 bits/key, 4 KiB blocks) is written once to a
// temporary directory through the POSIX Env and removed at exit. Files are
// read with pread, so "not cached" means a read from the OS page cache: the
// cost of the read path, not of a disk. Counters per iteration: block_reads,
// cache_hits (from the table's ReadStats).

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "sift/env.h"
#include "sift/options.h"
#include "sift/read_stats.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "table/table_options.h"
#include "table/table_properties.h"
#include "util/cache.h"
#include "util/random.h"

namespace sift {
namespace {

int64_t g_entries = 200000;

std::string Key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%013llu",
                static_cast<unsigned long long>(i));
  return buf;
}

// One table on disk, opened twice: with a block cache big enough for all of
// it, and without one.
struct Fixture {
  std::string dir;
  std::string fname;
  std::unique_ptr<Cache> cache;
  std::unique_ptr<Table> cached;
  std::unique_ptr<Table> uncached;

  Fixture() {
    char tmpl[] = "/tmp/table_bench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) Die("mkdtemp failed");
    dir = tmpl;
    fname = dir + "/bench.sst";
    Env* env = Env::Default();
    TableOptions o;
    {
      auto file = env->NewWritableFile(fname);
      if (!file.ok()) Die(file.status().ToString());
      TableBuilder builder(o, file->get());
      Random rnd(42);
      std::string value(100, ' ');
      for (int64_t i = 0; i < g_entries; ++i) {
        // Values half random, half repeated: Snappy saves about a third.
        for (size_t j = 0; j < value.size(); ++j) {
          value[j] = j < 50 ? static_cast<char>('a' + rnd.Uniform(26)) : 'x';
        }
        builder.Add(Key(2 * i), value);  // odd numbers are absent keys
      }
      Check(builder.Finish());
      Check((*file)->Close());
    }
    cache = NewLRUCache(1ull << 30);
    cached = Open(o, cache.get());
    uncached = Open(o, nullptr);
    // Warm the cache with every block.
    auto it = cached->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    Check(it->status());
    const TableProperties& p = cached->properties();
    std::fprintf(stderr,
                 "table: %llu entries, %llu data blocks, %llu data bytes, "
                 "filter %zu bytes, index %zu bytes\n",
                 static_cast<unsigned long long>(p.num_entries),
                 static_cast<unsigned long long>(p.num_data_blocks),
                 static_cast<unsigned long long>(p.data_bytes),
                 cached->FilterMemoryUsage(), cached->IndexMemoryUsage());
  }

  ~Fixture() {
    cached.reset();
    uncached.reset();
    Env* env = Env::Default();
    (void)env->RemoveFile(fname);
    (void)env->RemoveDir(dir);
  }

  std::unique_ptr<Table> Open(const TableOptions& base, Cache* c) {
    TableOptions o = base;
    o.block_cache = c;
    Env* env = Env::Default();
    auto size = env->GetFileSize(fname);
    if (!size.ok()) Die(size.status().ToString());
    auto file = env->NewRandomAccessFile(fname);
    if (!file.ok()) Die(file.status().ToString());
    auto table = Table::Open(o, *std::move(file), *size, fname);
    if (!table.ok()) Die(table.status().ToString());
    return *std::move(table);
  }

  static void Check(const absl::Status& s) {
    if (!s.ok()) Die(s.ToString());
  }
  [[noreturn]] static void Die(const std::string& msg) {
    std::fprintf(stderr, "table_bench: %s\n", msg.c_str());
    std::exit(1);
  }
};

// Created in main after flag parsing, destroyed (removing the file) at exit.
std::unique_ptr<Fixture> g_fixture;

Fixture& TheFixture() { return *g_fixture; }

const Table& PickTable(const benchmark::State& state) {
  return state.range(0) != 0 ? *TheFixture().cached : *TheFixture().uncached;
}

void Report(benchmark::State& state, const ReadStats& stats) {
  state.counters["block_reads"] =
      benchmark::Counter(static_cast<double>(stats.block_reads),
                         benchmark::Counter::kAvgIterations);
  state.counters["cache_hits"] =
      benchmark::Counter(static_cast<double>(stats.block_cache_hits),
                         benchmark::Counter::kAvgIterations);
}

// Get of a present key (range(1) == 0) or of an absent key inside the key
// range (range(1) == 1, mostly answered by the filter).
void BM_Get(benchmark::State& state) {
  const Table& table = PickTable(state);
  const bool absent = state.range(1) != 0;
  Random rnd(7);
  ReadStats stats;
  const ReadOptions ro;
  for (auto _ : state) {
    const std::string key = Key(2 * rnd.Uniform(g_entries) + (absent ? 1 : 0));
    bool found = false;
    absl::Status s = table.Get(
        ro, key,
        [&](std::string_view k, std::string_view v) {
          found = k == key;
          benchmark::DoNotOptimize(v.data());
          return found;
        },
        &stats);
    if (!s.ok() || found == absent) {
      state.SkipWithError("wrong Get result");
      break;
    }
  }
  Report(state, stats);
}

// Seek an iterator (reused across seeks) to a random present key and read it.
void BM_Seek(benchmark::State& state) {
  const Table& table = PickTable(state);
  auto it = table.NewIterator(ReadOptions());
  Random rnd(9);
  for (auto _ : state) {
    const std::string key = Key(2 * rnd.Uniform(g_entries));
    it->Seek(key);
    if (!it->Valid() || it->key() != key) {
      state.SkipWithError("wrong Seek result");
      break;
    }
    benchmark::DoNotOptimize(it->value().data());
  }
}

void GetArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"cached", "absent"});
  for (int cached : {1, 0}) {
    for (int absent : {0, 1}) b->Args({cached, absent});
  }
}

BENCHMARK(BM_Get)->Apply(GetArgs);
BENCHMARK(BM_Seek)->ArgName("cached")->Arg(1)->Arg(0);

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--entries=", 10) == 0) {
      sift::g_entries = std::atoll(argv[i] + 10);
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      --i;
    }
  }
  if (sift::g_entries <= 0) {
    std::fprintf(stderr, "table_bench: --entries must be positive\n");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  sift::g_fixture = std::make_unique<sift::Fixture>();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  sift::g_fixture.reset();
  return 0;
}
