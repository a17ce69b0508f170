// How much room a binary fuse filter needs to be built, measured: for a key
// count n, the share of random key sets whose fuse graph peels completely,
// by slots per key and segment length. 3-wise graphs use the engine's own
// slot scheme (FuseSlotsOf in filter/fuse_probe.h); 4-wise graphs extend it
// by one segment, to show what that layout would save. doc/filters.md quotes
// the result for n = 18,000 (a 2 MiB table of 16-byte keys, 100-byte values).
//
//   fuse_peel_bench [n] [trials]        (defaults 18000 and 200)

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "filter/bloom_probe.h"
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
  // The key's slots: the engine's three, and for arity 4 one more in the
  // segment after them (offset from bits the other three do not use).
  void SlotsOf(uint64_t g, uint64_t out[4]) const {
    const uint64_t range = segment_count << segment_length_log2;
    const FuseSlots s = FuseSlotsOf(g, range, segment_length_log2);
    const uint64_t length = uint64_t{1} << segment_length_log2;
    out[0] = s.slot[0];
    out[1] = s.slot[1];
    out[2] = s.slot[2];
    out[3] = (s.slot[0] + 3 * length) ^ ((g >> 36) & (length - 1));
  }
};

// Whether every key of `hashes` peels off `graph`.
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

void Run(uint64_t n, int trials) {
  std::printf("n = %" PRIu64 ", %d random key sets per row\n", n, trials);
  std::printf("arity  segment  slots/key  peeled\n");
  const uint32_t paper_log2 = FuseSegmentLengthLog2(n);
  for (uint32_t arity : {3u, 4u}) {
    for (uint32_t log2 = paper_log2 - 3; log2 <= paper_log2; ++log2) {
      uint64_t last_slots = 0;  // factors that round to the same segments
      for (double factor : {1.25, 1.22, 1.19, 1.17, 1.15, 1.13}) {
        const uint64_t length = uint64_t{1} << log2;
        const uint64_t segments =
            (static_cast<uint64_t>(factor * static_cast<double>(n)) + length -
             1) /
            length;
        if (segments <= arity) continue;
        const Graph graph{arity, log2, segments - (arity - 1)};
        if (graph.num_slots() == last_slots) continue;
        last_slots = graph.num_slots();
        Random rng(301 + log2 * 7 + arity);
        int ok = 0;
        std::vector<uint64_t> hashes(n);
        for (int t = 0; t < trials; ++t) {
          for (uint64_t& h : hashes) h = rng.Next64();
          ok += Peels(hashes, graph) ? 1 : 0;
        }
        std::printf(
            "%5u  2^%-5u  %9.3f  %5.1f%%\n", arity, log2,
            static_cast<double>(graph.num_slots()) / static_cast<double>(n),
            100.0 * ok / trials);
      }
    }
  }
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 18000;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 200;
  if (n < 1000 || trials < 1) {
    std::fprintf(stderr, "usage: fuse_peel_bench [n >= 1000] [trials >= 1]\n");
    return 2;
  }
  sift::Run(n, trials);
  return 0;
}
