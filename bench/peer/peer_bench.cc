// peer_bench: the same workloads with the same settings through sift, LevelDB
// and RocksDB, one engine at a time, each in a child process of its own (so
// that its peak RSS is its own), and a side-by-side table with ratios.
// See doc/benchmarks.md.

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/kvbench/keys.h"
#include "bench/kvbench/parallel.h"
#include "bench/peer/engine.h"
#include "util/histogram.h"
#include "util/random.h"

namespace sift::bench {
namespace {

using Json = nlohmann::ordered_json;

uint64_t PeakRssKiB() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss);
}

// Anonymous resident memory (RssAnon in /proc/self/status), KiB: the
// process's heap and stacks, without the pages of memory-mapped files, which
// belong to the page cache and are reclaimable. 0 where unavailable.
uint64_t RssAnonKiB() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t kib = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "RssAnon:", 8) == 0) {
      kib = std::strtoull(line + 8, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kib;
}

// The peak of RssAnonKiB while it lives, sampled every 10 ms by a thread of
// its own (the kernel keeps no peak of anonymous memory).
class AnonPeakSampler {
 public:
  AnonPeakSampler() : thread_([this] { Run(); }) {}
  ~AnonPeakSampler() {
    stop_.store(true);
    thread_.join();
  }
  uint64_t PeakKiB() {
    Sample();
    return peak_.load();
  }

 private:
  void Sample() {
    const uint64_t now = RssAnonKiB();
    uint64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
  }
  void Run() {
    while (!stop_.load()) {
      Sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> peak_{0};
  std::thread thread_;
};

Json LatencyJson(const Histogram& h) {
  return {{"p50", h.Percentile(50)},
          {"p99", h.Percentile(99)},
          {"p99.9", h.Percentile(99.9)}};
}

// Poll the shape until it has not changed for a second (at most two
// minutes): background compaction has settled.
double Settle(Engine* e) {
  const uint64_t start = NowNanos();
  std::vector<int> last = e->Shape();
  int stable = 0;
  while (stable < 10 && double(NowNanos() - start) / 1e9 < 120) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<int> now = e->Shape();
    stable = now == last ? stable + 1 : 0;
    last = std::move(now);
  }
  return double(NowNanos() - start) / 1e9;
}

// What a read workload draws: a present key uniformly, an absent key
// uniformly, or a present key from the Zipfian distribution.
enum class Draw { kPresent, kMissing, kHot };

// One read workload's totals over the slices that ran it.
struct ReadTotals {
  Histogram lat;  // per Get, or per key of a MultiGet
  uint64_t ops = 0;
  uint64_t nanos = 0;
  uint64_t found = 0;
  uint64_t block_reads = 0;
  uint64_t bytes_read = 0;
  uint64_t background_reads = 0;

  Json ToJson() const {
    const double seconds = double(nanos) / 1e9;
    return {{"ops", ops},
            {"seconds", seconds},
            {"ops_per_sec", double(ops) / seconds},
            {"latency_us", LatencyJson(lat)},
            {"found", found},
            {"block_reads", block_reads},
            {"block_reads_per_get", double(block_reads) / double(ops)},
            {"bytes_read", bytes_read},
            {"background_reads", background_reads}};
  }
};

// The keys of a workload's next reads, drawn from its own stream.
class KeyDraws {
 public:
  KeyDraws(const KeySpace& keys, const ZipfianGenerator& zipf, uint64_t num,
           Draw draw, uint64_t seed)
      : keys_(keys), zipf_(zipf), num_(num), draw_(draw), rnd_(seed) {}
  void Next(char* key) {
    switch (draw_) {
      case Draw::kPresent:
        keys_.Present(rnd_.Uniform(num_), key);
        return;
      case Draw::kMissing:
        keys_.Missing(rnd_.Uniform(num_), key);
        return;
      case Draw::kHot:
        keys_.Present(zipf_.Next(rnd_.NextDouble()), key);
        return;
    }
  }

 private:
  const KeySpace& keys_;
  const ZipfianGenerator& zipf_;
  const uint64_t num_;
  const Draw draw_;
  Random rnd_;
};

// The clock and the engine's read counters from the start of one slice of a
// workload; AddTo adds the slice to the workload's totals.
class SliceMeter {
 public:
  explicit SliceMeter(Engine* e)
      : e_(e),
        reads_(e->counter().foreground_reads()),
        bytes_(e->counter().foreground_bytes()),
        background_reads_(e->counter().background_reads()),
        start_(NowNanos()) {}
  void AddTo(uint64_t ops, ReadTotals* t) const {
    t->nanos += NowNanos() - start_;
    t->ops += ops;
    t->block_reads += e_->counter().foreground_reads() - reads_;
    t->bytes_read += e_->counter().foreground_bytes() - bytes_;
    t->background_reads += e_->counter().background_reads() - background_reads_;
  }

 private:
  Engine* const e_;
  const uint64_t reads_;
  const uint64_t bytes_;
  const uint64_t background_reads_;
  const uint64_t start_;
};

// `n` more single-key Gets, added to `t`.
absl::Status RunGets(Engine* e, KeyDraws* draws, int key_size, uint64_t n,
                     ReadTotals* t) {
  std::string key(static_cast<size_t>(key_size), '\0');
  std::string value;
  const SliceMeter meter(e);
  for (uint64_t i = 0; i < n; ++i) {
    draws->Next(key.data());
    bool hit = false;
    const uint64_t t0 = NowNanos();
    absl::Status st = e->Get(key, &value, &hit);
    t->lat.Add(double(NowNanos() - t0) / 1e3);
    if (!st.ok()) return st;
    t->found += hit;
  }
  meter.AddTo(n, t);
  return absl::OkStatus();
}

// `n` more keys looked up `batch` per MultiGet, added to `t` (ops are keys;
// latency is per key).
absl::Status RunMultiGets(Engine* e, KeyDraws* draws, int key_size,
                          size_t batch, uint64_t n, ReadTotals* t) {
  std::vector<std::string> batch_keys(
      batch, std::string(static_cast<size_t>(key_size), '\0'));
  std::vector<std::string_view> views;
  std::vector<std::string> batch_values;
  std::vector<bool> hits;
  const SliceMeter meter(e);
  for (uint64_t i = 0; i < n;) {
    const size_t m = static_cast<size_t>(std::min<uint64_t>(batch, n - i));
    views.clear();
    for (size_t j = 0; j < m; ++j) {
      draws->Next(batch_keys[j].data());
      views.push_back(batch_keys[j]);
    }
    const uint64_t t0 = NowNanos();
    absl::Status st = e->MultiGet(views, &batch_values, &hits);
    t->lat.Add(double(NowNanos() - t0) / 1e3 / double(m));
    if (!st.ok()) return st;
    for (size_t j = 0; j < m; ++j) t->found += hits[j];
    i += m;
  }
  meter.AddTo(n, t);
  return absl::OkStatus();
}

// The scan workloads (seekrandom, scanrandom, seekbounded, the range seeks,
// ycsb_e): the ops are scans (each with its iterator), the entries what they
// visited.
struct ScanRun {
  Histogram lat;  // per scan (ycsb_e: per operation)
  uint64_t ops = 0;
  uint64_t inserts = 0;
  uint64_t nanos = 0;
  uint64_t block_reads = 0;
  uint64_t nonempty = 0;  // scans that visited at least one entry
  Engine::ScanTotals walked;

  Json ToJson() const {
    const double seconds = double(nanos) / 1e9;
    const uint64_t scans = ops - inserts;
    return {{"ops", ops},
            {"scans", scans},
            {"inserts", inserts},
            {"seconds", seconds},
            {"ops_per_sec", double(ops) / seconds},
            {"entries", walked.entries},
            {"entries_per_sec", double(walked.entries) / seconds},
            {"entries_per_scan", double(walked.entries) / double(scans)},
            {"nonempty", nonempty},
            {"latency_us", LatencyJson(lat)},
            {"block_reads", block_reads},
            {"block_reads_per_seek",
             double(block_reads) / double(std::max<uint64_t>(scans, 1))}};
  }
};

// The shape of one scan workload.
struct ScanShape {
  const char* name;
  bool zipfian_start;    // else uniform
  uint64_t max_entries;  // entries per scan: 1 + uniform [0, max) (0: 2)
  bool bounded;          // upper bound 100 keys after the start
  bool inserts;          // 5% of operations insert a new key (YCSB E)
};

absl::Status RunScans(Engine* e, const KeySpace& keys,
                      const ValueSource& values, const RandomOrder& order,
                      const ZipfianGenerator& zipf, const PeerSettings& s,
                      const ScanShape& shape, uint64_t seed, ScanRun* run) {
  Random rnd(seed);
  std::string start(static_cast<size_t>(s.key_size), '\0');
  std::string upper(static_cast<size_t>(s.key_size), '\0');
  const uint64_t reads0 = e->counter().foreground_reads();
  const uint64_t t_start = NowNanos();
  for (uint64_t op = 0; op < s.scans; ++op) {
    const uint64_t t0 = NowNanos();
    if (shape.inserts && rnd.Uniform(100) < 5) {
      // A new key between two loaded ones (absent keys are the odd numbers).
      keys.Missing(rnd.Uniform(s.num), start.data());
      absl::Status st = e->Put(start, values.Get(s.num + op));
      if (!st.ok()) return st;
      ++run->inserts;
    } else {
      // YCSB scrambles its Zipfian ranks over the key space; the random
      // order (a bijection) does the same here.
      const uint64_t i = shape.zipfian_start
                             ? order.At(zipf.Next(rnd.NextDouble()))
                             : rnd.Uniform(s.num);
      keys.Present(i, start.data());
      const uint64_t n =
          shape.max_entries == 0 ? 2 : 1 + rnd.Uniform(shape.max_entries);
      std::string_view limit;
      if (shape.bounded) {
        keys.Present(std::min(i + 100, s.num), upper.data());
        limit = upper;
      }
      const uint64_t entries0 = run->walked.entries;
      absl::Status st = e->Scan(start, limit, n, &run->walked);
      if (!st.ok()) return st;
      run->nonempty += run->walked.entries > entries0;
    }
    run->lat.Add(double(NowNanos() - t0) / 1e3);
    ++run->ops;
  }
  run->nanos += NowNanos() - t_start;
  run->block_reads += e->counter().foreground_reads() - reads0;
  return absl::OkStatus();
}

// The bounded range seeks, each scan one SeekRange over bounds defined as
// kvbench's workloads of the same names define them, so that their figures
// compare:
//   seekprefix: the whole range of the first prefix_len bytes of a random
//     present key, [prefix, prefix with its last byte + 1);
//   seekprefixmissing: the same with the prefix's last byte ':', which no
//     decimal key holds there (nor a binary key, if that byte is one of the
//     two zero bytes below the integer: prefix_len = key_size - 1);
//   seekempty: the range_len absent integers right after a random present
//     key (binary keys).
// The last two must find nothing: a scan that does means the workload is
// not what it claims, and fails the run.
enum class RangeKind { kPrefix, kPrefixMissing, kEmpty };

absl::Status RunRangeSeeks(Engine* e, const KeySpace& keys,
                           const PeerSettings& s, const char* name,
                           RangeKind kind, uint64_t seed, ScanRun* run) {
  Random rnd(seed);
  std::string lower, upper;
  const uint64_t reads0 = e->counter().foreground_reads();
  const uint64_t t_start = NowNanos();
  for (uint64_t op = 0; op < s.scans; ++op) {
    const uint64_t i = rnd.Uniform(s.num);
    lower.resize(static_cast<size_t>(s.key_size));
    if (kind == RangeKind::kEmpty) {
      upper.resize(static_cast<size_t>(s.key_size));
      keys.EmptyRange(i, s.range_len, lower.data(), upper.data());
    } else {
      keys.Present(i, lower.data());
      lower.resize(static_cast<size_t>(s.prefix_len));
      if (kind == RangeKind::kPrefixMissing) lower.back() = ':';
      // As kvbench's: the successor of every decimal prefix (digits and ':'
      // are never 0xff), and of binary ones not ending in 0xff.
      upper = lower;
      upper.back() = static_cast<char>(upper.back() + 1);
    }
    const uint64_t entries0 = run->walked.entries;
    const uint64_t t0 = NowNanos();
    absl::Status st = e->SeekRange(lower, upper, &run->walked);
    run->lat.Add(double(NowNanos() - t0) / 1e3);
    if (!st.ok()) return st;
    run->nonempty += run->walked.entries > entries0;
    ++run->ops;
  }
  run->nanos += NowNanos() - t_start;
  run->block_reads += e->counter().foreground_reads() - reads0;
  if (kind != RangeKind::kPrefix && run->nonempty > 0) {
    return absl::InternalError(
        absl::StrCat(name, ": ", run->nonempty, " of ", run->ops,
                     " scans found keys in ranges that hold none",
                     kind == RangeKind::kPrefixMissing && keys.binary()
                         ? " (binary keys need --prefix_len = --key_size - 1)"
                         : ""));
  }
  return absl::OkStatus();
}

KeySpace::KeyFormat KeyFormatOf(const PeerSettings& s) {
  return s.key_format == "binary" ? KeySpace::KeyFormat::kBinary
                                  : KeySpace::KeyFormat::kDecimal;
}

// Operations a thread does between two reports of its progress.
constexpr uint64_t kProgressBatch = 1024;

// One phase of the YCSB-like sequence: `read_percent` of its operations are
// Gets, the rest updates (a Put of a present key with a new value); the keys
// are Zipfian as YCSB's. `load`: every key once, in random order, all Puts.
struct MixPhase {
  const char* name;
  int read_percent;
  bool load;
};

absl::StatusOr<Json> RunMixPhase(Engine* e, const PeerSettings& s,
                                 const KeySpace& keys,
                                 const ValueSource& values,
                                 const RandomOrder& order,
                                 const ZipfianGenerator& zipf,
                                 const MixPhase& phase, uint64_t seed) {
  const uint64_t total = phase.load ? s.num : s.reads;
  const uint64_t written0 = e->counter().written_bytes();
  const uint64_t bg0 = e->counter().background_reads();
  std::vector<Histogram> write_lat(static_cast<size_t>(s.threads));
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> found{0};
  Progress progress(phase.name, total, false);
  ParallelResult result;
  absl::Status st = RunParallel(
      s.threads, total, &progress,
      [&](int thread, uint64_t begin, uint64_t end, Histogram* lat,
          Progress* prog) -> absl::Status {
        ReadCounter::MarkForegroundThread();
        std::string key(static_cast<size_t>(s.key_size), '\0');
        std::string value;
        Random rnd(seed * 1000003 + static_cast<uint64_t>(thread) * 7919);
        Histogram& writes = write_lat[static_cast<size_t>(thread)];
        uint64_t my_reads = 0;
        uint64_t my_found = 0;
        for (uint64_t i = begin; i < end; ++i) {
          bool write = true;
          if (phase.load) {
            keys.Present(order.At(i), key.data());
          } else {
            keys.Present(zipf.Next(rnd.NextDouble()), key.data());
            write =
                rnd.Uniform(100) >= static_cast<uint32_t>(phase.read_percent);
          }
          const uint64_t t0 = NowNanos();
          absl::Status op;
          if (write) {
            op = e->Put(key, values.Get(phase.load ? i : rnd.Uniform(s.num)));
          } else {
            bool hit = false;
            op = e->Get(key, &value, &hit);
            ++my_reads;
            my_found += hit;
          }
          const double us = double(NowNanos() - t0) / 1e3;
          lat->Add(us);
          if (write) writes.Add(us);
          if (!op.ok()) return op;
          // A line on stderr per tenth of a long phase (Progress).
          if ((i - begin + 1) % kProgressBatch == 0) prog->Add(kProgressBatch);
        }
        reads += my_reads;
        found += my_found;
        return absl::OkStatus();
      },
      &result);
  if (!st.ok()) return st;
  Histogram all_writes;
  for (const Histogram& h : write_lat) all_writes.Merge(h);
  return Json{{"ops", total},
              {"seconds", result.seconds},
              {"ops_per_sec", double(total) / result.seconds},
              {"latency_us", LatencyJson(result.latency_us)},
              // The longest single write: what a write stall cost one caller.
              {"longest_write_us", all_writes.Max()},
              {"reads", reads.load()},
              {"found", found.load()},
              // Table and log bytes the engine wrote while the phase ran (its
              // own writes and the compactions running then).
              {"bytes_written", e->counter().written_bytes() - written0},
              {"background_reads", e->counter().background_reads() - bg0}};
}

// The YCSB-like sequence: load, then A (50% reads, 50% updates), B (95/5)
// and C (reads only) on the same database with no pause between them, as a
// user's workload would meet the tree right after a load; then the tree is
// left to settle and C runs again ("ycsb_c_settled"), so that C over C
// settled says what the load and the updates still cost the reads.
absl::Status RunYcsb(Engine* e, const PeerSettings& s, Json* results) {
  const KeySpace keys(s.num, s.key_size, KeyFormatOf(s));
  const ValueSource values(s.value_size, s.seed);
  const RandomOrder order(s.num, s.seed);
  const ZipfianGenerator zipf(s.num, 0.99);
  const uint64_t written0 = e->counter().written_bytes();
  const MixPhase phases[] = {{"ycsb_load", 0, true},
                             {"ycsb_a", 50, false},
                             {"ycsb_b", 95, false},
                             {"ycsb_c", 100, false}};
  uint64_t seed = s.seed;
  for (const MixPhase& phase : phases) {
    absl::StatusOr<Json> r =
        RunMixPhase(e, s, keys, values, order, zipf, phase, ++seed);
    if (!r.ok()) return r.status();
    (*results)[phase.name] = *std::move(r);
  }
  const uint64_t written = e->counter().written_bytes() - written0;
  const double settle = Settle(e);
  absl::StatusOr<Json> settled = RunMixPhase(
      e, s, keys, values, order, zipf, {"ycsb_c_settled", 100, false}, seed);
  if (!settled.ok()) return settled.status();
  (*settled)["settle_seconds"] = settle;
  (*results)["ycsb_c_settled"] = *std::move(settled);
  (*results)["ycsb_total"] = {
      {"bytes_written", written},
      {"c_over_c_settled",
       (*results)["ycsb_c"]["ops_per_sec"].get<double>() /
           (*results)["ycsb_c_settled"]["ops_per_sec"].get<double>()}};
  return absl::OkStatus();
}

// Runs every workload on one engine; the result as JSON.
absl::StatusOr<Json> RunEngine(const std::string& engine_name,
                               const PeerSettings& s, const std::string& dir) {
  ReadCounter::MarkForegroundThread();
  const KeySpace keys(s.num, s.key_size, KeyFormatOf(s));
  const ValueSource values(s.value_size, s.seed);
  const RandomOrder order(s.num, s.seed);
  const ZipfianGenerator zipf(s.num, 0.99);
  Json out;
  out["engine"] = engine_name;
  out["read_mode"] = !s.direct_reads            ? "buffered"
                     : engine_name == "leveldb" ? "no direct I/O"
                                                : "direct";
  out["baseline_rss_kib"] = PeakRssKiB();
  out["baseline_rss_anon_kib"] = RssAnonKiB();
  AnonPeakSampler anon;

  absl::StatusOr<std::unique_ptr<Engine>> opened =
      engine_name == "sift"      ? OpenSift(s, dir)
      : engine_name == "leveldb" ? OpenLevelDb(s, dir)
                                 : OpenRocksDb(s, dir);
  if (!opened.ok()) return opened.status();
  Engine* e = opened->get();
  std::string key(s.key_size, '\0');

  Json results = Json::object();
  // The run's results and what the engine says after them; closes it.
  const auto finish = [&]() -> Json {
    out["results"] = std::move(results);
    out["files_per_level"] = e->Shape();
    out["extra"] = e->Extra();
    out["peak_rss_before_close_kib"] = PeakRssKiB();
    opened->reset();
    out["peak_rss_anon_kib"] = anon.PeakKiB();
    return std::move(out);
  };
  if (s.sequence == "ycsb") {
    if (absl::Status st = RunYcsb(e, s, &results); !st.ok()) return st;
    return finish();
  }
  {
    Histogram lat;
    const uint64_t bg0 = e->counter().background_reads();
    const uint64_t written0 = e->counter().written_bytes();
    const uint64_t start = NowNanos();
    for (uint64_t i = 0; i < s.num; ++i) {
      keys.Present(order.At(i), key.data());
      const uint64_t t0 = NowNanos();
      absl::Status st = e->Put(key, values.Get(i));
      lat.Add(double(NowNanos() - t0) / 1e3);
      if (!st.ok()) return st;
    }
    const double seconds = double(NowNanos() - start) / 1e9;
    const double settle = Settle(e);
    results["fillrandom"] = {
        {"ops", s.num},
        {"seconds", seconds},
        {"ops_per_sec", s.num / seconds},
        {"latency_us", LatencyJson(lat)},
        {"settle_seconds", settle},
        {"background_reads", e->counter().background_reads() - bg0},
        {"bytes_written", e->counter().written_bytes() - written0},
        // Table and log bytes the engine wrote during the fill and the
        // settling after it, per byte of keys and values put.
        {"write_amplification",
         double(e->counter().written_bytes() - written0) /
             (double(s.num) * double(s.key_size + s.value_size))}};
  }
  // Each single-key workload and its batched twin run in alternating
  // slices (single then batched, batched then single, ...), so that a drift
  // in the machine's speed during the run falls on both sides of their ratio
  // alike. The single-key workloads draw the same keys as kvbench's of the
  // same names (thread 0); the batched ones draw from streams of their own,
  // so that a slice never finds in the caches the blocks the slice before it
  // just read for the same keys.
  struct Pair {
    const char* single;
    const char* multi;
    Draw draw;
    uint64_t single_seed;
    uint64_t multi_seed;
  };
  const Pair pairs[] = {
      {"readrandom", "multireadrandom", Draw::kPresent, 2, 12},
      {"readmissing", "multireadmissing", Draw::kMissing, 3, 13}};
  const auto stream = [&](uint64_t kind_seed) {
    return s.seed * 1000003 + kind_seed * 101;
  };
  const size_t batch = static_cast<size_t>(s.batch_size);
  const uint64_t slices = static_cast<uint64_t>(s.read_slices);
  for (const Pair& p : pairs) {
    KeyDraws single_draws(keys, zipf, s.num, p.draw, stream(p.single_seed));
    KeyDraws multi_draws(keys, zipf, s.num, p.draw, stream(p.multi_seed));
    ReadTotals single, multi;
    for (uint64_t slice = 0; slice < slices; ++slice) {
      const uint64_t n =
          s.reads * (slice + 1) / slices - s.reads * slice / slices;
      auto run_single = [&] {
        return RunGets(e, &single_draws, s.key_size, n, &single);
      };
      auto run_multi = [&] {
        return RunMultiGets(e, &multi_draws, s.key_size, batch, n, &multi);
      };
      absl::Status st = slice % 2 == 0 ? run_single() : run_multi();
      if (st.ok()) st = slice % 2 == 0 ? run_multi() : run_single();
      if (!st.ok()) return st;
    }
    results[p.single] = single.ToJson();
    results[p.multi] = multi.ToJson();
  }
  {
    KeyDraws hot_draws(keys, zipf, s.num, Draw::kHot, stream(4));
    ReadTotals hot;
    if (absl::Status st = RunGets(e, &hot_draws, s.key_size, s.reads, &hot);
        !st.ok()) {
      return st;
    }
    results["readhot"] = hot.ToJson();
  }
  // Scans: the YCSB E shape and its parts, then whole-database walks, then
  // the range seeks (those the settings allow). seekbounded is scanrandom
  // with an upper bound 100 keys after the start; ycsb_e (zipfian starts, 5%
  // inserts) runs last since it writes.
  const ScanShape scan_shapes[] = {
      {"seekrandom", false, 0, false, false},
      {"scanrandom", false, 100, false, false},
      {"seekbounded", false, 100, true, false},
      {"ycsb_e", true, 100, false, true},
  };
  const struct {
    const char* name;
    RangeKind kind;
    bool runs;
    uint64_t seed;
  } range_seeks[] = {
      {"seekprefix", RangeKind::kPrefix, s.prefix_len > 0, 24},
      {"seekprefixmissing", RangeKind::kPrefixMissing, s.prefix_len > 0, 25},
      {"seekempty", RangeKind::kEmpty, keys.binary(), 26},
  };
  for (const ScanShape& shape : scan_shapes) {
    if (shape.inserts) {
      for (const auto& r : range_seeks) {
        if (!r.runs) continue;
        ScanRun run;
        if (absl::Status st =
                RunRangeSeeks(e, keys, s, r.name, r.kind, stream(r.seed), &run);
            !st.ok()) {
          return st;
        }
        results[r.name] = run.ToJson();
      }
    }
    ScanRun run;
    if (absl::Status st = RunScans(e, keys, values, order, zipf, s, shape,
                                   stream(20 + (&shape - scan_shapes)), &run);
        !st.ok()) {
      return st;
    }
    results[shape.name] = run.ToJson();
    if (std::string_view(shape.name) == "seekbounded") {
      for (const bool reverse : {false, true}) {
        ScanRun all;
        const uint64_t reads0 = e->counter().foreground_reads();
        const uint64_t t0 = NowNanos();
        if (absl::Status st = e->ScanAll(reverse, &all.walked); !st.ok()) {
          return st;
        }
        all.nanos = NowNanos() - t0;
        all.ops = 1;
        all.block_reads = e->counter().foreground_reads() - reads0;
        all.nonempty = all.walked.entries > 0;
        all.lat.Add(double(all.nanos) / 1e3);
        results[reverse ? "readreverse" : "readseq"] = all.ToJson();
      }
    }
  }
  return finish();
}

// Fork a child that runs `engine` and writes its JSON to a pipe; collect it
// with the child's peak RSS.
absl::StatusOr<Json> RunInChild(const std::string& engine,
                                const PeerSettings& s, const std::string& dir) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    close(fds[0]);
    absl::StatusOr<Json> r = RunEngine(engine, s, dir);
    std::string text =
        r.ok() ? r->dump() : Json{{"error", r.status().ToString()}}.dump();
    size_t off = 0;
    while (off < text.size()) {
      const ssize_t n = write(fds[1], text.data() + off, text.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(r.ok() ? 0 : 1);
  }
  close(fds[1]);
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) text.append(buf, n);
  close(fds[0]);
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid) {
    return absl::InternalError("wait4 failed");
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InternalError(absl::StrCat(
        engine, ": child exited with status ", status, " and no result"));
  }
  if (j.contains("error")) {
    return absl::InternalError(
        absl::StrCat(engine, ": ", j["error"].get<std::string>()));
  }
  j["peak_rss_kib"] = static_cast<uint64_t>(ru.ru_maxrss);
  return j;
}

