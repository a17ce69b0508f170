#include "table/table.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "filter/filter.h"
#include "filter/modular_bloom.h"
#include "table/block.h"
#include "table/format.h"
#include "table/iterators.h"
#include "table/table_properties.h"
#include "table/table_rep.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift {
namespace {

// Bytes read from the end of the file at Open. Tables of the default 2 MiB
// keep footer, index, properties and a 10 bits/key filter well inside this,
// so Open costs one read; larger tails cost one more.
constexpr size_t kTailReadSize = 64 << 10;

void DeleteCachedBlock(std::string_view /*key*/, void* value) {
  delete static_cast<Block*>(value);
}

}  // namespace

absl::Status Table::Rep::DecodeDataHandle(std::string_view index_value,
                                          BlockHandle* handle) const {
  std::string_view input = index_value;
  uint64_t end;
  if (!handle->DecodeFrom(&input) || !input.empty() ||
      !handle->EndWithTrailer(&end) || end > data_end) {
    return Corruption("bad data block handle in the index");
  }
  return absl::OkStatus();
}

absl::Status Table::Rep::VerifyMappedOnce(std::string_view stored,
                                          const BlockHandle& handle,
                                          uint32_t index_entry_offset) const {
  if (IsVerified(index_entry_offset)) return absl::OkStatus();
  const size_t n = static_cast<size_t>(handle.size);
  if (DecodeFixed32(stored.data() + n + 1) !=
      Checksum32(stored.substr(0, n + 1))) {
    return Corruption(absl::StrCat("block at offset ", handle.offset,
                                   ": block checksum mismatch"));
  }
  MarkVerified(index_entry_offset);
  return absl::OkStatus();
}

void Table::Rep::BuildIndexWords() {
  const Comparator* const cmp = options.comparator;
  const uint32_t n = index->num_restarts();
  BlockIterator it(index.get(), cmp, &file_name);
  std::string_view part;
  // The prefix is what the first index key shares with the one before the
  // last. The last is the last block's separator, which the builder
  // shortens to a successor of the table's last key ("1" after
  // "0000000000952104"): sharing nothing with the others, it would leave no
  // prefix, and zero-padded numbers would tie in their first eight bytes.
  it.SeekToLast();
  if (!it.Valid()) return;
  if (n >= 3) it.Prev();
  if (!it.Valid() || !cmp->BytewisePart(it.key(), &part)) return;
  const std::string inner(part);
  it.SeekToFirst();
  if (!it.Valid() || !cmp->BytewisePart(it.key(), &part)) return;
  size_t p = 0;
  while (p < part.size() && p < inner.size() && part[p] == inner[p]) ++p;
  // A copy: `part` views the iterator's key, which the loop overwrites.
  std::string prefix(part.substr(0, p));
  std::vector<uint64_t> words;
  words.reserve(n);
  for (; it.Valid(); it.Next()) {
    // More entries than restart points (an index written with a longer
    // restart interval), no part, or keys out of order: no words.
    if (words.size() == n || !cmp->BytewisePart(it.key(), &part)) return;
    uint64_t w;
    if (part.starts_with(prefix)) {
      w = BytewiseOrderWord(part.substr(p));
    } else if (words.size() + 1 == n && !words.empty()) {
      // The last key, after one with the prefix and without it itself, is
      // after every part that has the prefix (they differ inside it): it
      // sorts after every word.
      w = std::numeric_limits<uint64_t>::max();
    } else {
      return;
    }
    if (!words.empty() && w < words.back()) return;
    words.push_back(w);
  }
  if (!it.status().ok() || words.size() != n) return;
  index_prefix = std::move(prefix);
  index_words = std::move(words);
}

