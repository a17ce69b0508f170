#ifndef SIFT_TABLE_TABLE_OPTIONS_H_
#define SIFT_TABLE_TABLE_OPTIONS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "sift/options.h"
#include "util/cache.h"
#include "util/comparator.h"

namespace sift {

// What a table builder and reader need to know. The table layer knows nothing
// of the DB: the DB stores internal keys in tables and supplies `filter_key`
// so that the filter is built over (and queried with) user keys.
struct TableOptions {
  // Order of the keys in the table. Not owned.
  const Comparator* comparator = BytewiseComparator();

  // The part of a stored key that the filter covers. nullptr: the whole key.
  // Must return a view into its argument.
  std::string_view (*filter_key)(std::string_view key) = nullptr;

  // The part of a stored key that ReadOptions::iterate_lower_bound and
  // iterate_upper_bound bound, compared bytewise. nullptr: the whole key.
  // Must return a view into its argument, and be monotone: a key after
  // another in `comparator` order has a user key at or after the other's.
  std::string_view (*user_key)(std::string_view key) = nullptr;
  // Appends to *dst the first stored key (in `comparator` order) whose
  // user_key is `user_key`: where a table iterator seeks to find the last
  // entry before an upper bound. nullptr: stored keys are user keys.
  void (*seek_key)(std::string_view user_key, std::string* dst) = nullptr;

  size_t block_size = 4 << 10;
  int block_restart_interval = 16;
  Compression compression = Compression::kSnappy;
  // 0: no filter block.
  double filter_bits_per_key = 10.0;
  FilterKind filter_kind = FilterKind::kBlockedBloom;
  // Write a kBlockedBloom filter as independent units (filter/modular_bloom.h)
  // whose resident number can change while the table is open: what a memory
  // limit on filters needs (Options::filter_memory_limit). Other kinds are
  // written whole.
  bool modular_filter = false;
  // Also add the prefix of each filter key in its domain to the filter, and
  // answer Table::PrefixMayMatch for tables written with an extractor of the
  // same Name(). nullptr: no prefixes.
  std::shared_ptr<const PrefixExtractor> prefix_extractor;
  // Add whole filter keys to the filter (false: prefixes only; point lookups
  // then treat the table as having no filter).
  bool whole_key_filtering = true;
  // Bits per key of the table's range filter over filter keys
  // (filter/range_filter.h, keys mapped by RangeFilterKeyMap); 0: none.
  double range_filter_bits_per_key = 0.0;
  // The range length, in mapped integers, the range filter's bound is for.
  uint64_t range_filter_block_length = 32;

  // Cache of uncompressed data blocks, shared by all tables. Not owned;
  // nullptr: no caching.
  Cache* block_cache = nullptr;
};

}  // namespace sift

#endif  // SIFT_TABLE_TABLE_OPTIONS_H_
