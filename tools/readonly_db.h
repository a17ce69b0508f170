#ifndef SIFT_TOOLS_READONLY_DB_H_
#define SIFT_TOOLS_READONLY_DB_H_

// A read-only view of a database as it is on disk: the tables the MANIFEST
// names (through the engine's VersionSet::Recover and TableCache) plus the
// write-ahead logs not yet in tables, replayed into a private memtable the
// way recovery does. Opening it writes nothing and takes no LOCK, so kvtool
// get and scan work on a database another process has open, and see what
// that process has written to its log so far.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/dbformat.h"
#include "db/memtable.h"
#include "db/table_cache.h"
#include "db/version.h"
#include "db/version_set.h"
#include "db/wal_replay.h"
#include "sift/iterator.h"
#include "sift/options.h"

namespace sift::tools {

// Thread safety: not safe for concurrent use (a tool runs one thread).
class ReadOnlyDB {
 public:
  // Errors: a missing database or CURRENT (NotFound), a damaged MANIFEST
  // (DataLoss), unreadable logs; all name the file.
  static absl::StatusOr<std::unique_ptr<ReadOnlyDB>> Open(
      const std::string& dbname);

  ReadOnlyDB(const ReadOnlyDB&) = delete;
  ReadOnlyDB& operator=(const ReadOnlyDB&) = delete;
  ~ReadOnlyDB();

  // As DB::Get: NotFound if absent or deleted.
  absl::Status Get(std::string_view key, std::string* value);
  // As DB::NewIterator, honouring options' iteration bounds; blocks read are
  // never added to a cache. REQUIRES: *this outlives the iterator.
  std::unique_ptr<Iterator> NewIterator(ReadOptions options = ReadOptions());

  // Damage that stopped the log replay (recovery without paranoid_checks
  // stops there too), one line, naming the log; empty if none.
  const std::vector<std::string>& log_damage() const { return log_damage_; }

 private:
  explicit ReadOnlyDB(const std::string& dbname);
  absl::Status Load();

  const std::string dbname_;
  Options options_;
  InternalKeyComparator icmp_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<VersionSet> versions_;
  std::shared_ptr<const Version> version_;
  std::shared_ptr<MemTable> mem_;
  SequenceNumber last_sequence_ = 0;
  RecoveryReport replay_;
  std::vector<std::string> log_damage_;
};

}  // namespace sift::tools

#endif  // SIFT_TOOLS_READONLY_DB_H_
