#ifndef SIFT_TABLE_TABLE_OPTIONS_H_
#define SIFT_TABLE_TABLE_OPTIONS_H_

#include <cstddef>
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

  size_t block_size = 4 << 10;
  int block_restart_interval = 16;
  Compression compression = Compression::kSnappy;
  // 0: no filter block.
  double filter_bits_per_key = 10.0;
  FilterKind filter_kind = FilterKind::kBlockedBloom;

  // Cache of uncompressed data blocks, shared by all tables. Not owned;
  // nullptr: no caching.
  Cache* block_cache = nullptr;
};

}  // namespace sift

#endif  // SIFT_TABLE_TABLE_OPTIONS_H_
