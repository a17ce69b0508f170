#include "db/probe_shares.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace sift {

KeySpan SpanOf(const FileMetaData& f) {
  return KeySpan{std::string(f.smallest.user_key()),
                 std::string(f.largest.user_key()),
                 static_cast<double>(f.file_size)};
}

double ProbeShare(absl::Span<const KeySpan> run,
                  absl::Span<const KeySpan> data) {
  // The run's coverage as disjoint ranges sorted by key, each a [first,
  // last] pair of views into `run`.
  std::vector<std::pair<const std::string*, const std::string*>> cover;
  cover.reserve(run.size());
  for (const KeySpan& s : run) cover.emplace_back(&s.smallest, &s.largest);
  std::sort(cover.begin(), cover.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  size_t merged = 0;
  for (size_t i = 0; i < cover.size(); ++i) {
    if (merged > 0 && *cover[i].first <= *cover[merged - 1].second) {
      if (*cover[i].second > *cover[merged - 1].second) {
        cover[merged - 1].second = cover[i].second;
      }
    } else {
      cover[merged++] = cover[i];
    }
  }
  cover.resize(merged);

  // Whether `key` lies inside one of the ranges.
  auto covered = [&](const std::string& key) {
    const auto it =
        std::upper_bound(cover.begin(), cover.end(), key,
                         [](const std::string& k, const auto& range) {
                           return k < *range.first;
                         });
    return it != cover.begin() && key <= *std::prev(it)->second;
  };
  double total = 0;
  double inside = 0;
  for (const KeySpan& d : data) {
    total += d.bytes;
    // The first range that ends at or after the table's first key.
    const auto it =
        std::lower_bound(cover.begin(), cover.end(), d.smallest,
                         [](const auto& range, const std::string& key) {
                           return *range.second < key;
                         });
    if (it == cover.end() || *it->first > d.largest) continue;  // outside
    // Both ends inside (in one range, or in two of a level's neighbouring
    // tables, with at most a sliver between them): the table counts whole.
    const bool whole = covered(d.smallest) && covered(d.largest);
    inside += whole ? d.bytes : d.bytes / 2;
  }
  return total > 0 ? inside / total : 1.0;
}

std::vector<std::vector<double>> TreeProbeShares(
    const std::vector<std::vector<KeySpan>>& levels) {
  std::vector<KeySpan> data;
  for (const auto& level : levels)
    data.insert(data.end(), level.begin(), level.end());
  std::vector<std::vector<double>> shares(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    if (l == 0) {
      for (const KeySpan& table : levels[0]) {
        shares[0].push_back(ProbeShare({&table, 1}, data));
      }
    } else if (!levels[l].empty()) {
      shares[l].assign(levels[l].size(), ProbeShare(levels[l], data));
    }
  }
  return shares;
}

}  // namespace sift