void Table::Rep::SeekIndex(BlockIterator* index_iter,
                           std::string_view key) const {
  std::string_view part;
  if (index_words.empty() || !options.comparator->BytewisePart(key, &part)) {
    index_iter->Seek(key);
    return;
  }
  const uint32_t n = static_cast<uint32_t>(index_words.size());
  const size_t p = index_prefix.size();
  // Every index key's part but perhaps the last's starts with index_prefix:
  // a target whose part starts below it is before them all, one above it
  // after all of those; the last (which may lack the prefix) is compared.
  const int c = CompareBytes(part.substr(0, p), index_prefix);
  if (c != 0) {
    index_iter->SeekFromRestart(key, c < 0 ? 0 : n - 1);
    return;
  }
  // Entries whose word is below the target's are before it, those above
  // after it; each entry is a restart point. Usually no entry ties.
  const uint64_t w = BytewiseOrderWord(part.substr(p));
  const auto lo = std::lower_bound(index_words.begin(), index_words.end(), w);
  const auto hi = std::upper_bound(lo, index_words.end(), w);
  const auto first = static_cast<uint32_t>(lo - index_words.begin());
  const auto last = static_cast<uint32_t>(hi - index_words.begin());
  if (last - first <= 1) {
    index_iter->SeekFromRestart(key, first);
  } else {
    index_iter->SeekBetweenRestarts(key, first, last - 1);
  }
}

absl::StatusOr<const Block*> Table::Rep::LoadDataBlock(
    const ReadOptions& ro, const BlockHandle& handle,
    uint32_t index_entry_offset, std::string_view mapped, ReadStats* stats,
    std::optional<Block>* in_place, BlockRef* ref, BlockBuffer* buffer,
    Readahead* readahead) const {
  if (!stable_reads) {
    absl::StatusOr<BlockRef> block = GetDataBlock(ro, handle, stats, readahead);
    if (!block.ok()) return block.status();
    *ref = *std::move(block);
    return ref->get();
  }
  const size_t n = static_cast<size_t>(handle.size);
  std::string_view stored = mapped;
  bool cache_checked = false;
  if (stored.size() != n + kBlockTrailerSize) {
    // A table written with compression keeps most of its blocks compressed,
    // and those are used decoded, from the block cache: look there before
    // touching the file.
    if (properties.compression != static_cast<uint8_t>(Compression::kNone)) {
      cache_checked = true;
      std::optional<BlockRef> cached = CachedDataBlock(handle, stats, nullptr);
      if (cached.has_value()) {
        *ref = *std::move(cached);
        return ref->get();
      }
    }
    absl::Status s =
        file->Read(handle.offset, n + kBlockTrailerSize, &stored, nullptr);
    if (!s.ok()) return s;
  }
  if (stored.size() == n + kBlockTrailerSize &&
      static_cast<BlockCompression>(stored[n]) == BlockCompression::kNone) {
    stats->block_reads++;
    stats->bytes_read += n + kBlockTrailerSize;
    if (ro.verify_checksums) {
      absl::Status s = VerifyMappedOnce(stored, handle, index_entry_offset);
      if (!s.ok()) return s;
    }
    absl::StatusOr<Block> block = Block::Parse(
        BlockContents{nullptr, n, stored.data()}, handle.offset, file_name);
    if (!block.ok()) return block.status();
    in_place->emplace(*std::move(block));
    return &**in_place;
  }
  // Compressed (or short: DecodeStoredBlock reports it): decoded from the
  // bytes in hand, into the block cache if it admits the block, unless the
  // cache already has it (asked above when the table was written with
  // compression).
  if (!cache_checked) {
    std::optional<BlockRef> cached = CachedDataBlock(handle, stats, nullptr);
    if (cached.has_value()) {
      *ref = *std::move(cached);
      return ref->get();
    }
  }
  // Its checksum, like a raw block's, is verified once per open table: a
  // block that left the cache is decoded again without a second check.
  bool checked = false;
  if (stored.size() == n + kBlockTrailerSize &&
      (ro.verify_checksums ||
       (options.block_cache != nullptr && ro.fill_cache))) {
    absl::Status s = VerifyMappedOnce(stored, handle, index_entry_offset);
    if (!s.ok()) return s;
    checked = true;
  }
  const bool fill = CacheAdmits(ro, handle);
  if (!fill && buffer != nullptr && stored.size() == n + kBlockTrailerSize) {
    stats->block_reads++;
    stats->bytes_read += n + kBlockTrailerSize;
    absl::StatusOr<std::string_view> contents = DecodeStoredBlockInto(
        stored, handle, ro.verify_checksums && !checked, file_name, buffer);
    if (!contents.ok()) return contents.status();
    absl::StatusOr<Block> block =
        Block::Parse(BlockContents{nullptr, contents->size(), contents->data()},
                     handle.offset, file_name);
    if (!block.ok()) return block.status();
    in_place->emplace(*std::move(block));
    return &**in_place;
  }
  absl::StatusOr<BlockRef> block =
      ReadDataBlock(ro, handle, stats, nullptr, stored, checked, fill);
  if (!block.ok()) return block.status();
  *ref = *std::move(block);
  return ref->get();
}

