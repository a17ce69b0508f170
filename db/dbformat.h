#ifndef SIFT_DB_DBFORMAT_H_
#define SIFT_DB_DBFORMAT_H_

// Internal keys: what memtables and tables store. An internal key is the user
// key followed by 8 bytes holding (sequence << 8 | type), little-endian.
// Internal keys order by user key ascending, then sequence descending, so the
// newest version of a key comes first.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "util/coding.h"
#include "util/comparator.h"

namespace sift {

// Tuning constants of the level structure. Internal by design.
namespace config {
inline constexpr int kNumLevels = 7;
// Level 0 is compacted once it holds this many tables.
inline constexpr int kL0CompactionTrigger = 4;
// Writes are delayed by about 1 ms each once level 0 holds this many tables.
// A level-0 table costs a point read one filter probe, so level 0 may grow
// well past the compaction trigger before writes pay for it; the more tables
// a level-0 compaction takes at once, the fewer times level 1 is rewritten
// (doc/engine.md, "Writes").
inline constexpr int kL0SlowdownWritesTrigger = 20;
// Writes stop until compaction catches up at this many level-0 tables.
inline constexpr int kL0StopWritesTrigger = 36;
// A flushed memtable may go straight to this level if nothing overlaps it.
inline constexpr int kMaxMemCompactLevel = 2;
// Level 1 holds about this many bytes, or kLevel1WriteBuffers memtables'
// worth if that is more (Level1MaxBytes); each deeper level 10x more.
inline constexpr double kLevel1MaxBytes = 10.0 * 1048576.0;
inline constexpr double kLevel1WriteBuffers = 2.5;
inline constexpr double kLevelSizeMultiplier = 10.0;
}  // namespace config

enum ValueType : uint8_t {
  kTypeDeletion = 0x0,
  kTypeValue = 0x1,
};
// Seeking for (user_key, seq) must land on entries of that user key with
// sequence <= seq; since types sort descending within a sequence, seek with the
// highest type.
inline constexpr ValueType kValueTypeForSeek = kTypeValue;

using SequenceNumber = uint64_t;
// 56 bits: the low 8 bits of the packed tag hold the type.
inline constexpr SequenceNumber kMaxSequenceNumber = (uint64_t{1} << 56) - 1;

struct ParsedInternalKey {
  std::string_view user_key;
  SequenceNumber sequence = 0;
  ValueType type = kTypeValue;
};

inline uint64_t PackSequenceAndType(SequenceNumber seq, ValueType t) {
  return (seq << 8) | t;
}

// Append the internal key for (user_key, seq, t) to *result.
void AppendInternalKey(std::string* result, std::string_view user_key,
                       SequenceNumber seq, ValueType t);

// False if `internal_key` is too short or has an unknown type.
bool ParseInternalKey(std::string_view internal_key, ParsedInternalKey* result);

// REQUIRES: internal_key.size() >= 8
inline std::string_view ExtractUserKey(std::string_view internal_key) {
  return internal_key.substr(0, internal_key.size() - 8);
}

// Orders internal keys: user key by the user comparator, then sequence
// descending, then type descending.
class InternalKeyComparator final : public Comparator {
 public:
  // `user` is not owned and must outlive this comparator.
  explicit InternalKeyComparator(const Comparator* user)
      : user_(user), bytewise_(user == BytewiseComparator()) {}
  int Compare(std::string_view a, std::string_view b) const override {
    const int r = CompareUserKeys(ExtractUserKey(a), ExtractUserKey(b));
    if (r != 0) return r;
    return CompareTags(a, b);
  }
  // Two user keys in the user comparator's order. The bytewise order (the
  // one every DB uses) is inline: it is on every step of every search.
  int CompareUserKeys(std::string_view a, std::string_view b) const {
    return bytewise_ ? CompareBytes(a, b) : user_->Compare(a, b);
  }
  const char* Name() const override { return "sift.InternalKeyComparator"; }
  // The user key's part: internal keys order by user key first.
  bool BytewisePart(std::string_view key,
                    std::string_view* part) const override {
    if (key.size() < 8) return false;
    return user_->BytewisePart(ExtractUserKey(key), part);
  }
  int BytewisePartSuffix() const override {
    const int n = user_->BytewisePartSuffix();
    return n < 0 ? -1 : n + 8;
  }
  void FindShortestSeparator(std::string* start,
                             std::string_view limit) const override;
  void FindShortSuccessor(std::string* key) const override;
  const Comparator* user_comparator() const { return user_; }

 private:
  // Same user key: the larger tag (newer sequence, then higher type) first.
  static int CompareTags(std::string_view a, std::string_view b) {
    const uint64_t atag = DecodeFixed64(a.data() + a.size() - 8);
    const uint64_t btag = DecodeFixed64(b.data() + b.size() - 8);
    return atag > btag ? -1 : (atag < btag ? 1 : 0);
  }

  const Comparator* user_;
  const bool bytewise_;
};

// An owned internal key (file boundaries in version edits).
class InternalKey {
 public:
  InternalKey() = default;  // empty: invalid
  InternalKey(std::string_view user_key, SequenceNumber s, ValueType t) {
    AppendInternalKey(&rep_, user_key, s, t);
  }
  // False (and *this unchanged) if `s` is not a valid internal key.
  bool DecodeFrom(std::string_view s);
  std::string_view Encode() const { return rep_; }
  std::string_view user_key() const { return ExtractUserKey(rep_); }
  bool empty() const { return rep_.empty(); }
  void Clear() { rep_.clear(); }
  std::string DebugString() const;

 private:
  std::string rep_;
};

// The keys a lookup of (user_key, snapshot sequence) needs: the memtable key
// (varint32 length + internal key) and the internal key for tables.
class LookupKey {
 public:
  LookupKey(std::string_view user_key, SequenceNumber sequence);
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;

  std::string_view memtable_key() const {
    return {start_, static_cast<size_t>(end_ - start_)};
  }
  std::string_view internal_key() const {
    return {kstart_, static_cast<size_t>(end_ - kstart_)};
  }
  std::string_view user_key() const {
    return {kstart_, static_cast<size_t>(end_ - kstart_ - 8)};
  }

 private:
  // Keys up to kInlineSize bytes (with length and tag) live inline: a point
  // read allocates nothing for its lookup key.
  static constexpr size_t kInlineSize = 128;
  char inline_[kInlineSize];
  std::unique_ptr<char[]> heap_;  // longer keys
  const char* start_;
  const char* kstart_;
  const char* end_;
};

}  // namespace sift

#endif  // SIFT_DB_DBFORMAT_H_
