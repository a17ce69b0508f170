#include "bench/kvbench/parallel.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

namespace sift::bench {

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      lines_(!enabled && total >= kLinesFrom),
      start_ns_(NowNanos()) {
  if (enabled_) Draw(0);
}

Progress::~Progress() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
}

std::string Progress::RateAndEta(uint64_t done) const {
  const double secs = double(NowNanos() - start_ns_) / 1e9;
  const double rate = secs > 0 ? double(done) / secs : 0;
  char buf[128];
  if (rate <= 0 || done >= total_) {
    std::snprintf(buf, sizeof(buf), "%.0f ops/s, %.0f s", rate, secs);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f ops/s, ETA %.0f s", rate,
                  double(total_ - done) / rate);
  }
  return buf;
}

void Progress::Add(uint64_t n) {
  if (!enabled_ && !lines_) return;
  const uint64_t done = done_.fetch_add(n, std::memory_order_relaxed) + n;
  if (lines_) {
    const int tenths =
        static_cast<int>(std::min<uint64_t>(10, done * 10 / total_));
    int printed = tenths_printed_.load(std::memory_order_relaxed);
    if (tenths > printed &&
        tenths_printed_.compare_exchange_strong(printed, tenths)) {
      std::fprintf(stderr, "%s: %d%% (%llu of %llu, %s)\n", label_.c_str(),
                   tenths * 10, static_cast<unsigned long long>(done),
                   static_cast<unsigned long long>(total_),
                   RateAndEta(done).c_str());
      std::fflush(stderr);
    }
    return;
  }
  const int64_t now_ms = static_cast<int64_t>(NowNanos() / 1000000);
  int64_t last = last_draw_ms_.load(std::memory_order_relaxed);
  // One thread wins the right to draw each 100 ms.
  if (now_ms - last >= 100 &&
      last_draw_ms_.compare_exchange_strong(last, now_ms)) {
    Draw(done);
  }
}

void Progress::Draw(uint64_t done) {
  constexpr int kWidth = 40;
  const double frac =
      total_ == 0 ? 1.0 : std::min(1.0, double(done) / double(total_));
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r\033[K%-12s [%s] %5.1f%%  %s", label_.c_str(),
               bar.c_str(), frac * 100, RateAndEta(done).c_str());
  std::fflush(stderr);
}

absl::Status RunParallel(int threads, uint64_t total, Progress* progress,
                         const ThreadWork& work, ParallelResult* result) {
  threads = std::max(1, threads);
  std::vector<Histogram> latencies(threads);
  std::vector<absl::Status> statuses(threads);
  const uint64_t start = NowNanos();
  if (threads == 1) {
    statuses[0] = work(0, 0, total, &latencies[0], progress);
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (int t = 0; t < threads; ++t) {
      const uint64_t begin = total * t / threads;
      const uint64_t end = total * (t + 1) / threads;
      pool.emplace_back([&, t, begin, end] {
        statuses[t] = work(t, begin, end, &latencies[t], progress);
      });
    }
    for (std::thread& th : pool) th.join();
  }
  result->seconds = double(NowNanos() - start) / 1e9;
  result->latency_us.Clear();
  for (const Histogram& h : latencies) result->latency_us.Merge(h);
  for (const absl::Status& s : statuses) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace sift::bench