namespace {

// The buffer point reads on this thread decode uncached blocks into, and
// whether a point read is using it (a nested one then brings its own).
struct PointReadBuffer {
  BlockBuffer buffer;
  bool in_use = false;
};
thread_local PointReadBuffer point_read_buffer;

// A thread keeps its point-read buffer between reads up to this size; a
// larger block (large values) is freed once read, so that every thread that
// ever read one does not hold its size for life.
constexpr size_t kPointReadBufferKeep = 256 << 10;

}  // namespace

absl::Status Table::Rep::WithDataBlock(
    const ReadOptions& ro, const BlockHandle& handle,
    uint32_t index_entry_offset, std::string_view mapped, ReadStats* stats,
    absl::FunctionRef<absl::Status(const Block&)> fn) const {
  PointReadBuffer& tls = point_read_buffer;
  std::optional<BlockBuffer> own;
  BlockBuffer* buffer = &tls.buffer;
  const bool nested = tls.in_use;
  if (nested) buffer = &own.emplace();
  tls.in_use = true;
  std::optional<Block> in_place;
  BlockRef ref;
  absl::StatusOr<const Block*> block = LoadDataBlock(
      ro, handle, index_entry_offset, mapped, stats, &in_place, &ref, buffer);
  absl::Status s = block.ok() ? fn(**block) : block.status();
  tls.in_use = nested;
  if (!nested) tls.buffer.Trim(kPointReadBufferKeep);
  return s;
}

namespace {

// The block cache's key of the block at `offset` of the table `cache_id`.
struct BlockCacheKey {
  BlockCacheKey(uint64_t cache_id, uint64_t offset) {
    EncodeFixed64(bytes, cache_id);
    EncodeFixed64(bytes + 8, offset);
  }
  std::string_view view() const { return std::string_view(bytes, 16); }
  char bytes[16];
};

}  // namespace

std::optional<BlockRef> Table::Rep::CachedDataBlock(
    const BlockHandle& handle, ReadStats* stats, Readahead* readahead) const {
  Cache* const cache = options.block_cache;
  if (cache == nullptr) return std::nullopt;
  Cache::Handle* h =
      cache->Lookup(BlockCacheKey(cache_id, handle.offset).view());
  if (h == nullptr) return std::nullopt;
  if (stats != nullptr) stats->block_cache_hits++;
  if (readahead != nullptr) {
    readahead->Note(handle.offset, handle.size + kBlockTrailerSize);
  }
  return BlockRef::Cached(cache, h);
}

absl::StatusOr<BlockRef> Table::Rep::GetDataBlock(const ReadOptions& ro,
                                                  const BlockHandle& handle,
                                                  ReadStats* stats,
                                                  Readahead* readahead) const {
  std::optional<BlockRef> cached = CachedDataBlock(handle, stats, readahead);
  if (cached.has_value()) return *std::move(cached);
  return ReadDataBlock(ro, handle, stats, readahead, std::nullopt, false,
                       CacheAdmits(ro, handle));
}

