// Many threads reading one table through one small, shared block cache (so
// blocks are evicted while others use them). Run under TSan by CI.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "table/table.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/cache.h"
#include "util/random.h"

namespace sift {
namespace {

TEST(TableConcurrencyTest, ParallelGetsAndScansAgreeWithTheModel) {
  const int n = test::Sanitized() ? 5000 : 20000;
  test::KVVector model;
  for (int i = 0; i < n; ++i) {
    model.emplace_back(test::NumberKey(2 * i), absl::StrCat("v", i));
  }
  auto env = test::NewTestEnv();
  auto cache = NewLRUCache(16 << 10);  // a few blocks: constant eviction
  TableOptions o;
  o.block_cache = cache.get();
  ASSERT_TRUE(test::WriteTable(env.get(), "/c.sst", o, model).ok());
  auto table = test::OpenTable(env.get(), "/c.sst", o);
  ASSERT_TRUE(table.ok()) << table.status();

  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Random rnd(100 + t);
      ReadOptions ro;
      ro.fill_cache = t % 2 == 0;
      for (int i = 0; i < n / 2; ++i) {
        const int k = static_cast<int>(rnd.Uniform(2 * n));
        auto v = test::TableGet(**table, ro, test::NumberKey(k));
        const bool ok = k % 2 == 0 ? v.ok() && *v == absl::StrCat("v", k / 2)
                                   : absl::IsNotFound(v.status());
        if (!ok) errors++;
      }
      auto it = (*table)->NewIterator(ro);
      int count = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (it->key() != model[count].first) errors++;
        ++count;
      }
      if (count != n || !it->status().ok()) errors++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
}  // namespace sift
