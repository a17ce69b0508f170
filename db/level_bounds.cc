#include "db/level_bounds.h"

#include <algorithm>

namespace sift {

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
  largest_.reserve(files.size());
  for (const auto& f : files) {
    smallest_.push_back(Window(f->smallest.user_key()));
    largest_.push_back(Window(f->largest.user_key()));
  }
  usable_ = true;
}

size_t LevelBounds::Search(const InternalKeyComparator& icmp,
                           const FileList& files, std::string_view internal_key,
                           const Position& position, size_t from) const {
  switch (position.side) {
    case Position::Side::kBefore:
      return from;  // before every key of the level
    case Position::Side::kAfter:
      return files.size();
    case Position::Side::kInside:
      break;
  }
  const uint64_t window = position.window;
  const auto begin = largest_.begin();
  const size_t n = largest_.size();
  // Invariant: files before lo end in a smaller window.
  size_t lo = from;
  size_t hi = n;
  if (from != 0) {
    // A batch's sorted keys: the file is usually `from` or close after it,
    // so gallop before the binary search.
    size_t step = 1;
    size_t probe = from;
    while (probe < n && largest_[probe] < window) {
      lo = probe + 1;
      probe = lo + step;
      step *= 2;
    }
    if (probe < n) hi = probe + 1;  // largest_[probe] >= window
  }
  lo = std::lower_bound(begin + lo, begin + hi, window) - begin;
  // Files before lo end before the key, and files from the first with a
  // larger window on end after it. The files in between end in the key's
  // window, and only a compare of the keys tells.
  if (lo == n || largest_[lo] != window) return lo;
  hi = std::upper_bound(begin + lo, largest_.end(), window) - begin;
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