bool Table::Rep::CacheAdmits(const ReadOptions& ro,
                             const BlockHandle& handle) const {
  Cache* const cache = options.block_cache;
  return cache != nullptr && ro.fill_cache &&
         cache->Admit(BlockCacheKey(cache_id, handle.offset).view());
}

absl::StatusOr<BlockRef> Table::Rep::ReadDataBlock(
    const ReadOptions& ro, const BlockHandle& handle, ReadStats* stats,
    Readahead* readahead, std::optional<std::string_view> stored,
    bool stored_checked, bool fill) const {
  Cache* const cache = options.block_cache;
  if (stats != nullptr) {
    stats->block_reads++;
    stats->bytes_read += handle.size + kBlockTrailerSize;
  }
  // A block that goes into the cache is always verified, so that a later
  // read asking for verification never gets an unchecked block from it.
  const bool verify = (ro.verify_checksums || fill) && !stored_checked;
  if (!stored.has_value() && readahead != nullptr) {
    // DecodeDataHandle checked that the block and its trailer end by
    // data_end.
    absl::StatusOr<std::optional<std::string_view>> read = readahead->Read(
        *file, handle.offset,
        static_cast<size_t>(handle.size) + kBlockTrailerSize, data_end);
    if (!read.ok()) return read.status();
    stored = *read;
  }
  absl::StatusOr<BlockContents> contents =
      stored.has_value() ? DecodeStoredBlock(*stored, handle, verify, file_name)
                         : ReadBlock(*file, handle, verify, file_name);
  if (!contents.ok()) return contents.status();
  absl::StatusOr<std::unique_ptr<Block>> block =
      Block::Create(*std::move(contents), handle.offset, file_name);
  if (!block.ok()) return block.status();
  if (!fill) return BlockRef::Owned(*std::move(block));
  const size_t charge = (*block)->size();
  Cache::Handle* h =
      cache->Insert(BlockCacheKey(cache_id, handle.offset).view(),
                    block->release(), charge, &DeleteCachedBlock);
  return BlockRef::Cached(cache, h);
}

namespace {

const FilterReader* PrefixFilterOf(const Table::Rep& r) {
  const std::string& name = r.properties.prefix_extractor_name;
  if (r.filter == nullptr || name.empty() ||
      r.options.prefix_extractor == nullptr ||
      r.options.prefix_extractor->Name() != name) {
    return nullptr;
  }
  return r.filter.get();
}

}  // namespace

Table::Table(std::unique_ptr<Rep> rep)
    : rep_(std::move(rep)),
      filter_(rep_->properties.whole_key_filtering ? rep_->filter.get()
                                                   : nullptr),
      prefix_filter_(PrefixFilterOf(*rep_)) {}
Table::~Table() = default;

absl::Status Table::Rep::ReadTailBytes(uint64_t offset, size_t n,
                                       Tail* tail) const {
  tail->buf = std::make_unique_for_overwrite<char[]>(n);
  tail->offset = offset;
  absl::Status s = file->Read(offset, n, &tail->bytes, tail->buf.get());
  if (!s.ok()) return s;
  if (tail->bytes.size() != n) {
    return Corruption(absl::StrCat("truncated table: read ", tail->bytes.size(),
                                   " of ", n, " bytes at offset ", offset));
  }
  return absl::OkStatus();
}

