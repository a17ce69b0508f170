// DB::GetApproximateSizes: bytes of table files per key range, from the
// tables' index blocks (no data block is read).

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "db/db_impl.h"
#include "db/dbformat.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "table/table.h"
#include "util/mutex.h"

namespace sift {
namespace {

// Bytes of `file` holding user keys in [start, limit). REQUIRES: start <
// limit.
uint64_t FileBytesInRange(const InternalKeyComparator& icmp,
                          TableCache* table_cache, const FileMetaData& file,
                          std::string_view start, std::string_view limit) {
  const Comparator* ucmp = icmp.user_comparator();
  const std::string_view smallest = file.smallest.user_key();
  const std::string_view largest = file.largest.user_key();
  if (ucmp->Compare(largest, start) < 0 ||
      ucmp->Compare(smallest, limit) >= 0) {
    return 0;
  }
  // Wholly inside: the whole file, without opening the table.
  if (ucmp->Compare(smallest, start) >= 0 &&
      ucmp->Compare(largest, limit) < 0) {
    return file.file_size;
  }
  // The range cuts the table: ask its index where each end falls. A table
  // pinned by point reads is used as it is; otherwise it is looked up (and
  // opened if need be) without pinning it, so sizing never changes which
  // tables the point-read path keeps pinned.
  TableCache::TableRef ref;
  const Table* table = file.pin.table();
  if (table == nullptr) {
    absl::StatusOr<TableCache::TableRef> found =
        table_cache->FindTable(file.number, file.file_size);
    // Unreadable: an overestimate is safer for a caller that splits or
    // budgets by size than hiding the file's bytes.
    if (!found.ok()) return file.file_size;
    ref = *std::move(found);
    table = &ref.table();
  }
  // The first internal key of each user key: an ingested table's entries
  // (stored at sequence 0) sort after it too.
  const InternalKey start_key(start, kMaxSequenceNumber, kValueTypeForSeek);
  const InternalKey limit_key(limit, kMaxSequenceNumber, kValueTypeForSeek);
  const uint64_t begin = table->ApproximateOffsetOf(start_key.Encode());
  const uint64_t end = table->ApproximateOffsetOf(limit_key.Encode());
  return end > begin ? end - begin : 0;
}

}  // namespace

std::vector<uint64_t> DBImpl::GetApproximateSizes(
    std::span<const KeyRange> ranges) {
  std::shared_ptr<const Version> current;
  {
    MutexLock lock(&state_.mutex);
    current = state_.versions->current();
  }
  // Holding `current` keeps its tables on disk while their indexes are read,
  // without the mutex.
  const InternalKeyComparator& icmp = state_.icmp;
  const Comparator* ucmp = icmp.user_comparator();
  std::vector<uint64_t> sizes(ranges.size(), 0);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const KeyRange& range = ranges[i];
    if (ucmp->Compare(range.start, range.limit) >= 0) continue;
    uint64_t total = 0;
    // Level 0's tables overlap each other: every one is checked.
    for (const auto& f : current->files(0)) {
      total += FileBytesInRange(icmp, state_.table_cache.get(), *f, range.start,
                                range.limit);
    }
    // Deeper levels are sorted and disjoint: start at the first table that
    // can hold `start` and stop at the first that begins at or past `limit`.
    const InternalKey start_key(range.start, kMaxSequenceNumber,
                                kValueTypeForSeek);
    for (int level = 1; level < config::kNumLevels; ++level) {
      const FileList& files = current->files(level);
      for (size_t f = FindFile(icmp, files, start_key.Encode());
           f < files.size(); ++f) {
        if (ucmp->Compare(files[f]->smallest.user_key(), range.limit) >= 0) {
          break;
        }
        total += FileBytesInRange(icmp, state_.table_cache.get(), *files[f],
                                  range.start, range.limit);
      }
    }
    sizes[i] = total;
  }
  return sizes;
}

}  // namespace sift
