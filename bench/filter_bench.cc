// Filter benchmark: false-positive rates against theory, then timings.
//
//   filter_bench [--no_fpr_table] [--cold_filters=N] [--measure_blocked_k]
//                [Google Benchmark flags, e.g. --benchmark_repetitions=5]
//
// 1. A table of measured vs theoretical false-positive rates for bits/key
//    2..24, standard and blocked layouts (1,000,000 keys per filter; enough
//    absent probes for about 2,000 false positives per point: at least 1e7
//    and at most 2e8 probes), and one for the binary fuse filter per
//    fingerprint width 1..20 (theory 2^-w; bits/key as built).
// 2. Google Benchmark timings for the three kinds at 10 bits/key, and for the
//    3-wise binary fuse layout of format version 1 (binary_fuse_v1) next to
//    the 4-wise one writers use: build ns/key (binary fuse also at 18,000
//    keys, a 2 MiB table's); query ns on one hot filter
//    for present and absent keys; query ns on N cold filters (default 1,024 of
//    256 KiB) totalling 256 MiB: a random filter per query, and a fence after
//    each query so misses do not overlap (ColdQueryOverlapped drops the fence
//    to show the throughput of independent queries). Next to it, the latency
//    of one random memory read over a 256 MiB array (pointer chasing, same
//    fence) measured in the same run.
// 3. A summary against the targets of the filter work item.
//
// --measure_blocked_k reruns the experiment behind the blocked layout's probe
// table in filter/bloom_math.cc and exits.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "filter/aligned_words.h"
#include "filter/bloom_math.h"
#include "filter/bloom_probe.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "filter/fuse_math.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/random.h"