absl::Status Table::Rep::ReadTail(Tail* tail) {
  if (file_size < Footer::kEncodedLength) {
    return Corruption(absl::StrCat("truncated table: ", file_size,
                                   " bytes, shorter than the footer"));
  }
  // One read for the tail: footer, and usually index, properties and filter.
  const size_t guess =
      static_cast<size_t>(std::min<uint64_t>(file_size, kTailReadSize));
  absl::Status s = ReadTailBytes(file_size - guess, guess, tail);
  if (!s.ok()) return s;
  const uint64_t footer_offset = file_size - Footer::kEncodedLength;
  Footer& footer = tail->footer;
  s = footer.DecodeFrom(tail->bytes.substr(guess - Footer::kEncodedLength),
                        file_name);
  if (!s.ok()) return s;

  // The builder writes [data][filter][properties][index][footer] back to
  // back; anything else is damage (or a foreign file with our magic).
  uint64_t filter_end = 0, properties_end = 0, index_end = 0;
  const bool handles_ok =
      footer.filter.EndWithTrailer(&filter_end) &&
      footer.properties.EndWithTrailer(&properties_end) &&
      footer.index.EndWithTrailer(&index_end) && index_end == footer_offset &&
      footer.index.offset == properties_end &&
      (footer.has_filter() ? footer.properties.offset == filter_end
                           : footer.filter.offset == 0);
  if (!handles_ok) {
    return Corruption(absl::StrCat(
        "bad block handles in the footer (file size ", file_size, ")"));
  }
  data_end =
      footer.has_filter() ? footer.filter.offset : footer.properties.offset;
  // If the meta blocks start before the first read, read all of them again
  // in one more I/O.
  if (data_end < tail->offset) {
    return ReadTailBytes(data_end,
                         static_cast<size_t>(footer_offset - data_end), tail);
  }
  return absl::OkStatus();
}

