// range_filter_bench: the range filter's (filter/range_filter.h) measured
// false-positive rate over empty ranges against its bound L / 2^(B-2),
// swept over bits per key B and range length L, with its size and its build
// and query times. Two query kinds: ranges at uniformly random places, and
// ranges starting just after a key (correlated with the keys).
//
//   range_filter_bench [--keys N] [--queries Q] [--bits 8,12,16]
//                      [--lengths 1,32,1024] [--seed S] [--svg FILE]
//
// Keys are N distinct uniform integers of a 2^48 space; only empty ranges
// count. Output: one line per (B, L); with --svg, the sweep drawn against
// the bound (false-positive rate over range length per B, and over B at
// L = 32 or the nearest length swept).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/kvbench/svg_plot.h"
#include "filter/range_filter.h"
#include "util/random.h"

namespace sift {
namespace {

struct Config {
  uint64_t keys = 1000000;
  uint64_t queries = 200000;
  std::vector<double> bits = {8, 10, 12, 14, 16, 18, 20, 24};
  std::vector<uint64_t> lengths = {1, 4, 16, 32, 64, 256, 1024, 4096, 65536};
  uint64_t seed = 301;
  std::string svg;  // empty: no plot
};

// One (B, L) of the sweep.
struct Point {
  double bits;
  uint64_t length;
  double bound;
  double fpr_uniform;
  double fpr_adjacent;
};

template <typename T>
bool ParseList(const char* text, std::vector<T>* out) {
  out->clear();
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    T v;
    if constexpr (std::is_same_v<T, double>) {
      if (!absl::SimpleAtod(part, &v)) return false;
    } else {
      if (!absl::SimpleAtoi(part, &v)) return false;
    }
    out->push_back(v);
  }
  return !out->empty();
}

bool ParseArgs(int argc, char** argv, Config* c) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    bool ok = true;
    if (flag == "--keys") {
      ok = absl::SimpleAtoi(value, &c->keys) && c->keys > 0;
    } else if (flag == "--queries") {
      ok = absl::SimpleAtoi(value, &c->queries) && c->queries > 0;
    } else if (flag == "--bits") {
      ok = ParseList(value, &c->bits);
      for (double b : c->bits) ok = ok && b >= 2;
    } else if (flag == "--lengths") {
      ok = ParseList(value, &c->lengths);
      for (uint64_t l : c->lengths) ok = ok && l >= 1;
    } else if (flag == "--seed") {
      ok = absl::SimpleAtoi(value, &c->seed);
    } else if (flag == "--svg") {
      c->svg = value;
    } else {
      ok = false;
    }
    if (!ok) return false;
  }
  return true;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

bool HasKeyIn(const std::vector<uint64_t>& sorted, uint64_t lo, uint64_t hi) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), lo);
  return it != sorted.end() && *it <= hi;
}

using bench::PlotPanel;
using bench::PlotSeries;
using bench::RenderSvg;

// The sweep against its bound: FPR over log2 L for each B (measured on
// ranges right after a key, the correlated case, and the bound), and FPR
// over B at the length nearest 32 (both query kinds and the bound).
std::string Plot(const Config& c, const std::vector<Point>& points,
                 size_t keys) {
  static const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                        "#d62728", "#9467bd", "#8c564b",
                                        "#e377c2", "#7f7f7f", "#bcbd22"};
  PlotPanel by_length;
  by_length.title = "FPR over range length (ranges right after a key)";
  by_length.x_label = "log2 of range length L";
  by_length.y_label = "false-positive rate";
  by_length.log_y = true;
  by_length.legend_bottom_left = false;
  for (size_t i = 0; i < c.bits.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    const std::string b = absl::StrFormat("B=%g", c.bits[i]);
    PlotSeries measured{"measured, " + b, color, false, true, {}};
    PlotSeries bound{"bound, " + b, color, true, false, {}};
    for (const Point& p : points) {
      if (p.bits != c.bits[i]) continue;
      const double x = std::log2(double(p.length));
      measured.points.emplace_back(x, p.fpr_adjacent);
      bound.points.emplace_back(x, std::min(1.0, p.bound));
    }
    by_length.series.push_back(std::move(measured));
    by_length.series.push_back(std::move(bound));
  }
  uint64_t at = c.lengths.front();
  for (uint64_t l : c.lengths) {
    if (std::fabs(std::log2(double(l)) - 5) <
        std::fabs(std::log2(double(at)) - 5)) {
      at = l;
    }
  }
  PlotPanel by_bits;
  by_bits.title = absl::StrCat("FPR over bits per key at L = ", at);
  by_bits.x_label = "bits per key B";
  by_bits.y_label = "false-positive rate";
  by_bits.log_y = true;
  PlotSeries uniform{"measured, uniform ranges", kColors[0], false, true, {}};
  PlotSeries adjacent{
      "measured, ranges after a key", kColors[1], false, true, {}};
  PlotSeries bound{"bound L / 2^(B-2)", kColors[3], true, false, {}};
  for (const Point& p : points) {
    if (p.length != at) continue;
    uniform.points.emplace_back(p.bits, p.fpr_uniform);
    adjacent.points.emplace_back(p.bits, p.fpr_adjacent);
    bound.points.emplace_back(p.bits, std::min(1.0, p.bound));
  }
  by_bits.series = {std::move(uniform), std::move(adjacent), std::move(bound)};
  return RenderSvg(
      "Range filter (Grafite design): measured false positives against the "
      "bound",
      {by_length, by_bits},
      absl::StrFormat("range_filter_bench: %u keys uniform in [0, 2^48), %u "
                      "empty ranges per kind and point, seed %u",
                      keys, c.queries, c.seed));
}

