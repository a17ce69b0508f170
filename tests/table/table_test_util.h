#ifndef SIFT_TESTS_TABLE_TABLE_TEST_UTIL_H_
#define SIFT_TESTS_TABLE_TABLE_TEST_UTIL_H_

// Building and opening tables in tests, and a model to check them against.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sift/env.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "table/table_options.h"

namespace sift::test {

using KVVector = std::vector<std::pair<std::string, std::string>>;

// True when the suite runs under a sanitizer: heavy loops scale down.
inline bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }

// Write `entries` (sorted, distinct) as table `fname` in `env`; returns the
// file size.
inline absl::StatusOr<uint64_t> WriteTable(Env* env, const std::string& fname,
                                           const TableOptions& options,
                                           const KVVector& entries) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(fname);
  if (!file.ok()) return file.status();
  TableBuilder builder(options, file->get());
  for (const auto& [k, v] : entries) builder.Add(k, v);
  if (builder.NumEntries() != entries.size()) {
    builder.Abandon();
    return absl::InternalError("entry count mismatch");
  }
  absl::Status s = builder.Finish();
  if (!s.ok()) return s;
  const uint64_t size = builder.FileSize();
  s = (*file)->Close();
  if (!s.ok()) return s;
  return size;
}

inline absl::StatusOr<std::unique_ptr<Table>> OpenTable(
    Env* env, const std::string& fname, const TableOptions& options) {
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (!size.ok()) return size.status();
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
      env->NewRandomAccessFile(fname);
  if (!file.ok()) return file.status();
  return Table::Open(options, *std::move(file), *size, fname);
}

// A table file over bytes the caller owns and may change while a table reads
// them (damage after open). Reads are views into the bytes, as from a
// memory-mapped file. `bytes` must outlive the file.
class ImageFile final : public RandomAccessFile {
 public:
  explicit ImageFile(const std::string* bytes) : bytes_(bytes) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* /*scratch*/) const override {
    if (offset >= bytes_->size()) {
      *result = {};
      return absl::OkStatus();
    }
    n = std::min<uint64_t>(n, bytes_->size() - offset);
    *result = std::string_view(bytes_->data() + offset, n);
    return absl::OkStatus();
  }
  bool StableReads() const override { return true; }

 private:
  const std::string* const bytes_;
};

// Get through the handle interface: the value of `key` if the table holds
// exactly that key, NotFound otherwise.
inline absl::StatusOr<std::string> TableGet(const Table& table,
                                            const ReadOptions& options,
                                            std::string_view key,
                                            ReadStats* stats = nullptr) {
  std::string value;
  bool found = false;
  absl::Status s = table.Get(
      options, key,
      [&](std::string_view k, std::string_view v) {
        if (k != key) return false;
        value.assign(v);
        found = true;
        return true;
      },
      stats);
  if (!s.ok()) return s;
  if (!found) return absl::NotFoundError("not found");
  return value;
}

}  // namespace sift::test

#endif  // SIFT_TESTS_TABLE_TABLE_TEST_UTIL_H_
