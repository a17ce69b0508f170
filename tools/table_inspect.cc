#include "tools/table_inspect.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/dbformat.h"
#include "table/block.h"
#include "tools/output.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift::tools {

namespace {

const InternalKeyComparator* InternalComparator() {
  static const auto* const icmp =
      new InternalKeyComparator(BytewiseComparator());
  return icmp;
}

// Record a damaged block's status as a problem at the block's offset.
void BlockProblem(const BlockReport& block, TableReport* report) {
  report->problems.push_back(
      {block.handle.offset,
       absl::StrCat(
           BlockKindName(block.kind), " block: ",
           StripFilePrefix(FromAbsl(block.status.message()), report->file))});
}

// Reads and checks one block at a time, recording what it finds.
class TableReader {
 public:
  TableReader(const RandomAccessFile& file, TableReport* report)
      : file_(file), report_(report) {}

  void AddProblem(uint64_t offset, std::string_view what) {
    report_->problems.push_back({offset, std::string(what)});
  }

  // Read the block at `handle`, add its BlockReport and return its contents
  // (nullopt if it is unreadable or damaged; the problem is recorded).
  std::optional<BlockContents> Read(BlockReport::Kind kind,
                                    const BlockHandle& handle) {
    BlockReport block;
    block.kind = kind;
    block.handle = handle;
    std::optional<BlockContents> result = ReadInto(&block);
    if (!block.status.ok()) {
      BlockProblem(block, report_);
    }
    report_->blocks.push_back(std::move(block));
    return result;
  }

 private:
  std::optional<BlockContents> ReadInto(BlockReport* block) {
    const BlockHandle& h = block->handle;
    const uint64_t limit = report_->file_size - Footer::kEncodedLength;
    uint64_t end;
    if (!h.EndWithTrailer(&end) || end > limit) {
      block->status = absl::DataLossError(absl::StrFormat(
          "%s: block at offset %d of %d bytes runs past the end of the data "
          "(%d)",
          report_->file, h.offset, h.size, limit));
      return std::nullopt;
    }
    const size_t n = static_cast<size_t>(h.size);
    std::string buf(n + kBlockTrailerSize, '\0');
    std::string_view stored;
    absl::Status s =
        file_.Read(h.offset, n + kBlockTrailerSize, &stored, buf.data());
    if (!s.ok()) {
      block->status = s;
      return std::nullopt;
    }
    if (stored.size() != n + kBlockTrailerSize) {
      block->status = absl::DataLossError(absl::StrFormat(
          "%s: block at offset %d: truncated read", report_->file, h.offset));
      return std::nullopt;
    }
    block->compression = static_cast<uint8_t>(stored[n]);
    block->checksum_ok = DecodeFixed32(stored.data() + n + 1) ==
                         Checksum32(stored.substr(0, n + 1));
    absl::StatusOr<BlockContents> contents =
        DecodeStoredBlock(stored, h, /*verify_checksum=*/true, report_->file);
    if (!contents.ok()) {
      block->status = contents.status();
      return std::nullopt;
    }
    block->uncompressed_size = contents->size;
    return *std::move(contents);
  }

  const RandomAccessFile& file_;
  TableReport* const report_;
};

// Whether `key` may be handed to the report's comparator: an internal key
// comparator reads the last 8 bytes, which a damaged key may not have.
bool Comparable(const TableReport& report, std::string_view key) {
  return report.order_known && (!report.internal_keys || key.size() >= 8);
}

// Parse an index or data block into a Block, recording damage.
std::unique_ptr<Block> ParseBlock(BlockContents contents, BlockReport* block,
                                  TableReport* report) {
  absl::StatusOr<std::unique_ptr<Block>> parsed =
      Block::Create(std::move(contents), block->handle.offset, report->file);
  if (!parsed.ok()) {
    block->status = parsed.status();
    BlockProblem(*block, report);
    return nullptr;
  }
  return *std::move(parsed);
}

void ReadIndex(TableReader* reader, TableReport* report) {
  std::optional<BlockContents> contents =
      reader->Read(BlockReport::Kind::kIndex, report->footer.index);
  if (!contents) return;
  BlockReport* block = &report->blocks.back();
  std::unique_ptr<Block> index =
      ParseBlock(*std::move(contents), block, report);
  if (index == nullptr) return;
  const Comparator* cmp = report->comparator();
  std::unique_ptr<BlockIterator> it = index->NewIterator(cmp, &report->file);
  std::string prev;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    IndexEntry entry;
    entry.key.assign(it->key());
    std::string_view value = it->value();
    if (!entry.handle.DecodeFrom(&value) || !value.empty()) {
      reader->AddProblem(report->footer.index.offset,
                         absl::StrCat("index entry ", block->num_entries,
                                      " holds a bad block handle"));
      continue;
    }
    if (report->internal_keys && entry.key.size() < 8) {
      reader->AddProblem(report->footer.index.offset,
                         absl::StrCat("index entry ", block->num_entries,
                                      " is not an internal key"));
    } else if (!report->index.empty() && Comparable(*report, prev) &&
               Comparable(*report, entry.key) &&
               cmp->Compare(prev, entry.key) >= 0) {
      reader->AddProblem(
          report->footer.index.offset,
          absl::StrCat("index entry ", block->num_entries, " is out of order"));
    }
    prev = entry.key;
    ++block->num_entries;
    report->index.push_back(std::move(entry));
  }
  if (!it->status().ok()) {
    block->status = it->status();
    BlockProblem(*block, report);
  }
}

