#include "db/builder.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "db/dbformat.h"
#include "db/filename.h"
#include "db/memtable.h"
#include "gtest/gtest.h"
#include "table/iterators.h"
#include "tests/testutil/test_env.h"
#include "util/fault_env.h"

namespace sift {
namespace {

// Passes `n` entries of `base` through, then fails.
class FailingIterator final : public Iterator {
 public:
  FailingIterator(std::unique_ptr<Iterator> base, int n)
      : base_(std::move(base)), left_(n) {}
  bool Valid() const override { return left_ > 0 && base_->Valid(); }
  void SeekToFirst() override { base_->SeekToFirst(); }
  void SeekToLast() override { base_->SeekToLast(); }
  void Seek(std::string_view t) override { base_->Seek(t); }
  void Next() override {
    base_->Next();
    --left_;
  }
  void Prev() override { base_->Prev(); }
  std::string_view key() const override { return base_->key(); }
  std::string_view value() const override { return base_->value(); }
  absl::Status status() const override {
    return left_ > 0 ? base_->status() : absl::DataLossError("input went bad");
  }

 private:
  std::unique_ptr<Iterator> base_;
  int left_;
};

class BuilderTest : public testing::Test {
 protected:
  BuilderTest() : mem_env_(test::NewTestEnv()) {
    options_.env = mem_env_.get();
    EXPECT_TRUE(mem_env_->CreateDir(dbname_).ok());
    table_cache_ =
        std::make_unique<TableCache>(dbname_, options_, &icmp_, nullptr, 100);
    mem_ = std::make_shared<MemTable>(icmp_);
  }

  void Fill(int n) {
    for (int i = 0; i < n; ++i) {
      char key[16];
      std::snprintf(key, sizeof(key), "key%06d", i);
      mem_->Add(static_cast<SequenceNumber>(i + 1),
                i % 7 == 3 ? kTypeDeletion : kTypeValue, key,
                i % 7 == 3 ? "" : std::string(20 + i % 50, 'a' + i % 26));
    }
  }

  std::vector<std::string> Dir() {
    auto children = mem_env_->GetChildren(dbname_);
    EXPECT_TRUE(children.ok());
    return children.ok() ? *children : std::vector<std::string>{};
  }

  const std::string dbname_ = "/builder";
  std::unique_ptr<Env> mem_env_;
  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
  std::unique_ptr<TableCache> table_cache_;
  std::shared_ptr<MemTable> mem_;
};

TEST_F(BuilderTest, WritesEveryEntryInOrder) {
  Fill(2000);
  FileMetaData meta;
  meta.number = 5;
  std::unique_ptr<Iterator> input = mem_->NewIterator();
  ASSERT_TRUE(BuildTable(dbname_, mem_env_.get(), options_, table_cache_.get(),
                         input.get(), &meta)
                  .ok());
  EXPECT_GT(meta.file_size, 0u);
  auto size = mem_env_->GetFileSize(TableFileName(dbname_, 5));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, meta.file_size);
  EXPECT_EQ(meta.smallest.user_key(), "key000000");
  EXPECT_EQ(meta.largest.user_key(), "key001999");
  // The filter as built, for the filter allocation: one key per user key,
  // at about the configured bits per key.
  EXPECT_EQ(meta.filter_keys, 2000u);
  EXPECT_GE(meta.filter_bytes * 8, 2000 * options_.filter_bits_per_key);
  EXPECT_LE(meta.filter_bytes * 8, 2000 * options_.filter_bits_per_key + 1024);

  std::unique_ptr<Iterator> expected = mem_->NewIterator();
  std::unique_ptr<Iterator> actual =
      table_cache_->NewIterator(ReadOptions(), 5, meta.file_size);
  expected->SeekToFirst();
  int n = 0;
  for (actual->SeekToFirst(); actual->Valid(); actual->Next()) {
    ASSERT_TRUE(expected->Valid());
    EXPECT_EQ(actual->key(), expected->key());
    EXPECT_EQ(actual->value(), expected->value());
    expected->Next();
    ++n;
  }
  EXPECT_TRUE(actual->status().ok());
  EXPECT_FALSE(expected->Valid());
  EXPECT_EQ(n, 2000);
}

TEST_F(BuilderTest, EmptyInputLeavesNoFile) {
  FileMetaData meta;
  meta.number = 6;
  std::unique_ptr<Iterator> input = mem_->NewIterator();
  ASSERT_TRUE(BuildTable(dbname_, mem_env_.get(), options_, table_cache_.get(),
                         input.get(), &meta)
                  .ok());
  EXPECT_EQ(meta.file_size, 0u);
  EXPECT_FALSE(mem_env_->FileExists(TableFileName(dbname_, 6)));
}

TEST_F(BuilderTest, InputErrorRemovesTheFile) {
  Fill(500);
  FileMetaData meta;
  meta.number = 7;
  FailingIterator input(mem_->NewIterator(), 300);
  absl::Status s = BuildTable(dbname_, mem_env_.get(), options_,
                              table_cache_.get(), &input, &meta);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_FALSE(mem_env_->FileExists(TableFileName(dbname_, 7)));
  EXPECT_TRUE(Dir().empty());
}

TEST_F(BuilderTest, WriteOrSyncErrorRemovesTheFile) {
  Fill(500);
  FaultInjectionEnv fault_env(mem_env_.get());
  for (auto kind :
       {FaultInjectionEnv::OpKind::kWrite, FaultInjectionEnv::OpKind::kSync,
        FaultInjectionEnv::OpKind::kCreate}) {
    fault_env.FailAfter(kind, 1, FaultInjectionEnv::NoSpaceError(), true);
    FileMetaData meta;
    meta.number = 8;
    std::unique_ptr<Iterator> input = mem_->NewIterator();
    absl::Status s = BuildTable(dbname_, &fault_env, options_,
                                table_cache_.get(), input.get(), &meta);
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_FALSE(mem_env_->FileExists(TableFileName(dbname_, 8)));
    fault_env.ClearFaults();
  }
  EXPECT_TRUE(Dir().empty());
}

}  // namespace
}  // namespace sift
