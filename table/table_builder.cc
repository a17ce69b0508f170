#include "table/table_builder.h"

#include <algorithm>
#include <cassert>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "filter/filter.h"
#include "filter/modular_bloom.h"
#include "filter/range_filter.h"
#include "table/block_builder.h"
#include "table/compression.h"
#include "table/compression_gate.h"
#include "table/format.h"
#include "table/range_filter_key.h"
#include "table/table_properties.h"

namespace sift {
namespace {

// Byte strings kept back to back, for the filters built at Finish from the
// table's keys or prefixes: one allocation for the bytes, one for the ends.
class PackedStrings {
 public:
  void Add(std::string_view s) {
    bytes_.append(s);
    ends_.push_back(bytes_.size());
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::string_view operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  // Empties and frees the memory.
  void Release() {
    bytes_ = std::string();
    ends_ = std::vector<size_t>();
  }

 private:
  std::string bytes_;
  std::vector<size_t> ends_;
};

}  // namespace

struct TableBuilder::Rep {
  Rep(const TableOptions& opt, WritableFile* f)
      : options(opt),
        file(f),
        data_block(opt.block_restart_interval),
        // One restart per entry: index lookups binary-search every separator.
        index_block(1) {
    if (options.filter_bits_per_key > 0) {
      filter = options.modular_filter &&
                       options.filter_kind == FilterKind::kBlockedBloom
                   ? NewModularBloomBuilder(options.filter_bits_per_key,
                                            kDefaultFilterSeed)
                   : FilterBuilder::Make(options.filter_kind,
                                         options.filter_bits_per_key);
    }
    properties.compression = static_cast<uint8_t>(options.compression);
    properties.comparator_name = options.comparator->Name();
    properties.format_version = kTableFormatVersion;
    if (filter != nullptr && options.prefix_extractor != nullptr) {
      properties.prefix_extractor_name.assign(options.prefix_extractor->Name());
    }
    // Without prefixes there is nothing else to store: whole keys it is.
    properties.whole_key_filtering =
        options.whole_key_filtering || properties.prefix_extractor_name.empty();
  }

  std::string_view FilterKey(std::string_view key) const {
    return options.filter_key != nullptr ? options.filter_key(key) : key;
  }

  // Adds what the filter stores of `key`, the successor of last_key (if any
  // entries were added). Several entries of one filter key (versions of a
  // user key) are added once, and so is a prefix shared by neighbouring keys:
  // the prefix rules make each prefix's keys contiguous, so the builders'
  // count of distinct keys stays exact with prefixes interleaved.
  void AddToFilter(std::string_view key) {
    const std::string_view fkey = FilterKey(key);
    const bool first = properties.num_entries == 0;
    const std::string_view previous =
        first ? std::string_view() : FilterKey(last_key);
    if (!first && fkey == previous) return;
    if (properties.whole_key_filtering) filter->AddKey(fkey);
    if (properties.prefix_extractor_name.empty()) return;
    const PrefixExtractor& extractor = *options.prefix_extractor;
    if (!extractor.InDomain(fkey)) return;
    const std::string_view prefix = extractor.Transform(fkey);
    if (!first && extractor.InDomain(previous) &&
        extractor.Transform(previous) == prefix) {
      return;
    }
    filter->AddKey(prefix);
    if (!collect_prefixes) return;
    prefixes.Add(prefix);
    // Prefixes about as many as keys will not qualify at Finish; stop
    // keeping them once that is clear rather than hold a second copy of
    // the table's keys.
    if (prefixes.size() >= kPrefixesBeforeGivingUp &&
        prefixes.size() * kEntriesPerPrefixToGiveUp > filter->NumKeys()) {
      collect_prefixes = false;
      prefixes.Release();
    }
  }

  // At Finish: a filter whose distinct prefixes are at most 1 in
  // kEntriesPerSecondHash of its entries also stores each under its second
  // hash, and a prefix query asks both (doc/filters.md, "Prefix filters").
  // The filter is sized by its entries, so this costs at most 1/16 more
  // filter memory and leaves a whole key's false-positive rate as it was,
  // while a prefix's falls to about its square.
  void AddPrefixSecondHashes() {
    if (!collect_prefixes || prefixes.empty() ||
        prefixes.size() * kEntriesPerSecondHash > filter->NumKeys()) {
      return;
    }
    for (size_t i = 0; i < prefixes.size(); ++i) {
      filter->AddKeySecondHash(prefixes[i]);
    }
    properties.prefix_filter_hashes = 2;
  }

