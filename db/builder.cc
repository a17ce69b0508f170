#include "db/builder.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "table/table_builder.h"

namespace sift {

absl::Status FinishTable(const Options& options, TableCache* table_cache,
                         const absl::Status& status, TableBuilder* builder,
                         WritableFile* file, FileMetaData* meta) {
  absl::Status s = status;
  if (s.ok()) {
    s = builder->Finish();
  } else {
    builder->Abandon();
  }
  meta->file_size = builder->FileSize();
  if (s.ok()) {
    meta->filter_bytes = builder->properties().filter_bytes;
    meta->filter_keys = builder->properties().filter_num_keys;
  }
  if (s.ok()) s = file->Sync();
  if (s.ok()) {
    s = file->Close();
  } else {
    file->Close().IgnoreError();  // the first error is the one to report
  }
  if (!s.ok()) return s;

  // Open the finished table through the cache: proves that its footer, index
  // and filter read back.
  std::unique_ptr<Iterator> it =
      table_cache->NewIterator(ReadOptions(), meta->number, meta->file_size);
  if (options.paranoid_checks) {
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
  return it->status();
}

absl::Status BuildTable(const std::string& dbname, Env* env,
                        const Options& options, TableCache* table_cache,
                        Iterator* iter, FileMetaData* meta) {
  return BuildTable(dbname, env, options, table_cache->table_options(),
                    table_cache, iter, meta);
}

absl::Status BuildTable(const std::string& dbname, Env* env,
                        const Options& options,
                        const TableOptions& table_options,
                        TableCache* table_cache, Iterator* iter,
                        FileMetaData* meta) {
  meta->file_size = 0;
  iter->SeekToFirst();
  if (!iter->Valid()) return iter->status();  // nothing to write: no file

  const std::string fname = TableFileName(dbname, meta->number);
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(fname);
  if (!file.ok()) return file.status();

  absl::Status s;
  TableBuilder builder(table_options, file->get());
  if (!meta->smallest.DecodeFrom(iter->key())) {
    s = absl::DataLossError(
        absl::StrCat(fname, ": input holds a malformed internal key"));
  }
  for (; s.ok() && iter->Valid(); iter->Next()) {
    if (!meta->largest.DecodeFrom(iter->key())) {
      s = absl::DataLossError(
          absl::StrCat(fname, ": input holds a malformed internal key"));
      break;
    }
    builder.Add(iter->key(), iter->value());
  }
  if (s.ok()) s = iter->status();
  s = FinishTable(options, table_cache, s, &builder, file->get(), meta);
  file->reset();

  if (!s.ok()) {
    table_cache->Evict(meta->number);
    env->RemoveFile(fname).IgnoreError();
    meta->file_size = 0;
  }
  return s;
}

}  // namespace sift
