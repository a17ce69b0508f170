// How much room a binary fuse filter needs to be built, measured: for a key
// count n, the share of random key sets whose fuse graph peels completely on
// the first attempt, by slots per key and segment length, for the 3-wise
// layout of format version 1 and the 4-wise layout of version 2. Both use the
// engine's own slot scheme (FuseSlotsOf in filter/fuse_probe.h). The writers'
// sizing rule (FuseLayoutFor in filter/fuse_math.cc) was chosen from these
// tables; doc/filters.md quotes them.
//
//   fuse_peel_bench [n] [trials] [--arity=3|4] [--log2=LO-HI]
//                   [--factors=LO-HI] [--step=S]
//     A sweep: every segment length 2^LO..2^HI (default: around the
//     writers' length for n) and slots per key LO..HI in steps of S
//     (default 1.10-1.30, 0.01). Defaults: n = 18000, 200 trials, both arities.
//   fuse_peel_bench --rule [trials] n...
//     The writers' layout for each n (both versions): slots per key and the
//     share of key sets that peel on the first attempt.

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "filter/fuse_math.h"
#include "filter/fuse_probe.h"
#include "util/random.h"

namespace sift {
namespace {

struct Graph {
  uint32_t arity;  // 3 or 4
  uint32_t segment_length_log2;
  uint64_t segment_count;  // starting segments

