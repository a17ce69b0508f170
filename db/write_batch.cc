// WriteBatch serialized form (doc/log_format.md, "WriteBatch record body"):
//   fixed64 sequence    sequence number of the first update
//   fixed32 count       number of updates that follow
//   count x update:
//     kTypeValue    varint32 key length, key, varint32 value length, value
//     kTypeDeletion varint32 key length, key
// The same bytes are the payload of a write-ahead log record.

#include "sift/write_batch.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "util/coding.h"

namespace sift {

WriteBatch::WriteBatch() { Clear(); }

void WriteBatch::Clear() { rep_.assign(WriteBatchInternal::kHeaderSize, '\0'); }

uint32_t WriteBatch::Count() const { return WriteBatchInternal::Count(this); }

void WriteBatch::Put(std::string_view key, std::string_view value) {
  WriteBatchInternal::SetCount(this, WriteBatchInternal::Count(this) + 1);
  rep_.push_back(static_cast<char>(kTypeValue));
  PutLengthPrefixed(&rep_, key);
  PutLengthPrefixed(&rep_, value);
}

void WriteBatch::Delete(std::string_view key) {
  WriteBatchInternal::SetCount(this, WriteBatchInternal::Count(this) + 1);
  rep_.push_back(static_cast<char>(kTypeDeletion));
  PutLengthPrefixed(&rep_, key);
}

void WriteBatch::Append(const WriteBatch& source) {
  WriteBatchInternal::Append(this, &source);
}

absl::Status WriteBatch::Iterate(Handler* handler) const {
  if (rep_.size() < WriteBatchInternal::kHeaderSize) {
    return absl::DataLossError(
        absl::StrCat("malformed WriteBatch: ", rep_.size(),
                     " bytes, shorter than its 12-byte header"));
  }
  std::string_view input(rep_);
  input.remove_prefix(WriteBatchInternal::kHeaderSize);
  const uint32_t expected = WriteBatchInternal::Count(this);
  uint32_t found = 0;
  while (!input.empty()) {
    const size_t offset = rep_.size() - input.size();
    const auto tag = static_cast<uint8_t>(input[0]);
    input.remove_prefix(1);
    std::string_view key;
    std::string_view value;
    switch (tag) {
      case kTypeValue:
        if (!GetLengthPrefixed(&input, &key) ||
            !GetLengthPrefixed(&input, &value)) {
          return absl::DataLossError(
              absl::StrCat("malformed WriteBatch: bad Put at offset ", offset));
        }
        handler->Put(key, value);
        break;
      case kTypeDeletion:
        if (!GetLengthPrefixed(&input, &key)) {
          return absl::DataLossError(absl::StrCat(
              "malformed WriteBatch: bad Delete at offset ", offset));
        }
        handler->Delete(key);
        break;
      default:
        return absl::DataLossError(absl::StrCat(
            "malformed WriteBatch: unknown tag ", tag, " at offset ", offset));
    }
    ++found;
  }
  if (found != expected) {
    return absl::DataLossError(
        absl::StrCat("malformed WriteBatch: header count ", expected, " but ",
                     found, " updates"));
  }
  return absl::OkStatus();
}

uint32_t WriteBatchInternal::Count(const WriteBatch* batch) {
  return DecodeFixed32(batch->rep_.data() + 8);
}

void WriteBatchInternal::SetCount(WriteBatch* batch, uint32_t n) {
  EncodeFixed32(batch->rep_.data() + 8, n);
}

SequenceNumber WriteBatchInternal::Sequence(const WriteBatch* batch) {
  return DecodeFixed64(batch->rep_.data());
}

void WriteBatchInternal::SetSequence(WriteBatch* batch, SequenceNumber seq) {
  EncodeFixed64(batch->rep_.data(), seq);
}

absl::Status WriteBatchInternal::SetContents(WriteBatch* batch,
                                             std::string_view contents) {
  if (contents.size() < kHeaderSize) {
    return absl::DataLossError(
        absl::StrCat("malformed WriteBatch: ", contents.size(),
                     " bytes, shorter than its 12-byte header"));
  }
  batch->rep_.assign(contents.data(), contents.size());
  return absl::OkStatus();
}

namespace {

// Adds each update to a memtable with consecutive sequence numbers.
class MemTableInserter final : public WriteBatch::Handler {
 public:
  MemTableInserter(SequenceNumber first, MemTable* mem)
      : sequence_(first), mem_(mem) {}

  void Put(std::string_view key, std::string_view value) override {
    mem_->Add(sequence_++, kTypeValue, key, value);
  }
  void Delete(std::string_view key) override {
    mem_->Add(sequence_++, kTypeDeletion, key, std::string_view());
  }

 private:
  SequenceNumber sequence_;
  MemTable* mem_;
};

// Counts and validates without side effects.
class NullHandler final : public WriteBatch::Handler {
 public:
  void Put(std::string_view, std::string_view) override {}
  void Delete(std::string_view) override {}
};

}  // namespace

absl::Status WriteBatchInternal::InsertInto(const WriteBatch* batch,
                                            MemTable* memtable) {
  // Validate the whole batch first so a damaged batch applies nothing: the
  // batch is atomic in the memtable as well as in the log.
  NullHandler validator;
  if (absl::Status s = batch->Iterate(&validator); !s.ok()) return s;
  MemTableInserter inserter(Sequence(batch), memtable);
  return batch->Iterate(&inserter);
}

void WriteBatchInternal::Append(WriteBatch* dst, const WriteBatch* src) {
  SetCount(dst, Count(dst) + Count(src));
  dst->rep_.append(src->rep_.data() + kHeaderSize,
                   src->rep_.size() - kHeaderSize);
}

}  // namespace sift
