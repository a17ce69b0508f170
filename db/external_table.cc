#include "db/external_table.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "table/table_properties.h"

namespace sift {
namespace {

absl::StatusOr<std::unique_ptr<Table>> OpenTableFile(
    Env* env, const TableOptions& options, const std::string& fname,
    uint64_t* file_size) {
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (!size.ok()) return size.status();
  *file_size = *size;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
      env->NewRandomAccessFile(fname);
  if (!file.ok()) return file.status();
  return Table::Open(options, *std::move(file), *size, fname);
}

// A key of an ingestible table: parses, and is stored at sequence 0.
absl::Status ParseStoredKey(const std::string& fname, std::string_view key,
                            ParsedInternalKey* parsed) {
  if (!ParseInternalKey(key, parsed)) {
    return absl::DataLossError(
        absl::StrCat(fname, ": holds a malformed internal key"));
  }
  if (parsed->sequence != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        fname, ": holds a key at sequence ", parsed->sequence,
        "; only tables written by TableFileWriter (sequence 0) can be "
        "ingested"));
  }
  return absl::OkStatus();
}

// Read every entry: each block's checksum, and the order of the user keys.
absl::Status ScanEntries(const Table& table, const TableOptions& options,
                         const std::string& fname, ExternalTableFacts* facts) {
  ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it = table.NewIterator(ro);
  const Comparator* ucmp =
      static_cast<const InternalKeyComparator*>(options.comparator)
          ->user_comparator();
  uint64_t entries = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ParsedInternalKey parsed;
    if (absl::Status s = ParseStoredKey(fname, it->key(), &parsed); !s.ok()) {
      return s;
    }
    if (entries > 0 &&
        ucmp->Compare(parsed.user_key, facts->largest_user_key) <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          fname, ": user keys are not strictly increasing at entry ", entries));
    }
    if (entries == 0) {
      facts->smallest_user_key.assign(parsed.user_key);
      facts->smallest_type = parsed.type;
    }
    facts->largest_user_key.assign(parsed.user_key);
    facts->largest_type = parsed.type;
    ++entries;
  }
  if (!it->status().ok()) return it->status();
  facts->num_entries = entries;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExternalTableFacts> InspectExternalTable(
    Env* env, const TableOptions& options, const std::string& fname,
    bool verify_checksums) {
  ExternalTableFacts facts;
  absl::StatusOr<std::unique_ptr<Table>> table =
      OpenTableFile(env, options, fname, &facts.file_size);
  if (!table.ok()) return table.status();
  const TableProperties& props = (*table)->properties();
  facts.filter_kind = props.filter_kind;
  facts.filter_bits_per_key = props.filter_bits_per_key;
  if (props.num_entries == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(fname, ": the table is empty"));
  }
  ParsedInternalKey first;
  ParsedInternalKey last;
  if (absl::Status s = ParseStoredKey(fname, props.smallest_key, &first);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseStoredKey(fname, props.largest_key, &last);
      !s.ok()) {
    return s;
  }
  if (verify_checksums) {
    if (absl::Status s = ScanEntries(**table, options, fname, &facts);
        !s.ok()) {
      return s;
    }
    if (facts.num_entries != props.num_entries) {
      return absl::DataLossError(absl::StrCat(
          fname, ": ", facts.num_entries, " entries read, the properties say ",
          props.num_entries));
    }
  } else {
    facts.num_entries = props.num_entries;
    facts.smallest_user_key.assign(first.user_key);
    facts.smallest_type = first.type;
    facts.largest_user_key.assign(last.user_key);
    facts.largest_type = last.type;
  }
  return facts;
}

absl::Status CopyTableFile(Env* env, const std::string& src,
                           const std::string& dst) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> in =
      env->NewSequentialFile(src);
  if (!in.ok()) return in.status();
  absl::StatusOr<std::unique_ptr<WritableFile>> out = env->NewWritableFile(dst);
  if (!out.ok()) return out.status();
  constexpr size_t kChunk = size_t{1} << 20;
  auto scratch = std::make_unique<char[]>(kChunk);
  absl::Status s;
  while (s.ok()) {
    std::string_view chunk;
    s = (*in)->Read(kChunk, &chunk, scratch.get());
    if (!s.ok() || chunk.empty()) break;
    s = (*out)->Append(chunk);
  }
  if (s.ok()) s = (*out)->Sync();
  if (s.ok()) {
    s = (*out)->Close();
  } else {
    (*out)->Close().IgnoreError();  // the first error is the one to report
  }
  if (!s.ok()) env->RemoveFile(dst).IgnoreError();
  return s;
}

absl::Status RewriteTable(Env* env, const TableOptions& read_options,
                          const std::string& src,
                          const TableOptions& write_options,
                          const std::string& dst, uint64_t* file_size) {
  uint64_t src_size = 0;
  absl::StatusOr<std::unique_ptr<Table>> table =
      OpenTableFile(env, read_options, src, &src_size);
  if (!table.ok()) return table.status();
  absl::StatusOr<std::unique_ptr<WritableFile>> out = env->NewWritableFile(dst);
  if (!out.ok()) return out.status();
  ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it = (*table)->NewIterator(ro);
  TableBuilder builder(write_options, out->get());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    builder.Add(it->key(), it->value());
  }
  absl::Status s = it->status();
  if (s.ok()) s = builder.status();
  if (s.ok()) {
    s = builder.Finish();
  } else {
    builder.Abandon();
  }
  *file_size = builder.FileSize();
  if (s.ok()) s = (*out)->Sync();
  if (s.ok()) {
    s = (*out)->Close();
  } else {
    (*out)->Close().IgnoreError();
  }
  if (!s.ok()) env->RemoveFile(dst).IgnoreError();
  return s;
}

}  // namespace sift