  static constexpr uint64_t kEntriesPerSecondHash = 16;
  static constexpr uint64_t kEntriesPerPrefixToGiveUp = 8;
  static constexpr size_t kPrefixesBeforeGivingUp = 1024;

  // Store `raw` (Snappy-compressed if `compression` asks and it pays) with
  // its trailer; *handle gets its place, *stored_as (nullable) how it is
  // stored.
  absl::Status WriteBlock(std::string_view raw, Compression compression,
                          BlockHandle* handle,
                          BlockCompression* stored_as = nullptr) {
    const BlockCompression type = CompressBlock(compression, raw, &compressed);
    if (stored_as != nullptr) *stored_as = type;
    const std::string_view contents =
        type == BlockCompression::kNone ? raw : std::string_view(compressed);
    stored.clear();
    AppendStoredBlock(contents, type, &stored);
    handle->offset = offset;
    handle->size = contents.size();
    absl::Status s = file->Append(stored);
    if (s.ok()) offset += stored.size();
    return s;
  }

  void FlushDataBlock() {
    if (data_block.empty() || !status.ok()) return;
    const uint64_t before = offset;
    const std::string_view raw = data_block.Finish();
    const bool try_compression = options.compression != Compression::kNone &&
                                 compression_gate.ShouldTry();
    BlockCompression stored_as = BlockCompression::kNone;
    status = WriteBlock(
        raw, try_compression ? options.compression : Compression::kNone,
        &pending_handle, &stored_as);
    if (try_compression) {
      compression_gate.Record(stored_as != BlockCompression::kNone);
    }
    data_block.Reset();
    if (!status.ok()) return;
    pending_index_entry = true;
    properties.num_data_blocks++;
    properties.data_bytes += offset - before;
  }

  const TableOptions options;
  WritableFile* const file;
  uint64_t offset = 0;
  absl::Status status;
  BlockBuilder data_block;
  BlockBuilder index_block;
  std::unique_ptr<FilterBuilder> filter;
  TableProperties properties;
  std::string last_key;
  bool closed = false;

  // After a data block is written its index entry waits for the next key, so
  // that the separator can be shortened against it.
  bool pending_index_entry = false;
  BlockHandle pending_handle;

  // The distinct filter keys, in order, for the range filter (which needs
  // the table's common prefix, known at Finish).
  PackedStrings range_keys;
  size_t range_key_longest = 0;

  // The distinct prefixes added to the filter, in order, for
  // AddPrefixSecondHashes; collect_prefixes turns false when they cannot
  // qualify.
  bool collect_prefixes = true;
  PackedStrings prefixes;