absl::Status Table::Rep::LoadMetaBlocks(
    const Tail& tail, const Table::FilterUnitsFn& filter_units) {
  const Footer& footer = tail.footer;
  // Meta blocks are always verified, whatever the read options say later.
  auto meta_block = [&](const BlockHandle& h) {
    const std::string_view stored =
        tail.bytes.substr(h.offset - tail.offset, h.size + kBlockTrailerSize);
    return DecodeStoredBlock(stored, h, /*verify_checksum=*/true, file_name);
  };

  absl::StatusOr<BlockContents> contents = meta_block(footer.properties);
  if (!contents.ok()) return contents.status();
  if (absl::Status s = properties.DecodeFrom(contents->view()); !s.ok()) {
    return Corruption(absl::StrCat("block at offset ", footer.properties.offset,
                                   ": ", s.message()));
  }
  if (properties.format_version != footer.format_version ||
      properties.data_bytes != data_end ||
      (properties.filter_kind != 0 || properties.range_filter_bytes != 0) !=
          footer.has_filter() ||
      (!properties.prefix_extractor_name.empty() && !footer.has_filter()) ||
      (!properties.whole_key_filtering &&
       properties.prefix_extractor_name.empty()) ||
      (properties.num_entries == 0) != (properties.num_data_blocks == 0)) {
    return Corruption("properties do not match the footer");
  }
  if (properties.comparator_name != options.comparator->Name()) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": table is ordered by ", properties.comparator_name,
        ", not by ", options.comparator->Name()));
  }

  contents = meta_block(footer.index);
  if (!contents.ok()) return contents.status();
  absl::StatusOr<std::unique_ptr<Block>> index_block =
      Block::Create(*std::move(contents), footer.index.offset, file_name);
  if (!index_block.ok()) return index_block.status();
  index = *std::move(index_block);

  if (!footer.has_filter()) return absl::OkStatus();
  contents = meta_block(footer.filter);
  if (!contents.ok()) return contents.status();
  std::string_view point, range;
  if (absl::Status s =
          SplitFilterBlock(contents->view(), properties, &point, &range);
      !s.ok()) {
    return Corruption(absl::StrCat("filter block at offset ",
                                   footer.filter.offset, ": ", s.message()));
  }
  filter_offset = footer.filter.offset;
  if (properties.filter_kind != 0) {
    uint32_t units = kMaxFilterUnits;
    if (filter_units != nullptr && !point.empty() &&
        static_cast<uint8_t>(point[0]) == kModularBloomTag) {
      // A header that does not decode: Parse reports it below.
      if (ModularHeader header; header.DecodeFrom(point).ok()) {
        units = filter_units(header);
      }
    }
    absl::StatusOr<std::unique_ptr<FilterReader>> reader =
        FilterReader::Parse(point, units);
    if (!reader.ok()) {
      return Corruption(absl::StrCat("filter block at offset ",
                                     footer.filter.offset, ": ",
                                     reader.status().message()));
    }
    filter = *std::move(reader);
    if (filter->info().kind == kModularBloomTag) {
      modular = static_cast<const ModularBloomReader*>(filter.get());
    }
  } else if (!point.empty()) {
    return Corruption(absl::StrCat("filter block at offset ",
                                   footer.filter.offset,
                                   ": point filter bytes without a kind"));
  }
  if (!range.empty()) {
    if (properties.num_entries == 0) {
      return Corruption("a range filter in a table without entries");
    }
    absl::StatusOr<std::unique_ptr<RangeFilterReader>> reader =
        RangeFilterReader::Parse(range);
    if (!reader.ok()) {
      return Corruption(absl::StrCat("range filter at offset ",
                                     footer.filter.offset + point.size(), ": ",
                                     reader.status().message()));
    }
    range_filter = *std::move(reader);
    range_key_map.emplace(FilterKey(properties.smallest_key),
                          FilterKey(properties.largest_key),
                          properties.range_filter_key_bytes);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Table>> Table::Open(
    const TableOptions& options, std::unique_ptr<RandomAccessFile> file,
    uint64_t file_size, const std::string& file_name,
    const FilterUnitsFn& filter_units) {
  auto rep = std::make_unique<Rep>();
  rep->options = options;
  rep->file = std::move(file);
  rep->file_name = file_name;
  rep->file_size = file_size;
  Rep::Tail tail;
  if (absl::Status s = rep->ReadTail(&tail); !s.ok()) return s;
  if (absl::Status s = rep->LoadMetaBlocks(tail, filter_units); !s.ok()) {
    return s;
  }

  rep->BuildIndexWords();
  if (options.block_cache != nullptr) {
    rep->cache_id = options.block_cache->NewId();
  }
  rep->stable_reads = rep->file->StableReads();
  if (rep->stable_reads) {
    const size_t words = rep->index->size() / 4 / 64 + 1;
    rep->verified = std::make_unique<std::atomic<uint64_t>[]>(words);
  }
  return std::unique_ptr<Table>(new Table(std::move(rep)));
}

absl::Status Table::Get(
    const ReadOptions& options, std::string_view key,
    absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
    ReadStats* stats) const {
  ReadStats ignored;
  if (stats == nullptr) stats = &ignored;
  FilterKeyHash filter_key(rep_->FilterKey(key));
  if (!FilterMayMatch(&filter_key, stats)) return absl::OkStatus();
  return GetAfterFilter(options, key, handle, stats);
}

absl::Status Table::GetAfterFilter(
    const ReadOptions& options, std::string_view key,
    absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
    ReadStats* stats) const {
  ReadStats ignored;
  if (stats == nullptr) stats = &ignored;
  absl::StatusOr<std::optional<DataBlockLocation>> location =
      FindDataBlock(key, stats);
  if (!location.ok()) return location.status();
  if (!location->has_value()) return absl::OkStatus();
  // The block's trailer, restart array and first keys are fetched together:
  // read one after another, each is a cache miss that waits for the last.
  // (A table with compression has its blocks used from the block cache.)
  if (rep_->properties.compression ==
      static_cast<uint8_t>(Compression::kNone)) {
    PrefetchDataBlock(&**location);
  }
  return GetInDataBlock(options, **location, key, handle, stats);
}

absl::StatusOr<std::optional<Table::DataBlockLocation>> Table::FindDataBlock(
    std::string_view key, ReadStats* stats) const {
  const Rep& r = *rep_;
  BlockIterator index_iter(r.index.get(), r.options.comparator, &r.file_name);
  r.SeekIndex(&index_iter, key);
  if (index_iter.Valid()) {
    DataBlockLocation location;
    if (absl::Status s =
            r.DecodeDataHandle(index_iter.value(), &location.handle);
        !s.ok()) {
      return s;
    }
    location.index_entry_offset = index_iter.entry_offset();
    return location;
  }
  if (!index_iter.status().ok()) return index_iter.status();
  if (filter_ != nullptr && stats != nullptr) stats->filter_false_positives++;
  return std::nullopt;
}

void Table::PrefetchDataBlock(DataBlockLocation* location) const {
  const Rep& r = *rep_;
  if (!r.stable_reads) return;
  const BlockHandle& handle = location->handle;
  std::string_view stored;
  const size_t n = static_cast<size_t>(handle.size);
  if (!r.file->Read(handle.offset, n + kBlockTrailerSize, &stored, nullptr)
           .ok() ||
      stored.size() != n + kBlockTrailerSize) {
    return;
  }
  location->mapped = stored;  // the block read counts once, when searched
  // The trailer and the restart array before it, then the keys the restart
  // search meets first (a third and two thirds in) and the block's start.
  const char* p = stored.data();
  __builtin_prefetch(p + n);
  if (n >= 64) __builtin_prefetch(p + n - 64);
  __builtin_prefetch(p + n / 3);
  __builtin_prefetch(p + 2 * n / 3);
  __builtin_prefetch(p);
}

namespace {

// The contents of a mapped block stored without compression (which the
// prefetches below may read in place); empty otherwise.
std::string_view MappedContents(std::string_view stored) {
  if (stored.size() <= kBlockTrailerSize) return {};
  const size_t n = stored.size() - kBlockTrailerSize;
  if (static_cast<BlockCompression>(stored[n]) != BlockCompression::kNone) {
    return {};
  }
  return stored.substr(0, n);
}

}  // namespace

void Table::PrefetchDataBlockKeys(const DataBlockLocation& location) const {
  const std::string_view contents = MappedContents(location.mapped);
  if (!contents.empty()) Block::PrefetchRestartKeys(contents);
}

void Table::PrefetchDataBlockEntries(DataBlockLocation* location,
                                     std::string_view key) const {
  const std::string_view contents = MappedContents(location->mapped);
  if (contents.empty()) return;
  const Rep& r = *rep_;
  // Damage is left for GetInDataBlock to report.
  absl::StatusOr<Block> block = Block::Parse(
      BlockContents{nullptr, contents.size(), contents.data()}, 0, r.file_name);
  if (!block.ok()) return;
  BlockIterator block_iter(&*block, r.options.comparator, &r.file_name);
  location->restart = block_iter.PrefetchSeek(key);
}

absl::Status Table::GetInDataBlock(
    const ReadOptions& options, const DataBlockLocation& location,
    std::string_view key,
    absl::FunctionRef<bool(std::string_view, std::string_view)> handle,
    ReadStats* stats) const {
  const Rep& r = *rep_;
  ReadStats ignored;
  if (stats == nullptr) stats = &ignored;
  bool found = false;
  absl::Status s = r.WithDataBlock(
      options, location.handle, location.index_entry_offset, location.mapped,
      stats, [&](const Block& block) {
        BlockIterator block_iter(&block, r.options.comparator, &r.file_name);
        // A restart point found in the mapped bytes holds for this block:
        // WithDataBlock searches those bytes when `mapped` is set.
        if (location.restart.has_value() && !location.mapped.empty() &&
            *location.restart < block.num_restarts()) {
          block_iter.SeekFromRestart(key, *location.restart);
        } else {
          block_iter.Seek(key);
        }
        if (block_iter.Valid()) {
          found = handle(block_iter.key(), block_iter.value());
        }
        return block_iter.status();
      });
  if (!s.ok()) return s;
  if (filter_ != nullptr && !found) stats->filter_false_positives++;
  return absl::OkStatus();
}

std::unique_ptr<Iterator> Table::NewIterator(const ReadOptions& options,
                                             ReadStats* stats) const {
  return NewTableIterator(rep_.get(), options, stats);
}

uint64_t Table::ApproximateOffsetOf(std::string_view key) const {
  const Rep& r = *rep_;
  BlockIterator index_iter(r.index.get(), r.options.comparator, &r.file_name);
  index_iter.Seek(key);
  if (index_iter.Valid()) {
    BlockHandle handle;
    std::string_view input = index_iter.value();
    if (handle.DecodeFrom(&input) && handle.offset <= r.data_end) {
      return handle.offset;
    }
  }
  // Past the last key (or a bad index entry): the end of the data.
  return r.data_end;
}

const TableProperties& Table::properties() const { return rep_->properties; }

const ModularBloomReader* Table::modular_filter() const {
  return rep_->modular;
}

absl::Status Table::LoadFilterUnit(ReadStats* stats) const {
  const Rep& r = *rep_;
  const uint32_t u = r.modular->resident_units();
  const ModularHeader& header = r.modular->header();
  // The unit's bytes lie in the meta blocks, read as Open reads the tail.
  Rep::Tail unit;
  if (absl::Status s =
          r.ReadTailBytes(r.filter_offset + header.UnitOffset(u),
                          ModularHeader::UnitLength(header.units[u]), &unit);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = r.modular->LoadNextUnit(unit.bytes); !s.ok()) {
    return r.Corruption(
        std::string_view(s.message().data(), s.message().size()));
  }
  if (stats != nullptr) ++stats->filter_unit_loads;
  return absl::OkStatus();
}

std::unique_ptr<AlignedWords> Table::DropFilterUnit() const {
  return rep_->modular->DropLastUnit();
}
const FilterReader* Table::filter() const { return rep_->filter.get(); }

bool Table::RangeMayMatch(std::optional<std::string_view> lower,
                          std::optional<std::string_view> upper,
                          ReadStats* stats) const {
  const Rep& r = *rep_;
  if (r.range_filter == nullptr) return true;
  uint64_t lo, hi;
  const bool may_match = r.range_key_map->MapRange(lower, upper, &lo, &hi) &&
                         r.range_filter->MayContain(lo, hi);
  if (stats != nullptr) {
    ++stats->range_filter_probes;
    if (!may_match) ++stats->range_filter_negatives;
  }
  return may_match;
}

bool Table::PrefixMayMatch(std::string_view prefix, ReadStats* stats) const {
  if (prefix_filter_ == nullptr) return true;
  // A table that stored its prefixes under both hashes is asked both
  // (TableProperties::prefix_filter_hashes).
  FilterKeyHash first(prefix);
  bool may_match = prefix_filter_->MayMatch(&first);
  if (may_match && rep_->properties.prefix_filter_hashes == 2) {
    FilterKeyHash second(prefix, kSecondHashTweak);
    may_match = prefix_filter_->MayMatch(&second);
  }
  if (stats != nullptr) {
    ++stats->prefix_filter_probes;
    if (!may_match) ++stats->prefix_filter_negatives;
  }
  return may_match;
}
bool Table::has_range_filter() const { return rep_->range_filter != nullptr; }

size_t Table::FilterMemoryUsage() const {
  return (rep_->filter != nullptr ? rep_->filter->MemoryUsage() : 0) +
         RangeFilterMemoryUsage();
}

size_t Table::RangeFilterMemoryUsage() const {
  return rep_->range_filter != nullptr ? rep_->range_filter->MemoryUsage() : 0;
}
size_t Table::IndexMemoryUsage() const {
  return rep_->index->size() + rep_->index_prefix.capacity() +
         rep_->index_words.capacity() * sizeof(uint64_t);
}

}  // namespace sift
