#ifndef SIFT_DB_TABLE_PIN_H_
#define SIFT_DB_TABLE_PIN_H_

#include <atomic>

namespace sift {

class Table;
class TableCache;

// The open table of one file, pinned for as long as the file's FileMetaData
// lives, so that a point read reaches a table it has read before with one
// atomic load instead of a table-cache lookup (a hash, a shard lock and a
// reference count per probe). Set at most once, by TableCache::GetTable,
// which bounds how many tables are pinned at once (max_open_files).
//
// A copy of a FileMetaData describes the same file but pins nothing: the
// pin belongs to the one shared FileMetaData that versions point to.
//
// Thread safety: table() is safe to call concurrently with TableCache
// setting the pin; copying and assigning are not (they happen only while a
// FileMetaData is being built, before it is shared).
class TablePinSlot {
 public:
  TablePinSlot() = default;
  TablePinSlot(const TablePinSlot& /*other*/) {}
  TablePinSlot& operator=(const TablePinSlot& other);
  ~TablePinSlot();

  // The pinned table, or nullptr. Inline: it is on every probe of a point
  // read.
  const Table* table() const { return table_.load(std::memory_order_acquire); }

 private:
  friend class TableCache;
  struct Pin;  // defined by TableCache
  // Set once, by the compare-and-swap that pins; owns the table reference.
  mutable std::atomic<Pin*> pin_{nullptr};
  // The table pin_ holds, published after pin_ by the reader whose swap
  // succeeded. Between the two stores table() is still nullptr: a reader
  // then takes TableCache::GetTable, which reads pin_.
  mutable std::atomic<const Table*> table_{nullptr};
};

}  // namespace sift

#endif  // SIFT_DB_TABLE_PIN_H_
