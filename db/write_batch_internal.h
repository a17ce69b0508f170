#ifndef SIFT_DB_WRITE_BATCH_INTERNAL_H_
#define SIFT_DB_WRITE_BATCH_INTERNAL_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "db/dbformat.h"
#include "sift/write_batch.h"

namespace sift {

class MemTable;

// Access to a WriteBatch's serialized form for the engine (the WAL stores it
// as is; see doc/log_format.md).
class WriteBatchInternal {
 public:
  static constexpr size_t kHeaderSize = 12;  // 8-byte sequence + 4-byte count

  static uint32_t Count(const WriteBatch* batch);
  static void SetCount(WriteBatch* batch, uint32_t n);
  // Sequence number of the first update in the batch.
  static SequenceNumber Sequence(const WriteBatch* batch);
  static void SetSequence(WriteBatch* batch, SequenceNumber seq);

  static std::string_view Contents(const WriteBatch* batch) {
    return batch->rep_;
  }
  static size_t ByteSize(const WriteBatch* batch) { return batch->rep_.size(); }
  // Replace the batch with `contents` (a WAL record). Corruption status if it
  // is shorter than the header; the body is checked by Iterate/InsertInto.
  static absl::Status SetContents(WriteBatch* batch, std::string_view contents);

  // Apply every update to `memtable`, numbering them from Sequence(batch).
  // Corruption status if the body is damaged or its count is wrong.
  static absl::Status InsertInto(const WriteBatch* batch, MemTable* memtable);

  static void Append(WriteBatch* dst, const WriteBatch* src);
};

}  // namespace sift

#endif  // SIFT_DB_WRITE_BATCH_INTERNAL_H_
