#ifndef SIFT_INCLUDE_SIFT_WRITE_BATCH_H_
#define SIFT_INCLUDE_SIFT_WRITE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sift {

// A group of updates applied atomically by DB::Write: after a crash either all
// of them are visible or none. Updates apply in the order they were added, so
// a later Put of the same key wins.
//
// Thread safety: not safe for concurrent use without external locking.
class WriteBatch {
 public:
  // Receives the updates of a batch in order (see Iterate).
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void Put(std::string_view key, std::string_view value) = 0;
    virtual void Delete(std::string_view key) = 0;
  };

  WriteBatch();
  WriteBatch(const WriteBatch&) = default;
  WriteBatch& operator=(const WriteBatch&) = default;
  WriteBatch(WriteBatch&&) = default;
  WriteBatch& operator=(WriteBatch&&) = default;
  ~WriteBatch() = default;

  // Store key -> value. Both are copied.
  void Put(std::string_view key, std::string_view value);
  // Erase key, if present. The key is copied.
  void Delete(std::string_view key);
  // Drop every update in the batch.
  void Clear();
  // Number of updates in the batch.
  uint32_t Count() const;
  // Bytes of the batch's serialized form (what the write-ahead log holds).
  size_t ApproximateSize() const { return rep_.size(); }
  // Append every update of `source` to this batch.
  void Append(const WriteBatch& source);

  // Call `handler` for each update in order. Returns a corruption status if the
  // batch's bytes are damaged (a batch read back from a log).
  absl::Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;

  // Serialized form (see doc/log_format.md): 8-byte sequence number, 4-byte
  // count, then per update a tag byte and length-prefixed key (and value).
  std::string rep_;
};

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_WRITE_BATCH_H_
