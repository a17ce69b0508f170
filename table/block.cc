#include "table/block.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/coding.h"

namespace sift {
namespace {

// Decode the header of the entry at [p, limit): shared key bytes, key bytes
// stored, value bytes. Returns the start of the stored key bytes, or nullptr
// if the header or the bytes it announces run past `limit`.
inline const char* DecodeEntry(const char* p, const char* limit,
                               uint32_t* shared, uint32_t* non_shared,
                               uint32_t* value_length) {
  if (limit - p >= 3) {
    // Fast path: all three lengths fit in one byte each (keys and values
    // under 128 bytes), the common case.
    const auto* u = reinterpret_cast<const uint8_t*>(p);
    if ((u[0] | u[1] | u[2]) < 0x80) {
      *shared = u[0];
      *non_shared = u[1];
      *value_length = u[2];
      p += 3;
      if (uint64_t{*non_shared} + *value_length >
          static_cast<uint64_t>(limit - p)) {
        return nullptr;
      }
      return p;
    }
  }
  if ((p = GetVarint32Ptr(p, limit, shared)) == nullptr) return nullptr;
  if ((p = GetVarint32Ptr(p, limit, non_shared)) == nullptr) return nullptr;
  if ((p = GetVarint32Ptr(p, limit, value_length)) == nullptr) return nullptr;
  const uint64_t need = uint64_t{*non_shared} + *value_length;
  if (need > static_cast<uint64_t>(limit - p)) return nullptr;
  return p;
}

// Where a block's restart array is, read from its last four bytes (the
// layout Block::Parse checks and Block::PrefetchRestartKeys reads before any
// check): std::nullopt when the count cannot be right.
struct RestartArray {
  uint32_t count;   // >= 1
  uint32_t offset;  // where the array starts = end of the entries
};
std::optional<RestartArray> LocateRestartArray(const char* data, size_t size) {
  if (size < sizeof(uint32_t) || size > UINT32_MAX) return std::nullopt;
  const uint32_t count = DecodeFixed32(data + size - sizeof(uint32_t));
  if (count == 0 || count > (size - sizeof(uint32_t)) / sizeof(uint32_t)) {
    return std::nullopt;
  }
  return RestartArray{
      count,
      static_cast<uint32_t>(size - sizeof(uint32_t) * (uint64_t{count} + 1))};
}

}  // namespace

// ---- Block ----

Block::Block(BlockContents contents, uint64_t file_offset,
             uint32_t restart_offset, uint32_t num_restarts)
    : contents_(std::move(contents)),
      file_offset_(file_offset),
      restart_offset_(restart_offset),
      num_restarts_(num_restarts) {}

absl::StatusOr<std::unique_ptr<Block>> Block::Create(
    BlockContents contents, uint64_t file_offset,
    const std::string& file_name) {
  absl::StatusOr<Block> block =
      Parse(std::move(contents), file_offset, file_name);
  if (!block.ok()) return block.status();
  return std::make_unique<Block>(*std::move(block));
}

absl::StatusOr<Block> Block::Parse(BlockContents contents, uint64_t file_offset,
                                   const std::string& file_name) {
  auto bad = [&](std::string_view what) {
    return absl::DataLossError(
        absl::StrCat(file_name, ": block at offset ", file_offset, ": ",
                     absl::string_view(what.data(), what.size())));
  };
  const size_t size = contents.size;
  if (size < sizeof(uint32_t)) return bad("too short for a restart count");
  if (size > UINT32_MAX) return bad("larger than 4 GiB");
  const char* data = contents.bytes();
  const std::optional<RestartArray> array = LocateRestartArray(data, size);
  if (!array.has_value()) return bad("bad restart count");
  const uint32_t num_restarts = array->count;
  const uint32_t restart_offset = array->offset;
  // Restart points must start at 0 and increase strictly inside the entries
  // (an empty block has the single restart 0 == restart_offset); the
  // iterator's binary search relies on this order.
  uint32_t previous = 0;
  for (uint32_t i = 0; i < num_restarts; ++i) {
    const uint32_t r = DecodeFixed32(data + restart_offset + 4 * i);
    const bool ok =
        i == 0 ? (r == 0 && (r < restart_offset ||
                             (restart_offset == 0 && num_restarts == 1)))
               : (r > previous && r < restart_offset);
    if (!ok) return bad("bad restart array");
    previous = r;
  }
  return Block(std::move(contents), file_offset, restart_offset, num_restarts);
}

std::unique_ptr<BlockIterator> Block::NewIterator(
    const Comparator* comparator, const std::string* file_name) const {
  return std::make_unique<BlockIterator>(this, comparator, file_name);
}

// ---- BlockRef ----

BlockRef BlockRef::Owned(std::unique_ptr<Block> block) {
  BlockRef ref;
  ref.block_ = block.get();
  ref.owned_ = std::move(block);
  return ref;
}

BlockRef BlockRef::Cached(Cache* cache, Cache::Handle* handle) {
  BlockRef ref;
  ref.block_ = static_cast<const Block*>(cache->Value(handle));
  ref.cache_ = cache;
  ref.handle_ = handle;
  return ref;
}

BlockRef BlockRef::Borrowed(const Block* block) {
  BlockRef ref;
  ref.block_ = block;
  return ref;
}

BlockRef::BlockRef(BlockRef&& other) noexcept
    : block_(std::exchange(other.block_, nullptr)),
      owned_(std::move(other.owned_)),
      cache_(std::exchange(other.cache_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)) {}

BlockRef& BlockRef::operator=(BlockRef&& other) noexcept {
  if (this != &other) {
    Reset();
    block_ = std::exchange(other.block_, nullptr);
    owned_ = std::move(other.owned_);
    cache_ = std::exchange(other.cache_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

BlockRef::~BlockRef() { Reset(); }

void BlockRef::Reset() {
  if (handle_ != nullptr) cache_->Release(handle_);
  handle_ = nullptr;
  cache_ = nullptr;
  owned_.reset();
  block_ = nullptr;
}

void Block::PrefetchRestartKeys(std::string_view contents) {
  const char* const data = contents.data();
  const std::optional<RestartArray> array =
      LocateRestartArray(data, contents.size());
  if (!array.has_value() || array->count > kPrefetchedRestarts) return;
  // Point 0 is never compared (the search answers "at or after it").
  for (uint32_t i = 1; i < array->count; ++i) {
    const uint32_t at = DecodeFixed32(data + array->offset + 4 * i);
    if (at < array->offset) __builtin_prefetch(data + at);
  }
}

// ---- BlockIterator ----

BlockIterator::BlockIterator(const Block* block, const Comparator* comparator,
                             const std::string* file_name)
    : data_(block->contents_.bytes()),
      restart_offset_(block->restart_offset_),
      num_restarts_(block->num_restarts_),
      block_file_offset_(block->file_offset_),
      order_(comparator),
      file_name_(file_name),
      current_(restart_offset_),
      next_(restart_offset_),
      restart_index_(num_restarts_),
      next_restart_(restart_offset_) {}

BlockIterator::BlockIterator(const Comparator* comparator,
                             const std::string* file_name)
    : data_(nullptr),
      restart_offset_(0),
      num_restarts_(0),
      block_file_offset_(0),
      order_(comparator),
      file_name_(file_name),
      current_(0),
      next_(0),
      restart_index_(0),
      next_restart_(0) {}

void BlockIterator::Reset(const Block* block) {
  if (block == nullptr) {
    data_ = nullptr;
    restart_offset_ = 0;
    num_restarts_ = 0;
    block_file_offset_ = 0;
  } else {
    data_ = block->contents_.bytes();
    restart_offset_ = block->restart_offset_;
    num_restarts_ = block->num_restarts_;
    block_file_offset_ = block->file_offset_;
  }
  status_ = absl::OkStatus();
  MarkInvalid();
}

void BlockIterator::MarkInvalid() {
  current_ = restart_offset_;
  next_ = restart_offset_;
  restart_index_ = num_restarts_;
  next_restart_ = restart_offset_;
  key_.clear();
  value_ = {};
}

void BlockIterator::Corrupt(uint32_t entry_offset) {
  MarkInvalid();
  if (status_.ok()) {
    status_ = absl::DataLossError(absl::StrCat(
        file_name_ != nullptr ? *file_name_ : std::string("<block>"),
        ": block at offset ", block_file_offset_, ": bad entry at byte ",
        entry_offset));
  }
}

void BlockIterator::SetRestartIndex(uint32_t index) {
  restart_index_ = index;
  next_restart_ =
      index + 1 < num_restarts_ ? RestartOffset(index + 1) : restart_offset_;
}

void BlockIterator::SeekToRestartPoint(uint32_t index) {
  key_.clear();
  value_ = {};
  SetRestartIndex(index);
  next_ = RestartOffset(index);
}

// Inline: it is the body of every scan's loop (ScanTo, Next), where a call per
// entry cost a fifth of the entry.
[[gnu::always_inline]] inline bool BlockIterator::ParseNextEntry() {
  current_ = next_;
  if (current_ >= restart_offset_) {
    MarkInvalid();
    return false;
  }
  const char* limit = data_ + restart_offset_;
  uint32_t shared, non_shared, value_length;
  const char* p =
      DecodeEntry(data_ + current_, limit, &shared, &non_shared, &value_length);
  bool at_restart = false;
  if (current_ >= next_restart_) {
    // Entered the next restart interval (skipping any that a damaged block
    // would have us jump over).
    uint32_t index = restart_index_ + 1;
    while (index + 1 < num_restarts_ && RestartOffset(index + 1) <= current_) {
      ++index;
    }
    SetRestartIndex(index);
    at_restart = RestartOffset(index) == current_;
  } else {
    at_restart = RestartOffset(restart_index_) == current_;
  }
  // A restart entry stores its whole key; other entries may share no more
  // than the key before them holds.
  if (p == nullptr || shared > key_.size() || (at_restart && shared != 0)) {
    Corrupt(current_);
    return false;
  }
  key_.TruncateAndAppend(shared, std::string_view(p, non_shared));
  value_ = std::string_view(p + non_shared, value_length);
  next_ = static_cast<uint32_t>((p + non_shared + value_length) - data_);
  return true;
}

bool BlockIterator::RestartKey(uint32_t index, std::string_view* key) {
  const uint32_t offset = RestartOffset(index);
  uint32_t shared, non_shared, value_length;
  const char* p = DecodeEntry(data_ + offset, data_ + restart_offset_, &shared,
                              &non_shared, &value_length);
  if (p == nullptr || shared != 0) {
    Corrupt(offset);
    return false;
  }
  *key = std::string_view(p, non_shared);
  return true;
}

void BlockIterator::PrefetchEntries(uint32_t offset, uint32_t lines) const {
  // Offsets come from the block and may be damaged: stay inside the entries
  // (ParseNextEntry reports the damage).
  lines = std::min(lines, kMaxPrefetchedLines);
  for (uint32_t i = 0; i < lines; ++i) {
    const uint32_t at = offset + 64 * i;
    if (at >= restart_offset_) return;
    __builtin_prefetch(data_ + at);
  }
}

void BlockIterator::SeekToFirst() {
  if (!status_.ok()) return;
  if (restart_offset_ == 0) return MarkInvalid();
  SeekToRestartPoint(0);
  ParseNextEntry();
}

void BlockIterator::SeekToLast() {
  if (!status_.ok()) return;
  if (restart_offset_ == 0) return MarkInvalid();
  SeekToRestartPoint(num_restarts_ - 1);
  while (ParseNextEntry() && next_ < restart_offset_) {
  }
}

bool BlockIterator::SearchRestarts(std::string_view target, uint32_t* left,
                                   uint32_t right) {
  // Each step of the search reads the key at a restart point, a cache miss
  // when the block was just read, and each depends on the one before. When
  // the points are few (a data block's: about 16), load them all first so
  // those misses overlap; an index block has a point per entry and is
  // searched as is.
  uint32_t l = *left;
  const bool few = right - l + 1 <= kPrefetchedRestarts;
  if (few) {
    for (uint32_t i = l + 1; i <= right; ++i) {
      PrefetchEntries(RestartOffset(i), 1);
    }
  }
  // Invariant: key(l) < target or l is where the search began, and every
  // restart after right has a key >= target.
  while (l < right) {
    const uint32_t mid = l + (right - l + 1) / 2;
    if (!few) PrefetchSearchAhead(l, mid, right);
    std::string_view mid_key;
    if (!RestartKey(mid, &mid_key)) return false;
    if (order_.Compare(mid_key, target) < 0) {
      l = mid;
    } else {
      right = mid - 1;
    }
  }
  *left = l;
  return true;
}

void BlockIterator::PrefetchSearchAhead(uint32_t l, uint32_t mid,
                                        uint32_t right) const {
  // A search over many points (an index block: one per entry) is a chain
  // of two misses per step, the restart entry and then the key it points
  // at. While this step waits for key(mid), start loading the keys the next
  // step may compare (their restart entries were loaded one step earlier)
  // and the restart entries of the step after: each step then waits for
  // about one line that was requested a step before.
  auto middle = [](uint32_t lo, uint32_t hi) { return lo + (hi - lo + 1) / 2; };
  auto prefetch_restart = [&](uint32_t index) {
    __builtin_prefetch(data_ + restart_offset_ + 4 * index);
  };
  // The next step searches [l, mid - 1] or [mid, right].
  if (mid - 1 > l) {
    const uint32_t a = middle(l, mid - 1);
    PrefetchEntries(RestartOffset(a), 1);
    if (a - 1 > l) prefetch_restart(middle(l, a - 1));
    if (mid - 1 > a) prefetch_restart(middle(a, mid - 1));
  }
  if (right > mid) {
    const uint32_t b = middle(mid, right);
    PrefetchEntries(RestartOffset(b), 1);
    if (b - 1 > mid) prefetch_restart(middle(mid, b - 1));
    if (right > b) prefetch_restart(middle(b, right));
  }
}

void BlockIterator::PrefetchInterval(uint32_t index) {
  // A Seek's scan walks the entries of one restart interval in order, a
  // miss per entry or two; load the interval at once.
  const uint32_t begin = RestartOffset(index);
  const uint32_t end =
      index + 1 < num_restarts_ ? RestartOffset(index + 1) : restart_offset_;
  PrefetchEntries(begin, end > begin ? (end - begin) / 64 + 2 : 1);
}

std::optional<uint32_t> BlockIterator::PrefetchSeek(std::string_view target) {
  if (!status_.ok() || restart_offset_ == 0) return std::nullopt;
  uint32_t left = 0;
  if (!SearchRestarts(target, &left, num_restarts_ - 1)) return std::nullopt;
  PrefetchInterval(left);
  return left;
}

void BlockIterator::SeekFromRestart(std::string_view target, uint32_t restart) {
  assert(restart <= num_restarts_);
  if (!status_.ok()) return;
  if (restart_offset_ == 0 || restart >= num_restarts_) return MarkInvalid();
  SeekToRestartPoint(restart);
  ScanTo(target);
}

void BlockIterator::ScanTo(std::string_view target) {
  while (ParseNextEntry()) {
    if (order_.Compare(key_.view(), target) >= 0) return;
  }
}

void BlockIterator::SearchAndScan(std::string_view target, uint32_t left,
                                  uint32_t right) {
  if (!SearchRestarts(target, &left, right)) return;
  SeekToRestartPoint(left);
  PrefetchInterval(left);
  ScanTo(target);
}

void BlockIterator::SeekBetweenRestarts(std::string_view target, uint32_t left,
                                        uint32_t right) {
  assert(left <= right && right < num_restarts_);
  if (!status_.ok()) return;
  if (restart_offset_ == 0 || right >= num_restarts_) return MarkInvalid();
  SearchAndScan(target, left, right);
}

void BlockIterator::Seek(std::string_view target) {
  if (!status_.ok()) return;
  if (restart_offset_ == 0) return MarkInvalid();
  // Find the last restart point whose key is < target; the answer is at or
  // after it. Invariant: key(left) < target or left == 0, and every restart
  // after right has a key >= target.
  uint32_t left = 0;
  uint32_t right = num_restarts_ - 1;
  if (Valid()) {
    // Seeks often land near the last one (the table iterator seeks within a
    // block it already has): narrow the search with the current position.
    const int c = order_.Compare(key_.view(), target);
    if (c == 0) return;  // keys are distinct: this is the first >= target
    if (c < 0) {
      left = restart_index_;
    } else {
      right = restart_index_;
    }
  }
  SearchAndScan(target, left, right);
}

void BlockIterator::Next() {
  assert(Valid());
  ParseNextEntry();
}

void BlockIterator::Prev() {
  assert(Valid());
  const uint32_t original = current_;
  // Back up to the last restart point strictly before the current entry, then
  // scan forward to the entry just before it.
  while (RestartOffset(restart_index_) >= original) {
    if (restart_index_ == 0) return MarkInvalid();
    --restart_index_;
  }
  SeekToRestartPoint(restart_index_);
  while (ParseNextEntry() && next_ < original) {
  }
}

}  // namespace sift
