#include "db/level_bounds.h"

#include <algorithm>

namespace sift {

namespace {

struct Range {
  size_t lo;
  size_t hi;
};

// Narrows [from, n) around the first file that does not end before the key,
// for a batch's sorted keys, whose file is usually `from` or close after it:
// steps of 1, 2, 4... from `from`. Files before the returned lo end before
// the key; the file at hi (if hi < n) does not. `ends_before` is monotone
// (true, then false). From 0, the whole range, for a plain binary search.
template <typename EndsBefore>
Range Gallop(size_t from, size_t n, EndsBefore ends_before) {
  Range r{from, n};
  if (from == 0) return r;
  size_t step = 1;
  size_t probe = from;
  while (probe < n && ends_before(probe)) {
    r.lo = probe + 1;
    probe = r.lo + step;
    step *= 2;
  }
  if (probe < n) r.hi = probe + 1;  // ends_before(probe) is false
  return r;
}

}  // namespace

void LevelBounds::Build(const InternalKeyComparator& icmp,
                        const FileList& files) {
  usable_ = false;
  common_.clear();
  smallest_.clear();
  largest_.clear();
  if (files.empty() || icmp.user_comparator() != BytewiseComparator()) return;
  // The prefix every file's smallest and largest user key starts with: any
  // key between two keys that share a prefix shares it too.
  const std::string_view first = files.front()->smallest.user_key();
  size_t common = first.size();
  for (const auto& f : files) {
    for (const std::string_view key :
         {f->smallest.user_key(), f->largest.user_key()}) {
      size_t i = 0;
      const size_t n = std::min(common, key.size());
      while (i < n && key[i] == first[i]) ++i;
      common = i;
    }
  }
  common_.assign(first.data(), common);
  smallest_.reserve(files.size());
  largest_.reserve(files.size() + kLinearSteps);
  for (const auto& f : files) {
    smallest_.push_back(Window(f->smallest.user_key()));
    largest_.push_back(Window(f->largest.user_key()));
  }
  largest_.insert(largest_.end(), kLinearSteps, ~uint64_t{0});
  usable_ = true;
}

size_t LevelBounds::Search(const InternalKeyComparator& icmp,
                           const FileList& files, std::string_view internal_key,
                           const Position& position, size_t from) const {
  const size_t n = files.size();
  const uint64_t window = position.window;
  switch (position.side) {
    case Position::Side::kBefore:
      return from;  // before every key of the level
    case Position::Side::kAfter:
      return n;
    case Position::Side::kCompare: {
      const Range r = Gallop(from, n, [&](size_t i) {
        return icmp.Compare(files[i]->largest.Encode(), internal_key) < 0;
      });
      return FindFileBetween(icmp, files, internal_key, r.lo, r.hi);
    }
    case Position::Side::kInside:
      break;
  }
  const Range r =
      Gallop(from, n, [&](size_t i) { return largest_[i] < window; });
  const auto begin = largest_.begin();
  const size_t lo =
      std::lower_bound(begin + r.lo, begin + r.hi, window) - begin;
  // Files before lo end before the key, and files from the first with a
  // larger window on end after it. The files in between end in the key's
  // window, and only a compare of the keys tells.
  if (lo == n || largest_[lo] != window) return lo;
  const size_t hi = std::upper_bound(begin + lo, begin + n, window) - begin;
  return FindFileBetween(icmp, files, internal_key, lo, hi);
}

size_t FindFileBetween(const InternalKeyComparator& icmp, const FileList& files,
                       std::string_view internal_key, size_t lo, size_t hi) {
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (icmp.Compare(files[mid]->largest.Encode(), internal_key) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace sift
