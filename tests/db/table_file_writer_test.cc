// TableFileWriter: key order is enforced and sticky, an empty file is refused,
// and the result is an ordinary table (with its filter) that the table reader
// reads back at sequence 0.

#include "sift/table_file_writer.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "db/dbformat.h"
#include "db/table_cache.h"
#include "gtest/gtest.h"
#include "sift/env.h"
#include "sift/options.h"
#include "table/table.h"
#include "table/table_properties.h"
#include "tests/testutil/testutil.h"

namespace sift {
namespace {

class TableFileWriterTest : public testing::Test {
 protected:
  TableFileWriterTest() : env_(NewMemEnv(Env::Default())) {
    options_.env = env_.get();
    env_->CreateDir("/ext").IgnoreError();
  }

  std::unique_ptr<TableFileWriter> Open(const std::string& path) {
    absl::StatusOr<std::unique_ptr<TableFileWriter>> w =
        TableFileWriter::Open(options_, path);
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? *std::move(w) : nullptr;
  }

  std::unique_ptr<Table> OpenTable(const std::string& path) {
    const uint64_t size = *env_->GetFileSize(path);
    auto file = env_->NewRandomAccessFile(path);
    EXPECT_TRUE(file.ok());
    auto table =
        Table::Open(TableCache::MakeTableOptions(options_, &icmp_, nullptr),
                    *std::move(file), size, path);
    EXPECT_TRUE(table.ok()) << table.status();
    return table.ok() ? *std::move(table) : nullptr;
  }

  std::unique_ptr<Env> env_;
  Options options_;
  const InternalKeyComparator icmp_{BytewiseComparator()};
};

TEST_F(TableFileWriterTest, RoundTripThroughTableReader) {
  auto w = Open("/ext/a.sst");
  constexpr int kKeys = 2000;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = test::NumberKey(i);
    if (i % 7 == 3) {
      ASSERT_TRUE(w->Delete(key).ok());
    } else {
      ASSERT_TRUE(w->Put(key, "value" + std::to_string(i)).ok());
    }
  }
  absl::StatusOr<ExternalTableInfo> info = w->Finish();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->smallest_key, test::NumberKey(0));
  EXPECT_EQ(info->largest_key, test::NumberKey(kKeys - 1));
  EXPECT_EQ(info->num_entries, static_cast<uint64_t>(kKeys));
  EXPECT_EQ(info->file_size, *env_->GetFileSize("/ext/a.sst"));

  std::unique_ptr<Table> table = OpenTable("/ext/a.sst");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->properties().num_entries, static_cast<uint64_t>(kKeys));
  EXPECT_NE(table->properties().filter_kind, 0);
  EXPECT_NE(table->filter(), nullptr);
  std::unique_ptr<Iterator> it = table->NewIterator(ReadOptions());
  int i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ParsedInternalKey parsed;
    ASSERT_TRUE(ParseInternalKey(it->key(), &parsed));
    EXPECT_EQ(parsed.user_key, test::NumberKey(i));
    EXPECT_EQ(parsed.sequence, 0u);
    if (i % 7 == 3) {
      EXPECT_EQ(parsed.type, kTypeDeletion);
    } else {
      EXPECT_EQ(parsed.type, kTypeValue);
      EXPECT_EQ(it->value(), "value" + std::to_string(i));
    }
  }
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(i, kKeys);
}

TEST_F(TableFileWriterTest, OutOfOrderKeyStopsTheWriter) {
  auto w = Open("/ext/b.sst");
  ASSERT_TRUE(w->Put("b", "1").ok());
  absl::Status s = w->Put("a", "2");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  // Sticky: later keys, even in order, and Finish fail with it.
  EXPECT_TRUE(absl::IsInvalidArgument(w->Put("c", "3")));
  EXPECT_TRUE(absl::IsInvalidArgument(w->Delete("d")));
  EXPECT_TRUE(absl::IsInvalidArgument(w->Finish().status()));
}

TEST_F(TableFileWriterTest, DuplicateKeyIsRefused) {
  auto w = Open("/ext/c.sst");
  ASSERT_TRUE(w->Put("k", "1").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(w->Delete("k")));
  EXPECT_TRUE(absl::IsInvalidArgument(w->Finish().status()));
}

TEST_F(TableFileWriterTest, EmptyFileIsRefused) {
  auto w = Open("/ext/d.sst");
  EXPECT_TRUE(absl::IsInvalidArgument(w->Finish().status()));
}

TEST_F(TableFileWriterTest, BadOptionsAndMissingDirectory) {
  Options bad = options_;
  bad.block_size = 1;
  EXPECT_TRUE(absl::IsInvalidArgument(
      TableFileWriter::Open(bad, "/ext/e.sst").status()));
  Options posix;
  EXPECT_FALSE(TableFileWriter::Open(posix, "/nonexistent-dir/x/e.sst").ok());
}

TEST_F(TableFileWriterTest, NoFilterWhenBitsPerKeyIsZero) {
  options_.filter_bits_per_key = 0;
  auto w = Open("/ext/f.sst");
  ASSERT_TRUE(w->Put("a", "1").ok());
  ASSERT_TRUE(w->Finish().ok());
  std::unique_ptr<Table> table = OpenTable("/ext/f.sst");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->filter(), nullptr);
}

}  // namespace
}  // namespace sift
