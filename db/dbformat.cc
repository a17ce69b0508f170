#include "db/dbformat.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "util/coding.h"

namespace sift {

void AppendInternalKey(std::string* result, std::string_view user_key,
                       SequenceNumber seq, ValueType t) {
  result->append(user_key.data(), user_key.size());
  PutFixed64(result, PackSequenceAndType(seq, t));
}

bool ParseInternalKey(std::string_view internal_key,
                      ParsedInternalKey* result) {
  if (internal_key.size() < 8) return false;
  const uint64_t tag =
      DecodeFixed64(internal_key.data() + internal_key.size() - 8);
  const uint8_t type = static_cast<uint8_t>(tag & 0xff);
  if (type > kTypeValue) return false;
  result->user_key = ExtractUserKey(internal_key);
  result->sequence = tag >> 8;
  result->type = static_cast<ValueType>(type);
  return true;
}

void InternalKeyComparator::FindShortestSeparator(
    std::string* start, std::string_view limit) const {
  const std::string_view user_start = ExtractUserKey(*start);
  const std::string_view user_limit = ExtractUserKey(limit);
  std::string shortened(user_start);
  user_->FindShortestSeparator(&shortened, user_limit);
  // Only a strictly shorter user key that sorts after the old one is worth
  // using; the max tag makes it the first internal key of that user key, which
  // still sorts after *start (its user key is larger) and before `limit`.
  if (shortened.size() < user_start.size() &&
      user_->Compare(user_start, shortened) < 0) {
    PutFixed64(&shortened,
               PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    if (Compare(*start, shortened) < 0 && Compare(shortened, limit) < 0) {
      start->swap(shortened);
    }
  }
}

void InternalKeyComparator::FindShortSuccessor(std::string* key) const {
  const std::string_view user_key = ExtractUserKey(*key);
  std::string successor(user_key);
  user_->FindShortSuccessor(&successor);
  if (successor.size() < user_key.size() &&
      user_->Compare(user_key, successor) < 0) {
    PutFixed64(&successor,
               PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    if (Compare(*key, successor) < 0) key->swap(successor);
  }
}

bool InternalKey::DecodeFrom(std::string_view s) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(s, &parsed)) return false;
  rep_.assign(s.data(), s.size());
  return true;
}

std::string InternalKey::DebugString() const {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(rep_, &parsed)) {
    return absl::StrCat(
        "(bad internal key) '",
        absl::CHexEscape(absl::string_view(rep_.data(), rep_.size())), "'");
  }
  return absl::StrCat("'",
                      absl::CHexEscape(absl::string_view(
                          parsed.user_key.data(), parsed.user_key.size())),
                      "' @ ", parsed.sequence, " : ",
                      parsed.type == kTypeValue ? "value" : "deletion");
}

namespace {

// Copies `key` to `dst`. Keys of 8 to 32 bytes (most keys) are copied as two
// overlapping words or pairs of words, inline: memcpy of a size known only at
// run time is a call into the C library, which costs a point read about as
// much as the rest of building its lookup key.
inline void CopyKeyBytes(char* dst, std::string_view key) {
  const size_t n = key.size();
  const char* src = key.data();
  if (n >= 16 && n <= 32) {
    char head[16];
    char tail[16];
    std::memcpy(head, src, 16);
    std::memcpy(tail, src + n - 16, 16);
    std::memcpy(dst, head, 16);
    std::memcpy(dst + n - 16, tail, 16);
  } else if (n >= 8 && n < 16) {
    uint64_t head;
    uint64_t tail;
    std::memcpy(&head, src, 8);
    std::memcpy(&tail, src + n - 8, 8);
    std::memcpy(dst, &head, 8);
    std::memcpy(dst + n - 8, &tail, 8);
  } else if (n != 0) {
    std::memcpy(dst, src, n);
  }
}

}  // namespace

LookupKey::LookupKey(std::string_view user_key, SequenceNumber sequence) {
  const size_t internal_size = user_key.size() + 8;
  // Keys under 120 bytes (nearly all) have a one-byte length: written
  // inline, without the two out-of-line varint calls.
  const bool short_key = internal_size < 0x80;
  const size_t size =
      (short_key ? 1 : VarintLength(internal_size)) + internal_size;
  char* p = inline_;
  if (size > kInlineSize) {
    heap_ = std::make_unique_for_overwrite<char[]>(size);
    p = heap_.get();
  }
  start_ = p;
  if (short_key) {
    *p++ = static_cast<char>(internal_size);
  } else {
    p = EncodeVarint32(p, static_cast<uint32_t>(internal_size));
  }
  kstart_ = p;
  CopyKeyBytes(p, user_key);
  p += user_key.size();
  EncodeFixed64(p, PackSequenceAndType(sequence, kValueTypeForSeek));
  p += 8;
  end_ = p;
}

}  // namespace sift