void ReadDataBlocks(TableReader* reader, const InspectOptions& options,
                    TableReport* report) {
  const Comparator* cmp = report->comparator();
  std::string prev_key;
  bool have_prev = false;
  std::string first_key;
  for (size_t i = 0; i < report->index.size(); ++i) {
    const IndexEntry& entry = report->index[i];
    std::optional<BlockContents> contents =
        reader->Read(BlockReport::Kind::kData, entry.handle);
    if (!contents) continue;
    BlockReport* block = &report->blocks.back();
    std::unique_ptr<Block> data =
        ParseBlock(*std::move(contents), block, report);
    if (data == nullptr) continue;
    std::unique_ptr<BlockIterator> it = data->NewIterator(cmp, &report->file);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view key = it->key();
      if (report->internal_keys && key.size() < 8) {
        reader->AddProblem(entry.handle.offset,
                           absl::StrCat("entry ", block->num_entries,
                                        " of data block is not an internal "
                                        "key"));
      } else if (have_prev && Comparable(*report, prev_key) &&
                 Comparable(*report, key) && cmp->Compare(prev_key, key) >= 0) {
        reader->AddProblem(entry.handle.offset,
                           absl::StrCat("key out of order (entry ",
                                        block->num_entries, " of data block)"));
      }
      if (Comparable(*report, key) && Comparable(*report, entry.key) &&
          cmp->Compare(key, entry.key) > 0) {
        reader->AddProblem(entry.handle.offset,
                           absl::StrCat("key after its index separator (entry ",
                                        block->num_entries, " of data block)"));
      }
      if (!have_prev) first_key.assign(key);
      prev_key.assign(key);
      have_prev = true;
      ++block->num_entries;
      ++report->entries_read;
      if (options.on_entry) options.on_entry(key, it->value());
    }
    if (!it->status().ok()) {
      block->status = it->status();
      BlockProblem(*block, report);
    }
  }
  // Cross-checks against the properties, when the blocks were all readable.
  const bool all_ok =
      std::all_of(report->blocks.begin(), report->blocks.end(),
                  [](const BlockReport& b) { return b.status.ok(); });
  if (!report->properties_status.ok() || !all_ok) return;
  const TableProperties& p = report->properties;
  const uint64_t props_offset = report->footer.properties.offset;
  if (p.num_entries != report->entries_read) {
    reader->AddProblem(props_offset,
                       absl::StrFormat("properties say %d entries, data blocks "
                                       "hold %d",
                                       p.num_entries, report->entries_read));
  }
  if (p.num_data_blocks != report->index.size()) {
    reader->AddProblem(
        props_offset, absl::StrFormat("properties say %d data blocks, index "
                                      "lists %d",
                                      p.num_data_blocks, report->index.size()));
  }
  if (have_prev && (p.smallest_key != first_key || p.largest_key != prev_key)) {
    reader->AddProblem(props_offset,
                       "properties' smallest/largest key differ from the data");
  }
}

