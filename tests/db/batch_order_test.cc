// BatchOrder: a permutation that puts any batch in the user comparator's
// order, whichever path orders it (ranking on 32 or 64 bits of prefix, or
// the comparison sort for ties, large batches and other comparators).

#include "db/batch_order.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testutil/testutil.h"
#include "util/comparator.h"
#include "util/random.h"

namespace sift {
namespace {

void ExpectOrdered(const Comparator* ucmp,
                   const std::vector<std::string>& keys) {
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<uint32_t> order(keys.size());
  BatchOrder(ucmp, views, absl::MakeSpan(order));
  ASSERT_EQ(order.size(), keys.size());
  std::vector<bool> seen(keys.size());
  for (const uint32_t i : order) {
    ASSERT_LT(i, keys.size());
    ASSERT_FALSE(seen[i]) << "index " << i << " twice";
    seen[i] = true;
  }
  for (size_t i = 1; i < order.size(); ++i) {
    ASSERT_LE(ucmp->Compare(keys[order[i - 1]], keys[order[i]]), 0)
        << "batch of " << keys.size() << ": "
        << testing::PrintToString(keys[order[i - 1]]) << " before "
        << testing::PrintToString(keys[order[i]]);
  }
}

// Key shapes that take each path: zero-padded numbers (a long common
// prefix, ties in the first 32 bits of what follows), random bytes (unique in
// 32 bits), keys equal for their first 12 bytes after a shared part (ties in
// 32 bits, unique in 64), keys that differ only past 8 bytes (ties in 64),
// prefixes of each other, all-ones bytes, and duplicates.
std::string RandomKey(Random& rnd, int shape) {
  switch (shape) {
    case 0: {
      const std::string digits = std::to_string(rnd.Uniform(2000000));
      return std::string(16 - digits.size(), '0') + digits;
    }
    case 1: {
      std::string key(1 + rnd.Uniform(20), '\0');
      for (char& c : key) c = static_cast<char>(rnd.Uniform(256));
      return key;
    }
    case 2:
      return "tbl:" + std::string(12, 'x') + std::to_string(rnd.Uniform(1000));
    case 3:
      return "p" + std::string(10, 'q') + std::to_string(rnd.Uniform(50));
    case 4:
      return std::string(rnd.Uniform(12), rnd.OneIn(2) ? '\xff' : '\0');
    default:
      return std::string(1 + rnd.Uniform(3), 'a' + rnd.Uniform(3));
  }
}

TEST(BatchOrderTest, AnyBatchComesOutInOrder) {
  Random rnd(301);
  test::ReverseComparator reverse;
  for (int round = 0; round < 3000; ++round) {
    // Mostly batches the ranking takes (up to 64 keys), some larger.
    const size_t size = rnd.Uniform(round % 4 == 0 ? 300 : 65);
    const int shape = static_cast<int>(rnd.Uniform(7));  // 6: mixed shapes
    std::vector<std::string> keys;
    for (size_t i = 0; i < size; ++i) {
      keys.push_back(rnd.OneIn(20) && !keys.empty()
                         ? keys[rnd.Uniform(keys.size())]  // a duplicate
                         : RandomKey(rnd, shape == 6
                                              ? static_cast<int>(rnd.Uniform(6))
                                              : shape));
    }
    ASSERT_NO_FATAL_FAILURE(ExpectOrdered(BytewiseComparator(), keys));
    if (round % 10 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectOrdered(&reverse, keys));
    }
  }
}

}  // namespace
}  // namespace sift