void PrintTable(const PeerSettings& s, const std::vector<Json>& runs) {
  std::printf(
      "peer_bench: %s keys x %d B, values %d B, %s reads per read workload; "
      "%zu KiB blocks, %.0f MiB block cache, %.0f MiB write buffer, %.0f MiB "
      "tables, %g bits/key (sift: %s), compression %s; MultiGet batches of "
      "%d keys, each alternating with its single-key workload in %d "
      "slices; scan workloads %s scans each; %s keys, prefix extractor %d "
      "bytes (sift, RocksDB; 0: none), range filter %g bits/key (sift), "
      "seekempty ranges of %s integers; one engine at a time, each in its "
      "own process\n\n",
      absl::StrCat(s.num).c_str(), s.key_size, s.value_size,
      absl::StrCat(s.reads).c_str(), s.block_size / 1024,
      s.cache_size / 1048576.0, s.write_buffer_size / 1048576.0,
      s.max_file_size / 1048576.0, s.bits_per_key, s.sift_filter.c_str(),
      s.compression.c_str(), s.batch_size, s.read_slices,
      absl::StrCat(s.scans).c_str(), s.key_format.c_str(), s.prefix_len,
      s.range_bits_per_key, absl::StrCat(s.range_len).c_str());
  const Json* sift = nullptr;
  std::vector<const Json*> peers;
  for (const Json& r : runs) {
    if (r["engine"] == "sift") {
      sift = &r;
    } else {
      peers.push_back(&r);
    }
  }
  std::printf("%-17s %-14s", "workload", "metric");
  for (const Json& r : runs) {
    std::printf(" %12s", r["engine"].get<std::string>().c_str());
  }
  std::printf(" %14s  %s\n", "sift/best peer", "target");

  struct Row {
    const char* workload;
    const char* field;  // in results[workload]
    const char* sub;    // nested field (latency) or nullptr
    const char* label;
    bool higher_better;
    const char* target;  // printed target, or ""
    // 0: none; else the ratio to the best peer sift must reach (at least,
    // or at most where lower is better).
    double target_ratio;
    // 0: none; else the bound sift's own value must keep (at least, or at
    // most where lower is better).
    double target_abs;
  };
  const Row ycsb_rows[] = {
      {"ycsb_load", "ops_per_sec", nullptr, "ops/s", true, ">= 1.50x", 1.5, 0},
      {"ycsb_load", "longest_write_us", nullptr, "longest put us", false, "", 0,
       0},
      {"ycsb_load", "bytes_written", nullptr, "MB written", false, "", 0, 0},
      {"ycsb_a", "ops_per_sec", nullptr, "ops/s", true, ">= 1.30x", 1.3, 0},
      {"ycsb_a", "longest_write_us", nullptr, "longest put us", false, "", 0,
       0},
      {"ycsb_a", "bytes_written", nullptr, "MB written", false, "", 0, 0},
      {"ycsb_b", "ops_per_sec", nullptr, "ops/s", true, "", 0, 0},
      {"ycsb_b", "bytes_written", nullptr, "MB written", false, "", 0, 0},
      {"ycsb_c", "ops_per_sec", nullptr, "ops/s", true, "", 0, 0},
      {"ycsb_c", "bytes_written", nullptr, "MB written", false, "", 0, 0},
      {"ycsb_c_settled", "ops_per_sec", nullptr, "ops/s", true, "", 0, 0},
      {"ycsb_c_settled", "settle_seconds", nullptr, "settle s", false, "", 0,
       0},
      {"ycsb_total", "bytes_written", nullptr, "MB written", false, "<= 0.80x",
       0.8, 0},
      {"ycsb_total", "c_over_c_settled", nullptr, "C / C settled", true,
       ">= 0.85", 0, 0.85},
  };
  const Row readamp_rows[] = {
      {"fillrandom", "ops_per_sec", nullptr, "ops/s", true, ">= 1.00x", 1.0, 0},
      {"fillrandom", "latency_us", "p99", "p99 us", false, "", 0, 0},
      {"fillrandom", "settle_seconds", nullptr, "settle s", false, "", 0, 0},
      {"fillrandom", "write_amplification", nullptr, "write amp", false, "", 0,
       0},
      {"readrandom", "ops_per_sec", nullptr, "ops/s", true, ">= 1.30x", 1.3, 0},
      {"readrandom", "block_reads_per_get", nullptr, "blk reads/Get", false,
       "<= 1.05", 0, 1.05},
      {"readrandom", "latency_us", "p99", "p99 us", false, "", 0, 0},
      {"readmissing", "ops_per_sec", nullptr, "ops/s", true, ">= 2.00x", 2.0,
       0},
      {"readmissing", "block_reads_per_get", nullptr, "blk reads/Get", false,
       "<= 0.01", 0, 0.01},
      {"readmissing", "latency_us", "p99", "p99 us", false, "", 0, 0},
      {"readhot", "ops_per_sec", nullptr, "ops/s", true, ">= 1.30x", 1.3, 0},
      {"readhot", "block_reads_per_get", nullptr, "blk reads/Get", false, "", 0,
       0},
      {"multireadrandom", "ops_per_sec", nullptr, "keys/s", true, ">= 1.30x",
       1.3, 0},
      {"multireadrandom", "block_reads_per_get", nullptr, "blk reads/key",
       false, "", 0, 0},
      {"multireadmissing", "ops_per_sec", nullptr, "keys/s", true, ">= 1.30x",
       1.3, 0},
      {"multireadmissing", "block_reads_per_get", nullptr, "blk reads/key",
       false, "", 0, 0},
      {"seekrandom", "ops_per_sec", nullptr, "seeks/s", true, ">= 2.00x", 2.0,
       0},
      {"seekrandom", "block_reads_per_seek", nullptr, "blk reads/Seek", false,
       "", 0, 0},
      {"scanrandom", "ops_per_sec", nullptr, "scans/s", true, ">= 1.50x", 1.5,
       0},
      {"scanrandom", "entries_per_sec", nullptr, "entries/s", true, "", 0, 0},
      {"scanrandom", "block_reads_per_seek", nullptr, "blk reads/Seek", false,
       "", 0, 0},
      {"seekbounded", "ops_per_sec", nullptr, "scans/s", true, "", 0, 0},
      {"seekbounded", "block_reads_per_seek", nullptr, "blk reads/Seek", false,
       "", 0, 0},
      {"readseq", "entries_per_sec", nullptr, "entries/s", true, ">= 1.30x",
       1.3, 0},
      {"readreverse", "entries_per_sec", nullptr, "entries/s", true, ">= 1.30x",
       1.3, 0},
      {"seekprefix", "ops_per_sec", nullptr, "seeks/s", true, "", 0, 0},
      {"seekprefix", "block_reads_per_seek", nullptr, "blk reads/Seek", false,
       "", 0, 0},
      {"seekprefixmissing", "ops_per_sec", nullptr, "seeks/s", true, "", 0, 0},
      {"seekprefixmissing", "block_reads_per_seek", nullptr, "blk reads/Seek",
       false, "", 0, 0},
      {"seekempty", "ops_per_sec", nullptr, "seeks/s", true, "", 0, 0},
      {"seekempty", "block_reads_per_seek", nullptr, "blk reads/Seek", false,
       "", 0, 0},
      {"ycsb_e", "ops_per_sec", nullptr, "ops/s", true, ">= 1.50x", 1.5, 0},
      {"ycsb_e", "latency_us", "p99", "p99 us", false, "", 0, 0},
  };
  const bool ycsb = s.sequence == "ycsb";
  const std::span<const Row> rows = ycsb ? std::span<const Row>(ycsb_rows)
                                         : std::span<const Row>(readamp_rows);
  const char* last_workload = "";
  for (const Row& row : rows) {
    // The range seeks run only with the settings they need.
    if (!runs.empty() && !runs.front()["results"].contains(row.workload)) {
      continue;
    }
    auto value = [&](const Json& r) {
      const Json& f = r["results"][row.workload][row.field];
      return row.sub ? f[row.sub].get<double>() : f.get<double>();
    };
    std::printf("%-17s %-14s",
                std::string(row.workload) == last_workload ? "" : row.workload,
                row.label);
    last_workload = row.workload;
    for (const Json& r : runs) {
      const double v = value(r);
      if (std::string_view(row.field).starts_with("block_reads_per")) {
        std::printf(" %12.4f", v);
      } else if (std::string_view(row.field) == "bytes_written") {
        std::printf(" %12.1f", v / 1e6);
      } else if (std::string_view(row.field).ends_with("_per_sec")) {
        std::printf(" %12.0f", v);
      } else {
        std::printf(" %12.2f", v);
      }
    }
    std::string ratio = "-", verdict;
    if (sift != nullptr && !peers.empty()) {
      double best = value(*peers[0]);
      for (const Json* p : peers) {
        best = row.higher_better ? std::max(best, value(*p))
                                 : std::min(best, value(*p));
      }
      const double mine = value(*sift);
      if (best > 0) ratio = absl::StrFormat("%.3fx", mine / best);
      const auto meets = [&](double bound) {
        return row.higher_better ? mine >= bound : mine <= bound;
      };
      if (row.target_ratio > 0) {
        verdict = meets(row.target_ratio * best) ? "met" : "MISSED";
      } else if (row.target_abs > 0) {
        verdict = meets(row.target_abs) ? "met" : "MISSED";
      }
    }
    std::printf(" %14s  %s%s%s\n", ratio.c_str(), row.target,
                verdict.empty() ? "" : " ", verdict.c_str());
  }
  if (ycsb) {
    std::printf("%-17s %-14s", "shape", "tables/level");
    for (const Json& r : runs) {
      std::vector<int> shape = r["files_per_level"].get<std::vector<int>>();
      while (shape.size() > 1 && shape.back() == 0) shape.pop_back();
      std::printf(" %12s", absl::StrJoin(shape, ",").c_str());
    }
    std::printf("\n");
    // What sift's writers waited for over the whole sequence, by cause: what
    // its longest Puts were made of.
    for (const Json& r : runs) {
      if (!r.contains("extra") || !r["extra"].contains("write_stalls"))
        continue;
      std::printf("\n%s write stalls, whole sequence:\n",
                  r["engine"].get<std::string>().c_str());
      for (const Json& line : r["extra"]["write_stalls"]) {
        std::printf("  %s\n", line.get<std::string>().c_str());
      }
    }
    std::printf(
        "\nycsb: a load of every key in random order, then A (50%% reads, "
        "50%% updates), B (95/5) and C (reads only), %s operations each "
        "with Zipfian keys, on %d thread(s), with no pause between them; then "
        "the tree settles and C runs again (C settled).\nMB written: bytes "
        "appended to table and log files while the phase ran (each engine's "
        "file layer wrapped to count them); ycsb_total: load, A, B and C.\n"
        "longest put us: the longest single Put (a write stall).\n",
        absl::StrCat(s.reads).c_str(), s.threads);
    return;
  }
  // Each engine's batched keys/s over its single-key Gets/s: the two sides
  // ran in alternating slices, so a drift in speed cancels out.
  const struct {
    const char* multi;
    const char* single;
    const char* label;
    double target;
  } speedups[] = {{"multireadrandom", "readrandom", "present keys", 1.3},
                  {"multireadmissing", "readmissing", "absent keys", 2.0}};
  for (const auto& u : speedups) {
    std::printf("%-17s %-14s",
                u.multi == speedups[0].multi ? "batched/single" : "", u.label);
    for (const Json& r : runs) {
      std::printf(" %11.3fx",
                  r["results"][u.multi]["ops_per_sec"].get<double>() /
                      r["results"][u.single]["ops_per_sec"].get<double>());
    }
    std::string verdict;
    if (sift != nullptr) {
      const Json& res = (*sift)["results"];
      verdict = res[u.multi]["ops_per_sec"].get<double>() >=
                        u.target * res[u.single]["ops_per_sec"].get<double>()
                    ? "met"
                    : "MISSED";
    }
    std::printf(" %14s  sift >= %.2fx %s\n", "-", u.target, verdict.c_str());
  }
  std::printf("%-17s %-14s", "table reads", "mode");
  for (const Json& r : runs) {
    std::printf(" %12s", r["read_mode"].get<std::string>().c_str());
  }
  std::printf("\n");
  std::printf("%-17s %-14s", "process", "peak RSS MiB");
  for (const Json& r : runs) {
    std::printf(" %12.1f", r["peak_rss_kib"].get<double>() / 1024);
  }
  std::printf("\n%-17s %-14s", "", "base RSS MiB");
  for (const Json& r : runs) {
    std::printf(" %12.1f", r["baseline_rss_kib"].get<double>() / 1024);
  }
  std::printf("\n%-17s %-14s", "", "peak anon MiB");
  for (const Json& r : runs) {
    std::printf(" %12.1f", r["peak_rss_anon_kib"].get<double>() / 1024);
  }
  std::printf("\n%-17s %-14s", "", "base anon MiB");
  for (const Json& r : runs) {
    std::printf(" %12.1f", r["baseline_rss_anon_kib"].get<double>() / 1024);
  }
  std::printf("\n%-17s %-14s", "shape", "tables/level");
  for (const Json& r : runs) {
    std::vector<int> shape = r["files_per_level"].get<std::vector<int>>();
    while (shape.size() > 1 && shape.back() == 0) shape.pop_back();
    std::printf(" %12s", absl::StrJoin(shape, ",").c_str());
  }
  std::printf("\n");
  if (sift != nullptr) {
    const Json& extra = (*sift)["extra"];
    const double filters = extra.contains("sift.filter-memory-bytes")
                               ? extra["sift.filter-memory-bytes"].get<double>()
                               : 0;
    const double budget_mib =
        (s.cache_size + 2.0 * s.write_buffer_size + filters) / 1048576.0 + 32;
    const double engine_mib = ((*sift)["peak_rss_anon_kib"].get<double>() -
                               (*sift)["baseline_rss_anon_kib"].get<double>()) /
                              1024;
    std::printf(
        "\nsift memory: peak anonymous RSS %.1f MiB, %.1f MiB above the "
        "process's baseline (keys and values: %.1f MiB); peak RSS with "
        "mapped table pages %.1f MiB;\nbudget: block cache + 2 memtables + "
        "filters (%.1f MiB) + 32 MiB = %.1f MiB (+ indexes) -> %s\n"
        "(anonymous memory: heap and stacks; pages of memory-mapped table "
        "files are page cache, reclaimable, and not counted.)\n",
        (*sift)["peak_rss_anon_kib"].get<double>() / 1024, engine_mib,
        (*sift)["baseline_rss_anon_kib"].get<double>() / 1024,
        (*sift)["peak_rss_kib"].get<double>() / 1024, filters / 1048576.0,
        budget_mib, engine_mib <= budget_mib ? "within" : "OVER");
  }
  std::printf(
      "\nblk reads/Get: random-access reads of table files by the reading "
      "thread, counted by a wrapper around each engine's file layer,\ndivided "
      "by Gets. LevelDB serves table reads from mmap'ed files (no block-cache "
      "copy), so each of its Gets touching a block counts one read.\n"
      "write amp: bytes appended to table and log files during fillrandom and "
      "the settling after it (each engine's file layer wrapped to count "
      "them),\ndivided by the key and value bytes put.\n");
}

