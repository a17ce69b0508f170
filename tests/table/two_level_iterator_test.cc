#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "table/iterators.h"
#include "tests/table/vector_iterator.h"
#include "tests/testutil/testutil.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KVs;
using test::VectorIterator;

// Groups of entries (some empty) behind an index whose value is the group
// number. Keys are even numbers; an empty group's index key is odd, between
// its neighbours, as a table's separators would be.
struct Layout {
  std::vector<KVs> groups;
  KVs index;
  KVs all;  // the model: concatenation of the groups
};

Layout RandomLayout(Random* rnd, int num_groups, int max_group) {
  Layout l;
  uint64_t next = 0;
  for (int g = 0; g < num_groups; ++g) {
    KVs group;
    const int n =
        rnd->OneIn(3) ? 0 : static_cast<int>(rnd->Uniform(max_group + 1));
    for (int i = 0; i < n; ++i) {
      next += 2 * (1 + rnd->Uniform(3));
      group.emplace_back(test::NumberKey(next, 6), "v" + std::to_string(next));
    }
    const uint64_t index_key = group.empty() ? next + 1 : next;
    if (group.empty()) next += 2;
    l.index.emplace_back(test::NumberKey(index_key, 6), std::to_string(g));
    l.all.insert(l.all.end(), group.begin(), group.end());
    l.groups.push_back(std::move(group));
  }
  return l;
}

std::unique_ptr<Iterator> MakeTwoLevel(const Layout& l, int failing_group = -1,
                                       int* built = nullptr) {
  return NewTwoLevelIterator(
      std::make_unique<VectorIterator>(l.index),
      [&l, failing_group,
       built](std::string_view v) -> std::unique_ptr<Iterator> {
        const int g = std::stoi(std::string(v));
        if (built != nullptr) ++*built;
        if (g == failing_group)
          return NewEmptyIterator(absl::DataLossError("bad block"));
        return std::make_unique<VectorIterator>(l.groups[g]);
      });
}

TEST(TwoLevelIteratorTest, RandomOperationsMatchModel) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    Random rnd(seed);
    const Layout l = RandomLayout(&rnd, static_cast<int>(rnd.Uniform(12)),
                                  static_cast<int>(rnd.Uniform(6)));
    const KVs& model = l.all;
    auto it = MakeTwoLevel(l);
    size_t pos = model.size();
    for (int op = 0; op < 1000; ++op) {
      const uint64_t choice = rnd.Uniform(10);
      if (choice == 0) {
        it->SeekToFirst();
        pos = 0;
      } else if (choice == 1) {
        it->SeekToLast();
        pos = model.empty() ? 0 : model.size() - 1;
      } else if (choice == 2) {
        const std::string target = test::NumberKey(rnd.Uniform(200), 6);
        it->Seek(target);
        pos = std::lower_bound(model.begin(), model.end(), target,
                               [](const auto& kv, const std::string& t) {
                                 return kv.first < t;
                               }) -
              model.begin();
      } else if (pos < model.size()) {
        if (choice < 6) {
          it->Next();
          ++pos;
        } else {
          it->Prev();
          pos = pos == 0 ? model.size() : pos - 1;
        }
      }
      ASSERT_EQ(it->Valid(), pos < model.size()) << "op " << op;
      if (pos < model.size()) {
        ASSERT_EQ(it->key(), model[pos].first);
        ASSERT_EQ(it->value(), model[pos].second);
      }
      ASSERT_TRUE(it->status().ok());
    }
  }
}

TEST(TwoLevelIteratorTest, AllEmptyGroups) {
  Layout l;
  for (int g = 0; g < 5; ++g) {
    l.groups.emplace_back();
    l.index.emplace_back(test::NumberKey(g), std::to_string(g));
  }
  auto it = MakeTwoLevel(l);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST(TwoLevelIteratorTest, SeeksWithinOneGroupReuseTheSecondLevel) {
  Layout l;
  l.groups = {{{"a", "1"}, {"b", "2"}, {"c", "3"}}, {{"d", "4"}}};
  l.index = {{"c", "0"}, {"d", "1"}};
  int built = 0;
  auto it = MakeTwoLevel(l, -1, &built);
  it->Seek("a");
  it->Seek("b");
  it->Seek("c");
  EXPECT_EQ(built, 1);
  it->Seek("d");
  EXPECT_EQ(built, 2);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "4");
}

TEST(TwoLevelIteratorTest, FailedSecondLevelStopsWithItsError) {
  Layout l;
  l.groups = {{{"a", "1"}}, {{"b", "2"}}, {{"c", "3"}}};
  l.index = {{"a", "0"}, {"b", "1"}, {"c", "2"}};
  auto it = MakeTwoLevel(l, /*failing_group=*/1);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "a");
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsDataLoss(it->status()));
  it->SeekToFirst();  // sticky
  EXPECT_FALSE(it->Valid());

  auto back = MakeTwoLevel(l, 1);
  back->SeekToLast();
  ASSERT_TRUE(back->Valid());
  back->Prev();
  EXPECT_FALSE(back->Valid());
  EXPECT_TRUE(absl::IsDataLoss(back->status()));

  auto seek = MakeTwoLevel(l, 1);
  seek->Seek("b");
  EXPECT_FALSE(seek->Valid());
  EXPECT_FALSE(seek->status().ok());
}

TEST(TwoLevelIteratorTest, IndexErrorIsReported) {
  const std::vector<KVs> groups = {{{"a", "1"}}, {{"b", "2"}}};
  auto it = NewTwoLevelIterator(
      std::make_unique<VectorIterator>(KVs{{"a", "0"}, {"b", "1"}},
                                       /*fail_at=*/1),
      [&groups](std::string_view v) -> std::unique_ptr<Iterator> {
        return std::make_unique<VectorIterator>(
            groups[std::stoi(std::string(v))]);
      });
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Next();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsDataLoss(it->status()));
}

}  // namespace
}  // namespace sift
