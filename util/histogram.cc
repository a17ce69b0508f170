#include "util/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace sift {
namespace {

// Bounds 1, 2, ..., 10, then steps of about 15% rounded to two significant
// digits (12, 14, 16, 18, 21, 24, ...), up to 1e15; the last bound is +inf.
std::vector<double> MakeBucketLimits() {
  std::vector<double> limits;
  double v = 1;
  while (v < 1e15) {
    limits.push_back(v);
    double next = v * 1.15;
    const double scale = std::pow(10.0, std::floor(std::log10(next)) - 1);
    next = std::round(next / scale) * scale;
    v = std::max(next, v + 1);
  }
  limits.push_back(std::numeric_limits<double>::infinity());
  return limits;
}

}  // namespace

const std::vector<double>& Histogram::BucketLimits() {
  static const std::vector<double>* const kLimits =
      new std::vector<double>(MakeBucketLimits());
  return *kLimits;
}

Histogram::Histogram() { Clear(); }

void Histogram::Clear() {
  min_ = std::numeric_limits<double>::infinity();
  max_ = -std::numeric_limits<double>::infinity();
  count_ = 0;
  sum_ = 0;
  sum_squares_ = 0;
  buckets_.assign(BucketLimits().size(), 0);
}

void Histogram::Add(double value) {
  const std::vector<double>& limits = BucketLimits();
  // The first bound strictly above `value` names its bucket.
  const size_t b = std::upper_bound(limits.begin(), limits.end() - 1, value) -
                   limits.begin();
  ++buckets_[b];
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  ++count_;
  sum_ += value;
  sum_squares_ += value * value;
}

void Histogram::Merge(const Histogram& other) {
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
  for (size_t b = 0; b < buckets_.size(); ++b) buckets_[b] += other.buckets_[b];
}

double Histogram::Min() const { return count_ == 0 ? 0 : min_; }
double Histogram::Max() const { return count_ == 0 ? 0 : max_; }

double Histogram::Mean() const {
  return count_ == 0 ? 0 : sum_ / static_cast<double>(count_);
}

double Histogram::StandardDeviation() const {
  if (count_ == 0) return 0;
  const double n = static_cast<double>(count_);
  const double variance = (sum_squares_ * n - sum_ * sum_) / (n * n);
  return variance <= 0 ? 0 : std::sqrt(variance);
}

double Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  const std::vector<double>& limits = BucketLimits();
  const double threshold = static_cast<double>(count_) * (p / 100.0);
  double cumulative = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (buckets_[b] == 0) continue;
    const double before = cumulative;
    cumulative += static_cast<double>(buckets_[b]);
    if (cumulative >= threshold) {
      // Interpolate inside the bucket, whose real extent is narrowed to the
      // samples actually seen (this also tames the infinite end buckets).
      const double left = std::max(b == 0 ? min_ : limits[b - 1], min_);
      const double right = std::min(limits[b], max_);
      const double fraction =
          (threshold - before) / static_cast<double>(buckets_[b]);
      return std::clamp(left + (right - left) * fraction, min_, max_);
    }
  }
  return max_;
}

std::string Histogram::ToString() const {
  std::string r = absl::StrFormat(
      "Count: %d  Mean: %.4f  StdDev: %.2f\n"
      "Min: %.4f  Median: %.4f  Max: %.4f\n"
      "P99: %.4f  P99.9: %.4f\n",
      count_, Mean(), StandardDeviation(), Min(), Median(), Max(),
      Percentile(99), Percentile(99.9));
  if (count_ == 0) return r;
  r.append("------------------------------------------------------\n");
  const std::vector<double>& limits = BucketLimits();
  const double total = static_cast<double>(count_);
  uint64_t cumulative = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (buckets_[b] == 0) continue;
    cumulative += buckets_[b];
    const double share = static_cast<double>(buckets_[b]) / total;
    const double left =
        b == 0 ? -std::numeric_limits<double>::infinity() : limits[b - 1];
    // One '#' per 5% of the samples.
    const int bar = static_cast<int>(std::lround(share * 20));
    absl::StrAppendFormat(&r, "[ %10g, %10g ) %10d %7.3f%% %7.3f%% %s\n", left,
                          limits[b], buckets_[b], 100 * share,
                          100 * static_cast<double>(cumulative) / total,
                          std::string(bar, '#'));
  }
  return r;
}

}  // namespace sift