int Run(const Config& c) {
  constexpr uint64_t kSpace = uint64_t{1} << 48;
  Random rnd(c.seed);
  std::vector<uint64_t> keys;
  keys.reserve(c.keys);
  while (keys.size() < c.keys) keys.push_back(rnd.Uniform(kSpace));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::printf(
      "range filter (Grafite design): %zu keys in [0, 2^48), %llu "
      "empty ranges per kind\n",
      keys.size(), static_cast<unsigned long long>(c.queries));
  std::vector<Point> points;
  std::printf("%6s %7s %10s %12s %12s %8s %9s %9s %10s\n", "B", "L", "bits/key",
              "bound", "FPR uniform", "ratio", "FPR adj.", "build ns",
              "query ns");
  for (double bits : c.bits) {
    for (uint64_t length : c.lengths) {
      const auto t0 = std::chrono::steady_clock::now();
      RangeFilterBuilder builder(bits, length);
      for (uint64_t k : keys) builder.AddKey(k);
      const std::string serialized = builder.Finish();
      const double build_ns = Seconds(t0) * 1e9 / keys.size();
      auto reader = RangeFilterReader::Parse(serialized);
      if (!reader.ok()) {
        std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
        return 1;
      }
      const RangeFilterReader& r = **reader;
      // Empty ranges drawn first, so the timing covers the filter alone.
      std::vector<uint64_t> uniform, adjacent;
      while (uniform.size() < c.queries) {
        const uint64_t lo = rnd.Uniform(kSpace - length);
        if (!HasKeyIn(keys, lo, lo + length - 1)) uniform.push_back(lo);
      }
      while (adjacent.size() < c.queries) {
        const uint64_t lo = keys[rnd.Uniform(keys.size())] + 1;
        if (!HasKeyIn(keys, lo, lo + length - 1)) adjacent.push_back(lo);
      }
      const auto t1 = std::chrono::steady_clock::now();
      uint64_t fp_uniform = 0;
      for (uint64_t lo : uniform)
        fp_uniform += r.MayContain(lo, lo + length - 1);
      const double query_ns = Seconds(t1) * 1e9 / uniform.size();
      uint64_t fp_adjacent = 0;
      for (uint64_t lo : adjacent) {
        fp_adjacent += r.MayContain(lo, lo + length - 1);
      }
      const double bound = r.info().FprBound(length);
      const double fpr_uniform = double(fp_uniform) / uniform.size();
      std::printf("%6.1f %7llu %10.2f %12.6f %12.6f %8.3f %9.6f %9.1f %10.1f\n",
                  bits, static_cast<unsigned long long>(length),
                  r.info().bits_per_key(), bound, fpr_uniform,
                  bound > 0 ? fpr_uniform / bound : 0.0,
                  double(fp_adjacent) / adjacent.size(), build_ns, query_ns);
      std::fflush(stdout);
      points.push_back({bits, length, bound, fpr_uniform,
                        double(fp_adjacent) / adjacent.size()});
    }
  }
  if (!c.svg.empty()) {
    std::ofstream out(c.svg);
    out << Plot(c, points, keys.size());
    if (!out.good()) {
      std::fprintf(stderr, "cannot write %s\n", c.svg.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  sift::Config config;
  if (!sift::ParseArgs(argc, argv, &config)) {
    std::fprintf(
        stderr,
        "usage: range_filter_bench [--keys N] [--queries Q] "
        "[--bits B,B,..] [--lengths L,L,..] [--seed S] [--svg FILE]\n");
    return 2;
  }
  return sift::Run(config);
}