int Main(int argc, char** argv) {
  PeerSettings s;
  std::string engines = "sift,leveldb,rocksdb";
  std::string dir;
  bool json = false;
  CLI::App app{"peer_bench: sift, LevelDB and RocksDB side by side"};
  app.option_defaults()->always_capture_default();
  app.add_option("--num", s.num, "Keys inserted in random order");
  app.add_option("--reads", s.reads, "Gets per read workload");
  app.add_option("--key_size", s.key_size, "Key bytes");
  app.add_option("--value_size", s.value_size, "Value bytes");
  app.add_option("--bits_per_key", s.bits_per_key, "Filter bits per key");
  app.add_option("--compression", s.compression,
                 "Block compression of every engine")
      ->check(CLI::IsMember({"none", "snappy"}));
  app.add_option("--scans", s.scans,
                 "Operations per scan workload (seekrandom, scanrandom, "
                 "seekbounded, seekprefix, seekprefixmissing, seekempty, "
                 "ycsb_e)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--key_format", s.key_format,
                 "Keys as zero-padded decimal numbers, or as binary "
                 "big-endian integers with empty ranges between them "
                 "(runs seekempty)")
      ->check(CLI::IsMember({"decimal", "binary"}));
  app.add_option("--prefix_len", s.prefix_len,
                 "Fixed prefix extractor of sift and RocksDB, in bytes, with "
                 "whole keys kept in the filters too (0: none; else runs "
                 "seekprefix and seekprefixmissing; LevelDB has no prefix "
                 "filters)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--range_bits", s.range_bits_per_key,
                 "sift's range filter bits per key (0: none, else 2 to 64; "
                 "LevelDB and RocksDB have no range filter)")
      ->check(CLI::Range(0.0, 64.0));
  app.add_option("--range_len", s.range_len,
                 "Absent integers per seekempty range")
      ->check(
          CLI::Range(uint64_t{1}, (uint64_t{1} << KeySpace::kBinaryShift) - 1));
  app.add_option("--sift_filter", s.sift_filter,
                 "sift's filter layout (LevelDB and RocksDB keep Bloom "
                 "filters)")
      ->check(CLI::IsMember({"blocked", "binary_fuse"}));
  app.add_option("--batch_size", s.batch_size,
                 "Keys per MultiGet in multireadrandom and multireadmissing")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--read_slices", s.read_slices,
                 "Slices in which each single-key read workload alternates "
                 "with its batched twin")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--sequence", s.sequence,
                 "readamp: a fill, then read and scan workloads on the "
                 "settled tree; ycsb: a load, then mixed reads and updates "
                 "(A, B, C; --reads operations each) with no pause, and C "
                 "again on the settled tree")
      ->check(CLI::IsMember({"readamp", "ycsb"}));
  app.add_option("--threads", s.threads,
                 "Threads of each phase of --sequence ycsb")
      ->check(CLI::Range(1, 64));
  app.add_option("--write_buffer_size", s.write_buffer_size,
                 "Memtable bytes of every engine");
  app.add_option("--max_file_size", s.max_file_size,
                 "Table file bytes of every engine");
  app.add_option("--cache_size", s.cache_size,
                 "Block cache bytes of every engine");
  app.add_option("--seed", s.seed, "Seed of keys, values and order");
  app.add_option("--engines", engines, "Comma-separated: sift,leveldb,rocksdb");
  app.add_option("--db", dir,
                 "Parent directory for the databases (default: a fresh "
                 "temporary directory, removed afterwards)");
  app.add_flag("--direct_reads", s.direct_reads,
               "Table reads with O_DIRECT: sift use_direct_reads, RocksDB "
               "use_direct_reads; LevelDB has no direct I/O and stays "
               "buffered");
  app.add_flag("--json", json,
               "One JSON document on stdout instead of a table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (absl::Status st = KeySpace::Validate(s.num, s.key_size, KeyFormatOf(s));
      !st.ok()) {
    std::fprintf(stderr, "peer_bench: %s\n", st.ToString().c_str());
    return 2;
  }
  if (s.prefix_len >= s.key_size) {
    std::fprintf(stderr, "peer_bench: --prefix_len must be below --key_size\n");
    return 2;
  }
  std::vector<std::string> names;
  for (absl::string_view n : absl::StrSplit(engines, ',', absl::SkipEmpty())) {
    if (n != "sift" && n != "leveldb" && n != "rocksdb") {
      std::fprintf(stderr, "peer_bench: unknown engine '%s'\n",
                   std::string(n.data(), n.size()).c_str());
      return 2;
    }
    names.emplace_back(n.data(), n.size());
  }
  bool remove_after = false;
  if (dir.empty()) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "peer_bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::fprintf(stderr, "peer_bench: cannot create %s\n", tmpl.c_str());
      return 1;
    }
    dir = tmpl;
    remove_after = true;
  } else {
    // A named parent is created if it is missing; each engine's own
    // directory below it is made fresh for its run.
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      std::fprintf(stderr, "peer_bench: cannot create %s: %s\n", dir.c_str(),
                   ec.message().c_str());
      return 1;
    }
  }
  std::vector<Json> runs;
  int rc = 0;
  for (const std::string& name : names) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    std::fprintf(stderr, "peer_bench: running %s in %s\n", name.c_str(),
                 path.c_str());
    absl::StatusOr<Json> r = RunInChild(name, s, path);
    std::filesystem::remove_all(path, ec);
    if (!r.ok()) {
      std::fprintf(stderr, "peer_bench: %s\n", r.status().ToString().c_str());
      rc = 1;
      break;
    }
    runs.push_back(*std::move(r));
  }
  if (remove_after) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  if (rc != 0) return rc;
  if (json) {
    Json doc;
    doc["settings"] = {{"num", s.num},
                       {"reads", s.reads},
                       {"key_size", s.key_size},
                       {"value_size", s.value_size},
                       {"block_size", s.block_size},
                       {"cache_size", s.cache_size},
                       {"write_buffer_size", s.write_buffer_size},
                       {"max_file_size", s.max_file_size},
                       {"bits_per_key", s.bits_per_key},
                       {"batch_size", s.batch_size},
                       {"read_slices", s.read_slices},
                       {"sift_filter", s.sift_filter},
                       {"direct_reads", s.direct_reads},
                       {"compression", s.compression},
                       {"scans", s.scans},
                       {"key_format", s.key_format},
                       {"prefix_len", s.prefix_len},
                       {"range_bits_per_key", s.range_bits_per_key},
                       {"range_len", s.range_len},
                       {"sequence", s.sequence},
                       {"threads", s.threads}};
    doc["runs"] = runs;
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    PrintTable(s, runs);
  }
  return 0;
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) { return sift::bench::Main(argc, argv); }
