// I/O errors from the file system pass through the table unchanged (they are
// not damage), and a failed write makes the builder fail.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "table/table.h"
#include "table/table_builder.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"

namespace sift {
namespace {

// Accepts `budget` bytes, then fails every Append.
class FullDiskFile final : public WritableFile {
 public:
  explicit FullDiskFile(size_t budget) : budget_(budget) {}
  absl::Status Append(std::string_view data) override {
    if (data.size() > budget_) {
      return absl::UnavailableError("/x.sst: No space left on device");
    }
    budget_ -= data.size();
    ++appends_;
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }
  int appends() const { return appends_; }

 private:
  size_t budget_;
  int appends_ = 0;
};

TEST(TableIoErrorTest, BuilderReportsTheFirstWriteError) {
  for (size_t budget : {size_t{0}, size_t{5000}, size_t{20000}}) {
    FullDiskFile file(budget);
    TableOptions o;
    o.compression = Compression::kNone;
    TableBuilder builder(o, &file);
    for (int i = 0; i < 1000; ++i)
      builder.Add(test::NumberKey(i), std::string(20, 'v'));
    absl::Status s = builder.Finish();
    EXPECT_TRUE(absl::IsUnavailable(s)) << budget << " " << s;
    EXPECT_TRUE(absl::IsUnavailable(builder.status()));
    EXPECT_LE(builder.FileSize(), budget);
  }
}

// Serves reads from `target` until `reads_left` runs out, then fails.
class FailingReadFile final : public RandomAccessFile {
 public:
  FailingReadFile(std::unique_ptr<RandomAccessFile> target, int reads_left)
      : target_(std::move(target)), reads_left_(reads_left) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    if (reads_left_.fetch_sub(1) <= 0) {
      return absl::InternalError("/t.sst: Input/output error");
    }
    return target_->Read(offset, n, result, scratch);
  }

 private:
  std::unique_ptr<RandomAccessFile> target_;
  mutable std::atomic<int> reads_left_;
};

TEST(TableIoErrorTest, ReadErrorsPassThrough) {
  auto env = test::NewTestEnv();
  TableOptions o;
  test::KVVector model;
  for (int i = 0; i < 5000; ++i)
    model.emplace_back(test::NumberKey(i), "value");
  auto size = test::WriteTable(env.get(), "/t.sst", o, model);
  ASSERT_TRUE(size.ok());

  auto open = [&](int reads_left) {
    auto file = env->NewRandomAccessFile("/t.sst");
    EXPECT_TRUE(file.ok());
    return Table::Open(
        o, std::make_unique<FailingReadFile>(*std::move(file), reads_left),
        *size, "/t.sst");
  };
  auto failed_open = open(0);
  EXPECT_TRUE(absl::IsInternal(failed_open.status())) << failed_open.status();

  auto table = open(1);  // the tail read succeeds, nothing after it
  ASSERT_TRUE(table.ok()) << table.status();
  auto get = test::TableGet(**table, ReadOptions(), test::NumberKey(10));
  EXPECT_TRUE(absl::IsInternal(get.status())) << get.status();
  auto it = (*table)->NewIterator(ReadOptions());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsInternal(it->status())) << it->status();
}

}  // namespace
}  // namespace sift
