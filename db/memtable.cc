#include "db/memtable.h"

#include <cstring>
#include <memory>
#include <vector>

#include "db/memtable_filter.h"
#include "db/skiplist.h"
#include "util/arena.h"
#include "util/coding.h"
#include "util/key_buffer.h"

namespace sift {
namespace {

// The internal key of an entry that starts with varint32 length + internal
// key. Entries were encoded by Add, so they are well formed.
std::string_view EntryKey(const char* entry) {
  uint32_t len = 0;
  const char* p = GetVarint32Ptr(entry, entry + 5, &len);
  return {p, len};
}

// Orders skiplist entries by their internal keys.
struct EntryComparator {
  const InternalKeyComparator* comparator;
  int operator()(const char* a, const char* b) const {
    return comparator->Compare(EntryKey(a), EntryKey(b));
  }
};

using Table = SkipList<const char*, EntryComparator, Arena>;

}  // namespace

struct MemTable::Rep {
  Rep(const InternalKeyComparator& cmp, size_t filter_bytes)
      : comparator(cmp),
        table(EntryComparator{&comparator}, &arena),
        filter(filter_bytes > 0 ? std::make_unique<MemTableFilter>(filter_bytes)
                                : nullptr) {}

  const InternalKeyComparator comparator;
  Arena arena;
  Table table;
  const std::unique_ptr<MemTableFilter> filter;  // nullptr: none
  std::atomic<uint64_t> num_entries{0};
};

namespace {

class MemTableIterator final : public Iterator {
 public:
  explicit MemTableIterator(const Table* table) : iter_(table) {}

  bool Valid() const override { return iter_.Valid(); }
  void SeekToFirst() override { iter_.SeekToFirst(); }
  void SeekToLast() override { iter_.SeekToLast(); }
  void Seek(std::string_view target) override {
    // Entries are keyed by length-prefixed internal keys.
    char length[5];
    const char* end =
        EncodeVarint32(length, static_cast<uint32_t>(target.size()));
    seek_key_.TruncateAndAppend(
        0, std::string_view(length, static_cast<size_t>(end - length)));
    seek_key_.TruncateAndAppend(seek_key_.size(), target);
    iter_.Seek(seek_key_.view().data());
  }
  void Next() override { iter_.Next(); }
  void Prev() override { iter_.Prev(); }
  std::string_view key() const override { return EntryKey(iter_.key()); }
  std::string_view value() const override {
    const std::string_view k = EntryKey(iter_.key());
    uint32_t len = 0;
    const char* p =
        GetVarint32Ptr(k.data() + k.size(), k.data() + k.size() + 5, &len);
    return {p, len};
  }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  Table::Iterator iter_;
  KeyBuffer seek_key_;  // a key of a few dozen bytes allocates nothing
};

}  // namespace

MemTable::MemTable(const InternalKeyComparator& comparator, size_t filter_bytes)
    : rep_(std::make_unique<Rep>(comparator, filter_bytes)),
      filter_(rep_->filter.get()) {}

MemTable::~MemTable() = default;

size_t MemTable::ApproximateMemoryUsage() const {
  return rep_->arena.MemoryUsage() +
         (rep_->filter != nullptr ? rep_->filter->MemoryUsage() : 0);
}

uint64_t MemTable::NumEntries() const {
  return rep_->num_entries.load(std::memory_order_relaxed);
}

std::unique_ptr<Iterator> MemTable::NewIterator() const {
  return std::make_unique<MemTableIterator>(&rep_->table);
}

void MemTable::Add(SequenceNumber seq, ValueType type, std::string_view key,
                   std::string_view value) {
  // One buffer: varint32 internal key length, user key, tag, varint32 value
  // length, value.
  const size_t internal_size = key.size() + 8;
  const size_t encoded_size = VarintLength(internal_size) + internal_size +
                              VarintLength(value.size()) + value.size();
  // Entries are compared byte-wise, so they need no alignment.
  char* buf = rep_->arena.Allocate(encoded_size);
  char* p = EncodeVarint32(buf, static_cast<uint32_t>(internal_size));
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  p += key.size();
  EncodeFixed64(p, PackSequenceAndType(seq, type));
  p += 8;
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  if (!value.empty()) std::memcpy(p, value.data(), value.size());
  // Bits first: a reader that can see the entry sees its bits.
  if (rep_->filter != nullptr) rep_->filter->Add(key);
  rep_->table.Insert(buf);
  rep_->num_entries.fetch_add(1, std::memory_order_relaxed);
}

bool MemTable::Get(const LookupKey& key, std::string* value,
                   absl::Status* s) const {
  FilterKeyHash filter_key(key.user_key());
  return Get(key, &filter_key, value, s);
}

bool MemTable::Search(const LookupKey& key, std::string* value,
                      absl::Status* s) const {
  Table::Iterator iter(&rep_->table);
  iter.Seek(key.memtable_key().data());
  if (!iter.Valid()) return false;
  // The first entry at or after (user key, sequence): the newest visible
  // version of the user key, if it is that user key at all.
  ParsedInternalKey parsed;
  const std::string_view entry_key = EntryKey(iter.key());
  if (!ParseInternalKey(entry_key, &parsed) ||
      rep_->comparator.user_comparator()->Compare(parsed.user_key,
                                                  key.user_key()) != 0) {
    return false;
  }
  if (parsed.type == kTypeDeletion) {
    *s = absl::NotFoundError("deleted");
    return true;
  }
  const char* end = entry_key.data() + entry_key.size();
  uint32_t len = 0;
  const char* p = GetVarint32Ptr(end, end + 5, &len);
  value->assign(p, len);
  *s = absl::OkStatus();
  return true;
}

}  // namespace sift