  CompressionGate compression_gate;  // data blocks only
  std::string compressed;            // scratch for Snappy output
  std::string stored;                // scratch for contents + trailer
};

TableBuilder::TableBuilder(const TableOptions& options, WritableFile* file)
    : rep_(std::make_unique<Rep>(options, file)) {}

TableBuilder::~TableBuilder() { assert(rep_->closed); }

absl::Status TableBuilder::status() const { return rep_->status; }
const TableProperties& TableBuilder::properties() const {
  return rep_->properties;
}

uint64_t TableBuilder::NumEntries() const {
  return rep_->properties.num_entries;
}
uint64_t TableBuilder::FileSize() const { return rep_->offset; }

void TableBuilder::Add(std::string_view key, std::string_view value) {
  Rep* r = rep_.get();
  assert(!r->closed);
  if (!r->status.ok()) return;
  if (r->properties.num_entries > 0 &&
      r->options.comparator->Compare(key, r->last_key) <= 0) {
    r->status = absl::InvalidArgumentError(
        "table keys must be added in strictly increasing order");
    return;
  }
  if (r->pending_index_entry) {
    // The separator lies in [last key of the previous block, key).
    r->options.comparator->FindShortestSeparator(&r->last_key, key);
    std::string encoded;
    r->pending_handle.EncodeTo(&encoded);
    r->index_block.Add(r->last_key, encoded);
    r->pending_index_entry = false;
  }
  if (r->filter != nullptr) r->AddToFilter(key);
  if (r->options.range_filter_bits_per_key > 0) {
    const std::string_view fkey = r->FilterKey(key);
    if (r->properties.num_entries == 0 || fkey != r->FilterKey(r->last_key)) {
      r->range_keys.Add(fkey);
      r->range_key_longest = std::max(r->range_key_longest, fkey.size());
    }
  }

  if (r->properties.num_entries == 0) r->properties.smallest_key.assign(key);
  r->last_key.assign(key);
  r->properties.num_entries++;
  r->properties.raw_key_bytes += key.size();
  r->properties.raw_value_bytes += value.size();
  r->data_block.Add(key, value);
  if (r->data_block.CurrentSizeEstimate() >= r->options.block_size) {
    r->FlushDataBlock();
  }
}

absl::Status TableBuilder::Finish() {
  Rep* r = rep_.get();
  assert(!r->closed);
  r->FlushDataBlock();
  r->closed = true;
  if (!r->status.ok()) return r->status;

  Footer footer;
  // Meta blocks are stored uncompressed: the filter would not shrink, and the
  // index and properties are parsed straight from the tail read at Open.
  // The filter block holds the point filter, then the range filter.
  std::string filter_block;
  if (r->filter != nullptr) {
    r->properties.filter_kind = static_cast<uint8_t>(r->options.filter_kind);
    r->properties.filter_bits_per_key = r->options.filter_bits_per_key;
    r->AddPrefixSecondHashes();
    const std::string serialized = r->filter->Finish();
    auto reader = FilterReader::Parse(serialized);
    if (!reader.ok()) {
      r->status = absl::InternalError(absl::StrCat(
          "filter builder output does not parse: ", reader.status().message()));
      return r->status;
    }
    const FilterInfo info = (*reader)->info();
    r->properties.filter_num_probes = info.num_probes;
    r->properties.filter_num_keys = info.num_keys;
    r->properties.filter_bytes = serialized.size();
    filter_block = serialized;
  }
  if (!r->range_keys.empty()) {
    const PackedStrings& keys = r->range_keys;
    const std::string_view smallest = keys[0];
    const std::string_view largest = keys[keys.size() - 1];
    const uint32_t key_bytes = RangeFilterKeyMap::KeyBytesFor(
        RangeFilterKeyMap::CommonPrefixLength(smallest, largest),
        r->range_key_longest);
    const RangeFilterKeyMap map(smallest, largest, key_bytes);
    RangeFilterBuilder range(
        std::max(r->options.range_filter_bits_per_key, 2.0),
        std::max<uint64_t>(r->options.range_filter_block_length, 1));
    for (size_t i = 0; i < keys.size(); ++i) {
      range.AddKey(map.Map(keys[i]));
    }
    const std::string serialized = range.Finish();
    r->properties.range_filter_bits_per_key =
        r->options.range_filter_bits_per_key;
    r->properties.range_filter_bytes = serialized.size();
    r->properties.range_filter_key_bytes = key_bytes;
    filter_block.append(serialized);
  }
  if (!filter_block.empty()) {
    r->status = r->WriteBlock(filter_block, Compression::kNone, &footer.filter);
    if (!r->status.ok()) return r->status;
  }

  std::string encoded;
  r->properties.largest_key = r->properties.num_entries > 0 ? r->last_key : "";
  r->properties.EncodeTo(&encoded);
  r->status = r->WriteBlock(encoded, Compression::kNone, &footer.properties);
  if (!r->status.ok()) return r->status;

  if (r->pending_index_entry) {
    // The last block's separator only has to be >= its last key.
    r->options.comparator->FindShortSuccessor(&r->last_key);
    encoded.clear();
    r->pending_handle.EncodeTo(&encoded);
    r->index_block.Add(r->last_key, encoded);
    r->pending_index_entry = false;
  }
  r->status =
      r->WriteBlock(r->index_block.Finish(), Compression::kNone, &footer.index);
  if (!r->status.ok()) return r->status;

  encoded.clear();
  footer.EncodeTo(&encoded);
  r->status = r->file->Append(encoded);
  if (r->status.ok()) r->offset += encoded.size();
  return r->status;
}

void TableBuilder::Abandon() {
  assert(!rep_->closed);
  rep_->closed = true;
}

}  // namespace sift
