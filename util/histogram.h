#ifndef SIFT_UTIL_HISTOGRAM_H_
#define SIFT_UTIL_HISTOGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace sift {

// Distribution of non-negative samples (latencies in microseconds, sizes).
// Samples fall into buckets whose bounds grow by about 15% each, so a
// percentile is exact to within its bucket (linear interpolation inside the
// bucket, clamped to the observed min and max). Count, sum, min, max, mean and
// standard deviation are exact. Negative samples count into the first bucket.
//
// Thread safety: not safe for concurrent use; give each thread its own and
// Merge them.
class Histogram {
 public:
  Histogram();

  void Clear();
  void Add(double value);
  // Add every sample of `other`.
  void Merge(const Histogram& other);

  uint64_t Count() const { return count_; }
  double Sum() const { return sum_; }
  // 0 when empty.
  double Min() const;
  double Max() const;
  double Mean() const;
  double StandardDeviation() const;
  // The value below which `p` percent of the samples fall, estimated by
  // interpolating within a bucket. REQUIRES: 0 <= p <= 100. 0 when empty.
  double Percentile(double p) const;
  double Median() const { return Percentile(50.0); }

  // Summary lines (count, mean, stddev, min, median, max, p99, p99.9) and a
  // table of the non-empty buckets with their share and an ASCII bar.
  std::string ToString() const;

  // Upper bounds of the buckets: bucket i holds [BucketLimit(i-1),
  // BucketLimit(i)); bucket 0 starts at -infinity and the last bound is
  // +infinity.
  static const std::vector<double>& BucketLimits();

 private:
  double min_;
  double max_;
  uint64_t count_;
  double sum_;
  double sum_squares_;
  std::vector<uint64_t> buckets_;
};

}  // namespace sift

#endif  // SIFT_UTIL_HISTOGRAM_H_