  uint64_t num_slots() const {
    return (segment_count + arity - 1) << segment_length_log2;
  }
  void SlotsOf(uint64_t g, uint64_t out[4]) const {
    const uint64_t range = segment_count << segment_length_log2;
    if (arity == 3) {
      const FuseSlots<3> s = FuseSlotsOf<3>(g, range, segment_length_log2);
      std::copy(s.slot, s.slot + 3, out);
    } else {
      const FuseSlots<4> s = FuseSlotsOf<4>(g, range, segment_length_log2);
      std::copy(s.slot, s.slot + 4, out);
    }
  }
};

// Whether every key of `hashes` (distinct) peels off `graph`.
bool Peels(const std::vector<uint64_t>& hashes, const Graph& graph) {
  std::vector<uint32_t> degree(graph.num_slots(), 0);
  std::vector<uint64_t> xors(graph.num_slots(), 0);
  uint64_t slots[4];
  for (uint64_t g : hashes) {
    graph.SlotsOf(g, slots);
    for (uint32_t j = 0; j < graph.arity; ++j) {
      ++degree[slots[j]];
      xors[slots[j]] ^= g;
    }
  }
  std::vector<uint64_t> stack;
  for (uint64_t i = 0; i < degree.size(); ++i) {
    if (degree[i] == 1) stack.push_back(i);
  }
  size_t peeled = 0;
  while (!stack.empty()) {
    const uint64_t i = stack.back();
    stack.pop_back();
    if (degree[i] != 1) continue;
    const uint64_t g = xors[i];
    ++peeled;
    graph.SlotsOf(g, slots);
    for (uint32_t j = 0; j < graph.arity; ++j) {
      --degree[slots[j]];
      xors[slots[j]] ^= g;
      if (degree[slots[j]] == 1) stack.push_back(slots[j]);
    }
  }
  return peeled == hashes.size();
}

// Share of `trials` random key sets of size n that peel off `graph`. Random
// 64-bit values stand for the remixed hashes; the same seed gives the same
// key sets to every row, so rows differ only in the graph.
double PeelRate(uint64_t n, int trials, const Graph& graph, uint64_t seed) {
  Random rng(seed);
  std::vector<uint64_t> hashes(n);
  int ok = 0;
  for (int t = 0; t < trials; ++t) {
    for (uint64_t& h : hashes) h = rng.Next64();
    ok += Peels(hashes, graph) ? 1 : 0;
  }
  return static_cast<double>(ok) / trials;
}

struct SweepOptions {
  uint64_t n = 18000;
  int trials = 200;
  std::vector<uint32_t> arities = {3, 4};
  int log2_lo = -1, log2_hi = -1;  // -1: around the writers' length
  double factor_lo = 1.10, factor_hi = 1.30, step = 0.01;
};

void Sweep(const SweepOptions& o) {
  std::printf("n = %" PRIu64 ", %d random key sets per row\n", o.n, o.trials);
  std::printf("arity  segment  slots/key  peeled\n");
  for (uint32_t arity : o.arities) {
    const int center = static_cast<int>(FuseSegmentLengthLog2(o.n, arity));
    const int lo = o.log2_lo >= 0 ? o.log2_lo : std::max(0, center - 2);
    const int hi = o.log2_hi >= 0 ? o.log2_hi : center + 1;
    for (int log2 = lo; log2 <= hi; ++log2) {
      uint64_t last_slots = 0;  // factors that round to the same segments
      for (double factor = o.factor_lo; factor <= o.factor_hi + 1e-9;
           factor += o.step) {
        const uint64_t length = uint64_t{1} << log2;
        const uint64_t segments =
            (static_cast<uint64_t>(factor * static_cast<double>(o.n)) + length -
             1) /
            length;
        if (segments <= arity) continue;
        const Graph graph{arity, static_cast<uint32_t>(log2),
                          segments - (arity - 1)};
        if (graph.num_slots() == last_slots) continue;
        last_slots = graph.num_slots();
        const double rate =
            PeelRate(o.n, o.trials, graph, 301 + log2 * 7 + arity);
        std::printf(
            "%5u  2^%-5d  %9.3f  %5.1f%%\n", arity, log2,
            static_cast<double>(graph.num_slots()) / static_cast<double>(o.n),
            100.0 * rate);
        std::fflush(stdout);
      }
    }
  }
}

// The writers' layouts (FuseLayoutFor) for each n, both versions.
void Rule(int trials, const std::vector<uint64_t>& counts) {
  std::printf("%d random key sets per row\n", trials);
  std::printf("%9s  %5s  %7s  %9s  %9s  %9s\n", "n", "arity", "segment",
              "segments", "slots/key", "peeled");
  for (uint64_t n : counts) {
    for (uint32_t arity : {3u, 4u}) {
      const FuseLayout layout = FuseLayoutFor(n, 8, arity);
      const Graph graph{arity, layout.segment_length_log2,
                        layout.segment_count};
      const double rate = PeelRate(n, trials, graph, 17 + n * 3 + arity);
      std::printf(
          "%9" PRIu64 "  %5u  2^%-5u  %9" PRIu64 "  %9.3f  %8.1f%%\n", n, arity,
          layout.segment_length_log2, layout.segment_count,
          static_cast<double>(layout.num_slots()) / static_cast<double>(n),
          100.0 * rate);
      std::fflush(stdout);
    }
  }
}

bool ParseRange(const char* s, double* lo, double* hi) {
  char* end = nullptr;
  *lo = std::strtod(s, &end);
  if (end == s || *end != '-') return false;
  const char* second = end + 1;
  *hi = std::strtod(second, &end);
  return end != second && *end == '\0' && *lo <= *hi;
}

int Usage() {
  std::fprintf(stderr,
               "usage: fuse_peel_bench [n >= 2] [trials >= 1] [--arity=3|4] "
               "[--log2=LO-HI] [--factors=LO-HI] [--step=S]\n"
               "       fuse_peel_bench --rule [trials] n...\n");
  return 2;
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  using sift::Usage;
  if (argc > 1 && std::strcmp(argv[1], "--rule") == 0) {
    if (argc < 4) return Usage();
    const int trials = std::atoi(argv[2]);
    std::vector<uint64_t> counts;
    for (int i = 3; i < argc; ++i) {
      const uint64_t n = std::strtoull(argv[i], nullptr, 10);
      if (n < 1) return Usage();
      counts.push_back(n);
    }
    if (trials < 1) return Usage();
    sift::Rule(trials, counts);
    return 0;
  }
  sift::SweepOptions o;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    double lo, hi;
    if (arg.rfind("--arity=", 0) == 0) {
      const int a = std::atoi(arg.c_str() + 8);
      if (a != 3 && a != 4) return Usage();
      o.arities = {static_cast<uint32_t>(a)};
    } else if (arg.rfind("--log2=", 0) == 0) {
      if (!sift::ParseRange(arg.c_str() + 7, &lo, &hi) || hi > 18) {
        return Usage();
      }
      o.log2_lo = static_cast<int>(lo);
      o.log2_hi = static_cast<int>(hi);
    } else if (arg.rfind("--factors=", 0) == 0) {
      if (!sift::ParseRange(arg.c_str() + 10, &lo, &hi) || lo < 1) {
        return Usage();
      }
      o.factor_lo = lo;
      o.factor_hi = hi;
    } else if (arg.rfind("--step=", 0) == 0) {
      o.step = std::atof(arg.c_str() + 7);
      if (!(o.step > 0)) return Usage();
    } else if (positional == 0) {
      o.n = std::strtoull(arg.c_str(), nullptr, 10);
      ++positional;
    } else if (positional == 1) {
      o.trials = std::atoi(arg.c_str());
      ++positional;
    } else {
      return Usage();
    }
  }
  if (o.n < 2 || o.trials < 1) return Usage();
  sift::Sweep(o);
  return 0;
}
