#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "table/iterators.h"
#include "tests/table/vector_iterator.h"
#include "tests/testutil/testutil.h"
#include "util/comparator.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KVs;
using test::VectorIterator;

// The model: every child's entries sorted by (key, child index).
struct Entry {
  std::string key;
  size_t child;
  std::string value;
  bool operator<(const Entry& o) const {
    return std::tie(key, child) < std::tie(o.key, o.child);
  }
};

std::vector<KVs> RandomChildren(Random* rnd, int num_children, int key_space) {
  std::vector<KVs> children(num_children);
  for (int c = 0; c < num_children; ++c) {
    const int n = static_cast<int>(rnd->Uniform(key_space / 2 + 1));
    std::vector<int> keys;
    for (int i = 0; i < n; ++i)
      keys.push_back(static_cast<int>(rnd->Uniform(key_space)));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (int k : keys) {
      children[c].emplace_back(test::NumberKey(k, 4),
                               absl::StrCat("c", c, "k", k));
    }
  }
  return children;
}

// A child whose key() views die with its next move, as a block iterator's
// do: each move overwrites the buffer of the last key with '#' and writes the
// new key into the other one. A merge that keeps a view of a child's key past
// the child's move compares and returns '#'s.
class ReusedKeyIterator final : public Iterator {
 public:
  explicit ReusedKeyIterator(KVs kvs) : inner_(std::move(kvs)) {}
  bool Valid() const override { return inner_.Valid(); }
  void SeekToFirst() override {
    inner_.SeekToFirst();
    Moved();
  }
  void SeekToLast() override {
    inner_.SeekToLast();
    Moved();
  }
  void Seek(std::string_view target) override {
    inner_.Seek(target);
    Moved();
  }
  void Next() override {
    inner_.Next();
    Moved();
  }
  void Prev() override {
    inner_.Prev();
    Moved();
  }
  std::string_view key() const override { return keys_[current_]; }
  std::string_view value() const override { return inner_.value(); }
  absl::Status status() const override { return inner_.status(); }

 private:
  void Moved() {
    std::string& last = keys_[current_];
    last.assign(last.size(), '#');  // in place: the capacity is kept
    current_ ^= 1;
    keys_[current_].clear();
    if (inner_.Valid()) keys_[current_].assign(inner_.key());
  }
  VectorIterator inner_;
  // Reserved beyond any test key, so the buffers never move.
  std::string keys_[2] = {std::string(32, '#'), std::string(32, '#')};
  int current_ = 0;
};

std::unique_ptr<Iterator> Merge(const std::vector<KVs>& children,
                                bool reused_keys = false) {
  IteratorList its;
  for (const KVs& kvs : children) {
    if (reused_keys) {
      its.push_back(std::make_unique<ReusedKeyIterator>(kvs));
    } else {
      its.push_back(std::make_unique<VectorIterator>(kvs));
    }
  }
  return NewMergingIterator(BytewiseComparator(), std::move(its));
}

void RandomOpsAgainstModel(uint64_t seed, int num_children, int key_space,
                           bool reused_keys = false) {
  Random rnd(seed);
  const std::vector<KVs> children =
      RandomChildren(&rnd, num_children, key_space);
  std::vector<Entry> model;
  for (size_t c = 0; c < children.size(); ++c) {
    for (const auto& [k, v] : children[c]) model.push_back({k, c, v});
  }
  std::sort(model.begin(), model.end());
  auto it = Merge(children, reused_keys);
  size_t pos = model.size();  // model.size(): not valid
  for (int op = 0; op < 2000; ++op) {
    const uint64_t choice = rnd.Uniform(10);
    if (choice == 0) {
      it->SeekToFirst();
      pos = 0;
    } else if (choice == 1) {
      it->SeekToLast();
      pos = model.empty() ? 0 : model.size() - 1;
    } else if (choice == 2) {
      const std::string target = test::NumberKey(rnd.Uniform(key_space + 2), 4);
      it->Seek(target);
      pos = std::lower_bound(model.begin(), model.end(), Entry{target, 0, ""}) -
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
      ASSERT_EQ(it->key(), model[pos].key) << "op " << op;
      ASSERT_EQ(it->value(), model[pos].value) << "op " << op;
    }
    ASSERT_TRUE(it->status().ok());
  }
}

TEST(MergingIteratorTest, NoChildrenAndOneChild) {
  auto empty = Merge({});
  empty->SeekToFirst();
  EXPECT_FALSE(empty->Valid());
  auto one = Merge({{{"a", "1"}, {"b", "2"}}});
  one->SeekToLast();
  ASSERT_TRUE(one->Valid());
  EXPECT_EQ(one->key(), "b");
}

