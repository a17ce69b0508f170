#ifndef SIFT_DB_VERSION_EDIT_H_
#define SIFT_DB_VERSION_EDIT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "db/dbformat.h"
#include "db/seek_budget.h"
#include "db/table_pin.h"

namespace sift {

// A table file as the version set knows it.
struct FileMetaData {
  uint64_t number = 0;
  uint64_t file_size = 0;
  InternalKey smallest;  // smallest internal key in the table
  InternalKey largest;   // largest internal key in the table
  // 0: the table's entries carry their own sequence numbers. Otherwise an
  // ingested table (db/global_seqno.h): its entries are stored at sequence 0
  // and all read as this sequence number; smallest and largest carry it.
  SequenceNumber global_seqno = 0;
  // The table's filter as built: serialized bytes and distinct keys. Not in
  // the MANIFEST, so known only for tables this process wrote (kept by
  // trivial moves); both 0 otherwise. The optimal filter allocation
  // (db/filter_allocation.h) uses them to keep the tree's filter memory at
  // its budget.
  uint64_t filter_bytes = 0;
  uint64_t filter_keys = 0;
  // Not part of the file's description (never encoded, not copied): the
  // open table, once a read pinned it. See TablePinSlot.
  TablePinSlot pin;
  // Not part of the file's description either: the iterator seeks charged
  // to this table (Version::RecordSeek). See SeekBudget.
  SeekBudget seeks;
};

// The files of one level: level 0 in the order they were added, deeper
// levels sorted by key range.
using FileList = std::vector<std::shared_ptr<const FileMetaData>>;

// One change to the set of live tables and counters, as logged in the
// MANIFEST (doc/manifest_format.md). Every field is optional.
//
// Thread safety: a plain value; not safe for concurrent mutation.
class VersionEdit {
 public:
  // Format version written at the head of an encoded edit. Versions 1 to
  // kFormatVersion are read; version 1 also had a previous log number
  // (always 0), retired in version 2. Version 3 added files with a global
  // sequence number (ingested tables); an edit without one is still written
  // as version 2, so a database that never ingested stays readable by builds
  // that read up to version 2.
  static constexpr uint32_t kFormatVersion = 3;

  void Clear() { *this = VersionEdit(); }

  void SetComparatorName(std::string_view name) {
    comparator_ = std::string(name);
  }
  void SetLogNumber(uint64_t n) { log_number_ = n; }
  void SetNextFile(uint64_t n) { next_file_number_ = n; }
  void SetLastSequence(SequenceNumber s) { last_sequence_ = s; }
  void SetCompactPointer(int level, const InternalKey& key) {
    compact_pointers_.emplace_back(level, key);
  }
  // REQUIRES: 0 <= level < config::kNumLevels
  void AddFile(int level, const FileMetaData& f) {
    new_files_.emplace_back(level, f);
  }
  void RemoveFile(int level, uint64_t number) {
    deleted_files_.insert({level, number});
  }

  const std::optional<std::string>& comparator() const { return comparator_; }
  const std::optional<uint64_t>& log_number() const { return log_number_; }
  const std::optional<uint64_t>& next_file_number() const {
    return next_file_number_;
  }
  const std::optional<SequenceNumber>& last_sequence() const {
    return last_sequence_;
  }
  const std::vector<std::pair<int, InternalKey>>& compact_pointers() const {
    return compact_pointers_;
  }
  const std::set<std::pair<int, uint64_t>>& deleted_files() const {
    return deleted_files_;
  }
  const std::vector<std::pair<int, FileMetaData>>& new_files() const {
    return new_files_;
  }

  void EncodeTo(std::string* dst) const;
  // Replace *this with the edit in `src`. absl::DataLossError on truncated or
  // malformed bytes, an unknown or retired field tag, a level out of range,
  // or an unsupported format version.
  absl::Status DecodeFrom(std::string_view src);

  // Human-readable, one field per line (kvtool manifest).
  std::string DebugString() const;

 private:
  std::optional<std::string> comparator_;
  std::optional<uint64_t> log_number_;
  std::optional<uint64_t> next_file_number_;
  std::optional<SequenceNumber> last_sequence_;
  std::vector<std::pair<int, InternalKey>> compact_pointers_;
  std::set<std::pair<int, uint64_t>> deleted_files_;
  std::vector<std::pair<int, FileMetaData>> new_files_;
};

}  // namespace sift

#endif  // SIFT_DB_VERSION_EDIT_H_