// The blocks must tile the file: each starts where the one before ends, and
// the footer follows the last.
void CheckLayout(TableReader* reader, TableReport* report) {
  std::vector<BlockHandle> handles;
  for (const BlockReport& b : report->blocks) handles.push_back(b.handle);
  std::sort(handles.begin(), handles.end(),
            [](const BlockHandle& a, const BlockHandle& b) {
              return a.offset < b.offset;
            });
  uint64_t expected = 0;
  for (const BlockHandle& h : handles) {
    if (h.offset != expected) {
      reader->AddProblem(h.offset,
                         absl::StrFormat("block does not follow the one before "
                                         "it (expected offset %d)",
                                         expected));
    }
    if (!h.EndWithTrailer(&expected)) return;
  }
  const uint64_t footer_offset = report->file_size - Footer::kEncodedLength;
  if (expected < footer_offset) {
    reader->AddProblem(expected,
                       absl::StrFormat("%d stray bytes before the footer",
                                       footer_offset - expected));
  } else if (expected > footer_offset) {
    // A truncated table: the blocks its index names end past the footer
    // read from the end of the file.
    reader->AddProblem(footer_offset,
                       absl::StrFormat("blocks end at offset %d, %d bytes past "
                                       "the footer at the end of the file "
                                       "(truncated table?)",
                                       expected, expected - footer_offset));
  }
}

}  // namespace

const char* BlockKindName(BlockReport::Kind kind) {
  switch (kind) {
    case BlockReport::Kind::kData:
      return "data";
    case BlockReport::Kind::kFilter:
      return "filter";
    case BlockReport::Kind::kProperties:
      return "properties";
    case BlockReport::Kind::kIndex:
      return "index";
  }
  return "?";
}

const char* CompressionName(int type) {
  switch (type) {
    case static_cast<int>(BlockCompression::kNone):
      return "none";
    case static_cast<int>(BlockCompression::kSnappy):
      return "snappy";
    case -1:
      return "?";
    default:
      return "unknown";
  }
}

const Comparator* TableReport::comparator() const {
  if (internal_keys) return InternalComparator();
  return BytewiseComparator();
}

absl::Status InspectTable(Env* env, const std::string& fname,
                          const InspectOptions& options, TableReport* report) {
  *report = TableReport();
  report->file = fname;
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (!size.ok()) return size.status();
  report->file_size = *size;
  if (*size < Footer::kEncodedLength) {
    return absl::DataLossError(absl::StrFormat(
        "%s: %d bytes is too short for a sift table (the footer alone is "
        "%d)",
        fname, *size, Footer::kEncodedLength));
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
      env->NewRandomAccessFile(fname);
  if (!file.ok()) return file.status();

  char footer_buf[Footer::kEncodedLength];
  std::string_view footer_bytes;
  absl::Status s =
      (*file)->Read(*size - Footer::kEncodedLength, Footer::kEncodedLength,
                    &footer_bytes, footer_buf);
  if (!s.ok()) return s;
  s = report->footer.DecodeFrom(footer_bytes, fname);
  if (!s.ok()) return s;

  TableReader reader(**file, report);
  std::optional<BlockContents> props =
      reader.Read(BlockReport::Kind::kProperties, report->footer.properties);
  if (props) {
    report->properties_status = report->properties.DecodeFrom(props->view());
    if (!report->properties_status.ok()) {
      report->blocks.back().status = absl::DataLossError(
          absl::StrCat(fname, ": ", report->properties_status.message()));
      reader.AddProblem(report->footer.properties.offset,
                        std::string(report->properties_status.message()));
    }
  } else {
    report->properties_status = report->blocks.back().status;
  }
  if (report->properties_status.ok()) {
    const std::string& name = report->properties.comparator_name;
    report->internal_keys = name == InternalComparator()->Name();
    report->order_known =
        report->internal_keys || name == BytewiseComparator()->Name();
    if (!report->order_known) {
      reader.AddProblem(report->footer.properties.offset,
                        absl::StrCat("unknown comparator \"", name,
                                     "\" (key order not checked)"));
    }
  }

  if (report->footer.has_filter()) {
    std::optional<BlockContents> filter =
        reader.Read(BlockReport::Kind::kFilter, report->footer.filter);
    std::string_view point, range;
    if (filter && report->properties_status.ok()) {
      if (absl::Status s = SplitFilterBlock(filter->view(), report->properties,
                                            &point, &range);
          s.ok()) {
        report->filter_contents.assign(point);
        report->range_filter_contents.assign(range);
      } else {
        reader.AddProblem(report->footer.filter.offset,
                          std::string(s.message()));
      }
    } else if (filter) {
      report->filter_contents.assign(filter->view());
    }
  }
  ReadIndex(&reader, report);
  if (options.read_data_blocks) {
    ReadDataBlocks(&reader, options, report);
    CheckLayout(&reader, report);
  }
  // Keep the blocks in file order.
  std::stable_sort(report->blocks.begin(), report->blocks.end(),
                   [](const BlockReport& a, const BlockReport& b) {
                     return a.handle.offset < b.handle.offset;
                   });
  return absl::OkStatus();
}

}  // namespace sift::tools
