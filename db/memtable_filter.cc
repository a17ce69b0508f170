#include "db/memtable_filter.h"

#include <algorithm>

#include "filter/bloom_probe.h"
#include "util/hash.h"

namespace sift {

MemTableFilter::MemTableFilter(size_t bytes)
    : num_lines_(std::max<uint64_t>(1, (bytes + 63) / 64)),
      words_(new std::atomic<uint64_t>[num_lines_ * kLineWords]) {
  for (uint64_t i = 0; i < num_lines_ * kLineWords; ++i) {
    words_[i].store(0, std::memory_order_relaxed);
  }
}

void MemTableFilter::Add(std::string_view user_key) {
  const uint64_t h = Hash64(user_key, kDefaultFilterSeed);
  std::atomic<uint64_t>* line = &words_[LineStart(h)];
  uint64_t mask[kLineWords] = {};
  BlockedMask(h, kNumProbes, mask);
  for (uint32_t w = 0; w < kLineWords; ++w) {
    if (mask[w] != 0) line[w].fetch_or(mask[w], std::memory_order_relaxed);
  }
}

bool MemTableFilter::MayContain(std::string_view user_key) const {
  FilterKeyHash key(user_key);
  return MayContain(&key);
}

}  // namespace sift