namespace sift {
namespace {

// ---- keys ---------------------------------------------------------------

// Key i as 8 bytes: a bijective mix of i, so distinct i give distinct keys.
// `salt` separates key sets (present keys of filter A vs of filter B).
uint64_t MixIndex(uint64_t i, uint64_t salt) {
  uint64_t x = i ^ (salt * 0x9e3779b97f4a7c15ULL);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Fixed-width keys in one buffer, "user:00000001" style, so a sequential walk
// over them costs no pointer chasing.
class KeyBuffer {
 public:
  static constexpr size_t kWidth = 13;
  KeyBuffer(uint64_t first, uint64_t count) : count_(count) {
    data_.resize(count * kWidth);
    char tmp[32];
    for (uint64_t i = 0; i < count; ++i) {
      std::snprintf(tmp, sizeof(tmp), "user:%08llu",
                    static_cast<unsigned long long>(first + i));
      std::memcpy(&data_[i * kWidth], tmp, kWidth);
    }
  }
  std::string_view operator[](uint64_t i) const {
    return std::string_view(&data_[i * kWidth], kWidth);
  }
  uint64_t size() const { return count_; }

 private:
  uint64_t count_;
  std::vector<char> data_;
};

std::unique_ptr<FilterReader> ParseOrDie(const std::string& serialized) {
  absl::StatusOr<std::unique_ptr<FilterReader>> r =
      FilterReader::Parse(serialized);
  if (!r.ok()) {
    std::fprintf(stderr, "parse failed: %s\n", r.status().ToString().c_str());
    std::abort();
  }
  return std::move(*r);
}

// A layout under test: a filter kind and, for binary fuse, the format version
// written (1: the 3-wise layout older tables hold, for comparison).
struct Layout {
  FilterKind kind;
  uint32_t fuse_version = kFuseFormatVersion;

  // Where its cold filters are kept: the FilterKind value, 4 for fuse v1.
  int index() const {
    return kind == FilterKind::kBinaryFuse && fuse_version == 1
               ? 4
               : static_cast<int>(kind);
  }
  std::string name() const {
    switch (kind) {
      case FilterKind::kStandardBloom:
        return "standard";
      case FilterKind::kBlockedBloom:
        return "blocked";
      case FilterKind::kBinaryFuse:
        return fuse_version == 1 ? "binary_fuse_v1" : "binary_fuse";
    }
    return "?";
  }
  std::unique_ptr<FilterBuilder> MakeBuilder(
      double bits_per_key, uint64_t seed = kDefaultFilterSeed) const {
    if (kind == FilterKind::kBinaryFuse) {
      return NewFuseFilterBuilderForBudget(bits_per_key, seed, fuse_version);
    }
    return FilterBuilder::Make(kind, bits_per_key, seed);
  }
};

// ---- 1. false-positive table --------------------------------------------

struct FprPoint {
  uint32_t k;
  double measured, theory;
  uint64_t fps, probes;
};

// `builder` is given n keys, then probed with absent ones.
FprPoint MeasureFpr(std::unique_ptr<FilterBuilder> builder, uint64_t n,
                    double* bits_per_key = nullptr) {
  char key[8];
  for (uint64_t i = 0; i < n; ++i) {
    EncodeFixed64(key, MixIndex(i, 1));
    builder->AddKey(std::string_view(key, 8));
  }
  std::unique_ptr<FilterReader> reader = ParseOrDie(builder->Finish());
  const FilterInfo info = reader->info();
  if (bits_per_key != nullptr) *bits_per_key = info.bits_per_key();
  FprPoint p;
  p.k = info.num_probes;
  p.theory = TheoreticalFpr(info);
  p.probes = std::clamp<uint64_t>(static_cast<uint64_t>(2000 / p.theory),
                                  10000000, 200000000);
  p.fps = 0;
  for (uint64_t i = 0; i < p.probes; ++i) {
    EncodeFixed64(key, MixIndex(n + i, 1));  // never added
    p.fps += reader->KeyMayMatch(std::string_view(key, 8));
  }
  p.measured = static_cast<double>(p.fps) / p.probes;
  return p;
}

std::map<std::pair<int, int>, FprPoint> g_fpr;  // (kind, bpk) -> point

void PrintFprTable() {
  const uint64_t n = 1000000;
  std::printf(
      "False-positive rate, measured vs theory (n = %llu keys per filter)\n",
      static_cast<unsigned long long>(n));
  std::printf("%4s | %2s %10s %10s %6s %8s | %2s %10s %10s %6s %8s\n", "bpk",
              "k", "standard", "theory", "ratio", "FPs", "k", "blocked",
              "theory", "ratio", "FPs");
  for (int bpk = 2; bpk <= 24; ++bpk) {
    FprPoint s =
        MeasureFpr(FilterBuilder::Make(FilterKind::kStandardBloom, bpk), n);
    FprPoint b =
        MeasureFpr(FilterBuilder::Make(FilterKind::kBlockedBloom, bpk), n);
    g_fpr[{1, bpk}] = s;
    g_fpr[{2, bpk}] = b;
    std::printf(
        "%4d | %2u %9.5f%% %9.5f%% %6.3f %8llu | %2u %9.5f%% %9.5f%% %6.3f "
        "%8llu\n",
        bpk, s.k, 100 * s.measured, 100 * s.theory, s.measured / s.theory,
        static_cast<unsigned long long>(s.fps), b.k, 100 * b.measured,
        100 * b.theory, b.measured / b.theory,
        static_cast<unsigned long long>(b.fps));
    std::fflush(stdout);
  }
  std::printf("\n");
}

std::map<uint32_t, FprPoint> g_fuse_fpr;  // fingerprint bits -> point

void PrintFuseFprTable() {
  const uint64_t n = 1000000;
  std::printf(
      "Binary fuse false-positive rate, measured vs 2^-w (n = %llu keys)\n",
      static_cast<unsigned long long>(n));
  std::printf("%3s %9s %11s %11s %6s %8s\n", "w", "bits/key", "measured",
              "theory", "ratio", "FPs");
  for (uint32_t w = 1; w <= 20; ++w) {
    double bpk = 0;
    const FprPoint p = MeasureFpr(
        FilterBuilder::MakeForFpr(FilterKind::kBinaryFuse, n, FuseFpr(w)), n,
        &bpk);
    g_fuse_fpr[w] = p;
    std::printf("%3u %9.3f %10.6f%% %10.6f%% %6.3f %8llu\n", w, bpk,
                100 * p.measured, 100 * p.theory, p.measured / p.theory,
                static_cast<unsigned long long>(p.fps));
    std::fflush(stdout);
  }
  std::printf("\n");
}

// ---- the experiment behind BlockedNumProbes -----------------------------

void MeasureBlockedK() {
  // One filter of 200,000 keys per point, built straight from the probe
  // functions so k can be forced; every k within two of the theoretical best.
  const uint64_t n = 200000;
  std::printf("%4s %3s %12s %9s %11s %12s\n", "bpk", "k", "fpr", "FPs",
              "probes", "theory");
  for (int b = 1; b <= 32; ++b) {
    const uint64_t lines = (n * b + 511) / 512;
    uint32_t best_theory_k = 1;
    double best_theory = 1.0;
    for (uint32_t k = 1; k <= 24; ++k) {
      const double f = BlockedFpr(lines * 512, n, k);
      if (f < best_theory) best_theory = f, best_theory_k = k;
    }
    const uint64_t probes = std::clamp<uint64_t>(
        static_cast<uint64_t>(20000 / best_theory), 4000000, 200000000);
    uint32_t best_k = 0;
    double best = 2.0;
    for (uint32_t k = best_theory_k > 2 ? best_theory_k - 2 : 1;
         k <= best_theory_k + 2; ++k) {
      AlignedWords words(lines * kLineWords);
      char key[8];
      for (uint64_t i = 0; i < n; ++i) {
        EncodeFixed64(key, MixIndex(i, 7));
        BlockedAdd(Hash64(std::string_view(key, 8), 7), k, lines, words.data());
      }
      uint64_t fps = 0;
      for (uint64_t i = 0; i < probes; ++i) {
        EncodeFixed64(key, MixIndex(n + i, 7));
        fps += BlockedMayContain(Hash64(std::string_view(key, 8), 7), k, lines,
                                 words.data());
      }
      const double f = static_cast<double>(fps) / probes;
      if (f < best) best = f, best_k = k;
      std::printf("%4d %3u %12.6g %9llu %11llu %12.6g\n", b, k, f,
                  static_cast<unsigned long long>(fps),
                  static_cast<unsigned long long>(probes),
                  BlockedFpr(lines * 512, n, k));
      std::fflush(stdout);
    }
    std::printf("best: bpk=%d k=%u (theory's best k=%u)\n", b, best_k,
                best_theory_k);
  }
}

// ---- 2. timings ---------------------------------------------------------

constexpr double kBenchBitsPerKey = 10.0;

// Each iteration hashes the keys with another seed: a binary fuse build takes
// one attempt or several depending on the hashes, and the time that matters
// is the mean over key sets, not that of one set (the same set would take
// the same attempts every iteration).
void BM_Build(benchmark::State& state, Layout layout) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  const KeyBuffer keys(0, n);
  uint64_t seed = kDefaultFilterSeed;
  for (auto _ : state) {
    std::unique_ptr<FilterBuilder> builder =
        layout.MakeBuilder(kBenchBitsPerKey, seed++);
    for (uint64_t i = 0; i < n; ++i) builder->AddKey(keys[i]);
    std::string out = builder->Finish();
    benchmark::DoNotOptimize(out.data());
  }
  // Seconds of CPU per key (printed with an SI prefix, e.g. "25n").
  state.counters["per_key"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                  benchmark::Counter::kInvert);
}

// One filter small enough to stay in the first two cache levels.
void BM_HotQuery(benchmark::State& state, Layout layout, bool present) {
  const uint64_t n = 20000;
  const KeyBuffer keys(0, n);
  const KeyBuffer absent(n, n);
  std::unique_ptr<FilterBuilder> builder = layout.MakeBuilder(kBenchBitsPerKey);
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(keys[i]);
  std::unique_ptr<FilterReader> reader = ParseOrDie(builder->Finish());
  const KeyBuffer& probe = present ? keys : absent;
  uint64_t i = 0, hits = 0;
  for (auto _ : state) {
    hits += reader->KeyMayMatch(probe[i]);
    if (++i == n) i = 0;
  }
  benchmark::DoNotOptimize(hits);
  if (present && hits != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("false negative");
  }
}

// Many filters whose bit arrays together far exceed the last-level cache.
struct ColdFilters {
  static constexpr uint64_t kTotalBytes = 256u << 20;
  static constexpr int kContents = 16;  // distinct key sets
  int num_filters = 0;
  uint64_t keys_per_filter = 0;
  std::vector<std::unique_ptr<FilterReader>> readers;
  size_t bytes = 0;
};

std::unique_ptr<ColdFilters> MakeColdFilters(Layout layout, int num_filters) {
  auto cold = std::make_unique<ColdFilters>();
  // 256 MiB of bits in all, at 10 bits/key.
  cold->keys_per_filter = static_cast<uint64_t>(
      ColdFilters::kTotalBytes / num_filters * 8 / kBenchBitsPerKey);
  // Cache behaviour depends on addresses, not contents, so 16 distinct key
  // sets are parsed over and over: num_filters separate bit arrays.
  std::vector<std::string> serialized;
  for (int c = 0; c < ColdFilters::kContents; ++c) {
    std::unique_ptr<FilterBuilder> builder =
        layout.MakeBuilder(kBenchBitsPerKey);
    char key[8];
    for (uint64_t i = 0; i < cold->keys_per_filter; ++i) {
      EncodeFixed64(key, MixIndex(i, 100 + c));
      builder->AddKey(std::string_view(key, 8));
    }
    serialized.push_back(builder->Finish());
  }
  cold->num_filters = num_filters;
  for (int f = 0; f < num_filters; ++f) {
    cold->readers.push_back(ParseOrDie(serialized[f % ColdFilters::kContents]));
    cold->bytes += cold->readers.back()->info().num_bits / 8;
  }
  return cold;
}

std::unique_ptr<ColdFilters> g_cold[5];  // by Layout::index()

// Waits until every earlier instruction, loads included, has completed. A
// query's answer reaches the next query only through branches, which the CPU
// predicts and runs past, overlapping the next query's miss with this one's;
// the fence makes each iteration one whole query, as a latency. The memory
// read baseline gets the same fence.
inline void Serialize() {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("lfence" ::: "memory");
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// Each iteration picks a filter and a key from x, queries, and folds the
// answer into the next x. With `overlap` false, a fence ends each query.
void BM_ColdQuery(benchmark::State& state, Layout layout, bool present,
                  bool overlap) {
  const ColdFilters& cold = *g_cold[layout.index()];
  uint64_t x = 12345, hits = 0;
  char key[8];
  for (auto _ : state) {
    x = MixIndex(x, 3);
    const uint64_t f = FastRange64(x, cold.num_filters);
    // Present: key i of the filter's own set. Absent: a key of no set.
    const uint64_t k =
        present ? MixIndex(FastRange64(x << 16, cold.keys_per_filter),
                           100 + f % ColdFilters::kContents)
                : x;
    EncodeFixed64(key, k);
    const bool hit = cold.readers[f]->KeyMayMatch(std::string_view(key, 8));
    hits += hit;
    x += hit;
    if (!overlap) Serialize();
  }
  benchmark::DoNotOptimize(hits);
  if (present && hits != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("false negative");
  }
  state.counters["MiB"] = static_cast<double>(cold.bytes) / (1 << 20);
}

// The latency of one random read from memory: a random cycle through a
// 256 MiB array of cache lines, each load's address read by the previous one.
struct ChaseArray {
  static constexpr size_t kLines = (256u << 20) / 64;
  std::unique_ptr<AlignedWords> words;
};
ChaseArray g_chase;

void BuildChase() {
  g_chase.words = std::make_unique<AlignedWords>(ChaseArray::kLines * 8);
  uint64_t* w = g_chase.words->data();
  // Sattolo's algorithm: a random permutation with a single cycle.
  std::vector<uint32_t> order(ChaseArray::kLines);
  std::iota(order.begin(), order.end(), 0);
  Random rnd(42);
  for (size_t i = order.size() - 1; i > 0; --i) {
    std::swap(order[i], order[rnd.Uniform(i)]);
  }
  for (size_t i = 0; i < order.size(); ++i) w[i * 8] = order[i] * 8;
}

void BM_RandomMemoryRead(benchmark::State& state) {
  const uint64_t* w = g_chase.words->data();
  uint64_t p = 0;
  for (auto _ : state) {
    p = w[p];
    Serialize();
  }
  benchmark::DoNotOptimize(p);
  state.counters["MiB"] = 256;
}

// Records each benchmark's CPU time for the summary (the lowest across
// --benchmark_repetitions, the least disturbed by other processes), and
// prints as usual. CPU time rather than wall time: a stall on memory is CPU
// time, time spent descheduled on a shared machine is not.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      std::string name = run.run_name.function_name;
      if (!run.run_name.args.empty()) name += "/" + run.run_name.args;
      Keep(name, run.GetAdjustedCPUTime());
      auto it = run.counters.find("per_key");
      if (it != run.counters.end()) {
        Keep(name + ":per_key", it->second.value * 1e9);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double Get(const std::string& name) const {
    auto it = ns_.find(name);
    return it == ns_.end() ? -1 : it->second;
  }

 private:
  void Keep(const std::string& name, double ns) {
    auto [it, fresh] = ns_.emplace(name, ns);
    if (!fresh) it->second = std::min(it->second, ns);
  }
  std::map<std::string, double> ns_;
};

void Check(const char* what, double value, const char* unit, double limit) {
  if (value < 0) {
    std::printf("  %-46s (not run)\n", what);
    return;
  }
  std::printf("  %-46s %9.3f %-3s target <= %-7g %s\n", what, value, unit,
              limit, value <= limit ? "ok" : "MISSED");
}

void PrintSummary(const SummaryReporter& r) {
  std::printf("\nSummary against targets (CPU time, best repetition)\n");
  if (!g_fpr.empty()) {
    Check("standard FPR at 10 bits/key", 100 * g_fpr[{1, 10}].measured, "%",
          0.85);
    Check("blocked FPR at 10 bits/key", 100 * g_fpr[{2, 10}].measured, "%",
          0.97);
  }
  if (!g_fuse_fpr.empty()) {
    Check("binary fuse FPR, 8-bit fingerprints (9 bits/key)",
          100 * g_fuse_fpr[8].measured, "%", 0.39 * 1.25);
  }
  const double mem = r.Get("RandomMemoryRead");
  const double cold = r.Get("ColdQuery/blocked/absent");
  const double cold_p = r.Get("ColdQuery/blocked/present");
  if (mem > 0) {
    std::printf("  one random memory read (256 MiB chase):       %7.1f ns\n",
                mem);
    if (cold > 0)
      Check("blocked cold query absent / memory read", cold / mem, "x", 1.3);
    if (cold_p > 0)
      Check("blocked cold query present / memory read", cold_p / mem, "x", 1.3);
    const double fuse = r.Get("ColdQuery/binary_fuse/absent");
    const double fuse_p = r.Get("ColdQuery/binary_fuse/present");
    if (fuse > 0) {
      Check("binary fuse cold query absent / memory read", fuse / mem, "x",
            1.5);
    }
    if (fuse_p > 0) {
      Check("binary fuse cold query present / memory read", fuse_p / mem, "x",
            1.5);
    }
  }
  for (const char* kind :
       {"standard", "blocked", "binary_fuse", "binary_fuse_v1"}) {
    for (const char* which : {"present", "absent"}) {
      const std::string name = std::string("HotQuery/") + kind + "/" + which;
      Check(name.c_str(), r.Get(name), "ns", 25);
    }
  }
  for (const char* kind :
       {"standard", "blocked", "binary_fuse", "binary_fuse_v1"}) {
    const std::string name = std::string("Build/") + kind + "/1000000";
    Check((name + " per key").c_str(), r.Get(name + ":per_key"), "ns",
          std::string(kind).starts_with("binary_fuse") ? 60 : 40);
  }
  for (const char* kind : {"binary_fuse", "binary_fuse_v1"}) {
    const std::string name = std::string("Build/") + kind + "/18000";
    Check((name + " per key").c_str(), r.Get(name + ":per_key"), "ns", 60);
  }
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  using namespace sift;
  bool fpr_table = true, measure_k = false;
  int cold_filters = 1024;
  // Take our own flags out before Google Benchmark sees the rest.
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no_fpr_table") == 0) {
      fpr_table = false;
    } else if (std::strcmp(argv[i], "--measure_blocked_k") == 0) {
      measure_k = true;
    } else if (std::strncmp(argv[i], "--cold_filters=", 15) == 0) {
      cold_filters = std::clamp(std::atoi(argv[i] + 15), 16, 1 << 16);
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  if (measure_k) {
    MeasureBlockedK();
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  if (fpr_table) {
    PrintFprTable();
    PrintFuseFprTable();
  }

  const Layout layouts[] = {{FilterKind::kStandardBloom},
                            {FilterKind::kBlockedBloom},
                            {FilterKind::kBinaryFuse},
                            {FilterKind::kBinaryFuse, 1}};
  std::printf("Preparing 4 x %d cold filters and a 256 MiB chase array\n",
              cold_filters);
  for (const Layout& layout : layouts) {
    g_cold[layout.index()] = MakeColdFilters(layout, cold_filters);
  }
  BuildChase();
  std::printf("cold filters:");
  for (const Layout& layout : layouts) {
    std::printf(" %.0f MiB %s", g_cold[layout.index()]->bytes / 1048576.0,
                layout.name().c_str());
  }
  std::printf("\n\n");

  for (const Layout& layout : layouts) {
    const std::string k = layout.name();
    benchmark::internal::Benchmark* build =
        benchmark::RegisterBenchmark(("Build/" + k).c_str(), BM_Build, layout)
            ->Arg(1000000)
            ->Unit(benchmark::kMillisecond);
    // A 2 MiB table's keys, the size the engine builds most.
    if (layout.kind == FilterKind::kBinaryFuse) build->Arg(18000);
    for (bool present : {true, false}) {
      const std::string suffix = present ? "/present" : "/absent";
      benchmark::RegisterBenchmark(("HotQuery/" + k + suffix).c_str(),
                                   BM_HotQuery, layout, present);
      benchmark::RegisterBenchmark(("ColdQuery/" + k + suffix).c_str(),
                                   BM_ColdQuery, layout, present, false);
    }
    benchmark::RegisterBenchmark(
        ("ColdQueryOverlapped/" + k + "/absent").c_str(), BM_ColdQuery, layout,
        false, true);
  }
  benchmark::RegisterBenchmark("RandomMemoryRead", BM_RandomMemoryRead);

  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  benchmark::Shutdown();
  return 0;
}
