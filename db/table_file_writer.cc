// TableFileWriter: a table of internal keys at sequence 0, built with the
// same TableOptions a database uses (db/table_cache.h), so that the file
// reads like any table the database wrote itself (doc/table_format.md,
// "External tables").

#include "sift/table_file_writer.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "db/dbformat.h"
#include "db/options_check.h"
#include "db/table_cache.h"
#include "sift/env.h"
#include "table/table_builder.h"

namespace sift {
namespace {

class TableFileWriterImpl final : public TableFileWriter {
 public:
  TableFileWriterImpl(const Options& options, std::string path,
                      std::unique_ptr<WritableFile> file)
      : path_(std::move(path)),
        file_(std::move(file)),
        builder_(TableCache::MakeTableOptions(options, &icmp_,
                                              /*block_cache=*/nullptr),
                 file_.get()) {}

  ~TableFileWriterImpl() override {
    if (!finished_) {
      builder_.Abandon();
      file_->Close().IgnoreError();  // the incomplete file is the caller's
    }
  }

  absl::Status Put(std::string_view key, std::string_view value) override {
    return Add(key, kTypeValue, value);
  }

  absl::Status Delete(std::string_view key) override {
    return Add(key, kTypeDeletion, std::string_view());
  }

  absl::StatusOr<ExternalTableInfo> Finish() override;

 private:
  absl::Status Add(std::string_view key, ValueType type,
                   std::string_view value);

  // The internal keys of the file are ordered by icmp_; every one has
  // sequence 0 (see the class comment in the header).
  const InternalKeyComparator icmp_{BytewiseComparator()};
  const std::string path_;
  std::unique_ptr<WritableFile> file_;
  TableBuilder builder_;
  absl::Status status_;  // sticky: the first error
  bool finished_ = false;
  ExternalTableInfo info_;
  std::string internal_key_;  // scratch
};

absl::Status TableFileWriterImpl::Add(std::string_view key, ValueType type,
                                      std::string_view value) {
  if (!status_.ok()) return status_;
  if (finished_) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": TableFileWriter used after Finish"));
  }
  if (info_.num_entries > 0 &&
      BytewiseComparator()->Compare(key, info_.largest_key) <= 0) {
    status_ = absl::InvalidArgumentError(absl::StrCat(
        path_, ": key ",
        absl::CHexEscape(absl::string_view(key.data(), key.size())),
        " is not after the previous key ", absl::CHexEscape(info_.largest_key),
        " (keys must be added in strictly increasing order)"));
    return status_;
  }
  internal_key_.clear();
  AppendInternalKey(&internal_key_, key, 0, type);
  builder_.Add(internal_key_, value);
  if (absl::Status s = builder_.status(); !s.ok()) {
    status_ = s;
    return status_;
  }
  if (info_.num_entries == 0) info_.smallest_key.assign(key);
  info_.largest_key.assign(key);
  ++info_.num_entries;
  return absl::OkStatus();
}

absl::StatusOr<ExternalTableInfo> TableFileWriterImpl::Finish() {
  if (!status_.ok()) return status_;
  if (finished_) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": TableFileWriter::Finish called twice"));
  }
  if (info_.num_entries == 0) {
    status_ = absl::InvalidArgumentError(
        absl::StrCat(path_,
                     ": no entries added; an empty table cannot be "
                     "ingested"));
    return status_;
  }
  finished_ = true;
  absl::Status s = builder_.Finish();
  if (s.ok()) s = file_->Sync();
  if (s.ok()) {
    s = file_->Close();
  } else {
    file_->Close().IgnoreError();  // the first error is the one to report
  }
  if (!s.ok()) {
    status_ = s;
    return s;
  }
  info_.file_size = builder_.FileSize();
  return info_;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TableFileWriter>> TableFileWriter::Open(
    const Options& options, const std::string& path) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  const Options sanitized = SanitizeOptions(options);
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      sanitized.env->NewWritableFile(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<TableFileWriter>(
      new TableFileWriterImpl(sanitized, path, *std::move(file)));
}

}  // namespace sift