TEST(MergingIteratorTest, EqualKeysEarlierChildFirstBothWays) {
  auto it = Merge({{{"a", "0"}, {"b", "0"}},
                   {{"b", "1"}},
                   {},
                   {{"a", "3"}, {"b", "3"}, {"c", "3"}}});
  std::vector<std::string> forward, backward;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    forward.push_back(std::string(it->key()) + std::string(it->value()));
  }
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    backward.push_back(std::string(it->key()) + std::string(it->value()));
  }
  EXPECT_EQ(forward,
            (std::vector<std::string>{"a0", "a3", "b0", "b1", "b3", "c3"}));
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(backward, forward);
  // Direction switches in the middle of a run of equal keys.
  it->Seek("b");
  ASSERT_EQ(it->value(), "0");
  it->Next();
  ASSERT_EQ(it->value(), "1");
  it->Prev();
  ASSERT_EQ(it->value(), "0");
  it->Prev();
  ASSERT_EQ(std::string(it->key()) + std::string(it->value()), "a3");
  it->Next();
  it->Next();
  ASSERT_EQ(it->value(), "1");
  it->Next();
  ASSERT_EQ(it->value(), "3");
  ASSERT_EQ(it->key(), "b");
}

TEST(MergingIteratorTest, RandomOperationsMatchModel) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    RandomOpsAgainstModel(seed, 1 + static_cast<int>(seed % 7),
                          10 + static_cast<int>(seed * 7));
  }
}

// More children than the merge keeps inline (8), each reusing one buffer
// for its key.
TEST(MergingIteratorTest, ManyChildrenReusingKeyBuffersMatchModel) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    RandomOpsAgainstModel(seed, 2 + static_cast<int>(seed % 15),
                          20 + static_cast<int>(seed * 11),
                          /*reused_keys=*/true);
  }
}

TEST(MergingIteratorTest, ChildErrorStopsTheMerge) {
  IteratorList its;
  its.push_back(std::make_unique<VectorIterator>(
      KVs{{"a", "1"}, {"c", "1"}, {"e", "1"}}));
  its.push_back(std::make_unique<VectorIterator>(
      KVs{{"b", "2"}, {"d", "2"}, {"f", "2"}}, /*fail_at=*/1));
  auto it = NewMergingIterator(BytewiseComparator(), std::move(its));
  std::vector<std::string> seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen.emplace_back(it->key());
  // Child 2 fails when it moves past "b": nothing after that can be trusted
  // to be in order, so the merge stops there.
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(absl::IsDataLoss(it->status()));
  it->SeekToFirst();  // sticky
  EXPECT_FALSE(it->Valid());
  EXPECT_FALSE(it->status().ok());
}

TEST(MergingIteratorTest, ChildFailingOnSeekIsReported) {
  IteratorList its;
  its.push_back(std::make_unique<VectorIterator>(KVs{{"a", "1"}}));
  its.push_back(NewEmptyIterator(absl::UnavailableError("disk gone")));
  auto it = NewMergingIterator(BytewiseComparator(), std::move(its));
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsUnavailable(it->status()));
}

// A child that takes a new, larger key between a Seek that found nothing at
// or after its target and the SeekToLast that follows, as a memtable taking
// writes does while it is read.
class GrowingIterator final : public Iterator {
 public:
  GrowingIterator(KVs kvs, std::pair<std::string, std::string> later)
      : kvs_(std::move(kvs)),
        later_(std::move(later)),
        inner_(std::make_unique<VectorIterator>(kvs_)) {}
  bool Valid() const override { return inner_->Valid(); }
  void SeekToFirst() override { inner_->SeekToFirst(); }
  void SeekToLast() override {
    if (!grown_) {
      kvs_.push_back(later_);
      inner_ = std::make_unique<VectorIterator>(kvs_);
      grown_ = true;
    }
    inner_->SeekToLast();
  }
  void Seek(std::string_view target) override { inner_->Seek(target); }
  void Next() override { inner_->Next(); }
  void Prev() override { inner_->Prev(); }
  std::string_view key() const override { return inner_->key(); }
  std::string_view value() const override { return inner_->value(); }
  absl::Status status() const override { return inner_->status(); }

 private:
  KVs kvs_;
  std::pair<std::string, std::string> later_;
  bool grown_ = false;
  std::unique_ptr<VectorIterator> inner_;
};

TEST(MergingIteratorTest, TurningBackwardStepsOverWhatAChildGainedMeanwhile) {
  IteratorList its;
  its.push_back(std::make_unique<GrowingIterator>(
      KVs{{"a", "1"}, {"c", "1"}}, std::make_pair(std::string("z"), "1")));
  its.push_back(std::make_unique<VectorIterator>(KVs{{"b", "2"}, {"d", "2"}}));
  auto it = NewMergingIterator(BytewiseComparator(), std::move(its));
  it->Seek("d");
  ASSERT_TRUE(it->Valid());
  ASSERT_EQ(it->key(), "d");
  // The first child has nothing at or after "d" until it gains "z"; turning
  // backward must still land on the entry just before "d".
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "b");
}

TEST(EmptyIteratorTest, CarriesItsStatus) {
  auto ok = NewEmptyIterator();
  ok->SeekToFirst();
  EXPECT_FALSE(ok->Valid());
  EXPECT_TRUE(ok->status().ok());
  auto bad = NewEmptyIterator(absl::DataLossError("x"));
  bad->Seek("k");
  EXPECT_FALSE(bad->Valid());
  EXPECT_TRUE(absl::IsDataLoss(bad->status()));
}

}  // namespace
}  // namespace sift
