#include "tools/readonly_db.h"

#include "absl/strings/str_cat.h"
#include "db/db_iter.h"
#include "db/filename.h"
#include "db/wal_replay.h"
#include "sift/env.h"
#include "table/iterators.h"
#include "tools/db_files.h"
#include "tools/output.h"

namespace sift::tools {

namespace {

// Tables a tool keeps open at once; plenty for a single lookup or scan.
constexpr int kMaxOpenTables = 200;

// Replayed batches all go into one memtable: nothing is flushed.
class MemTableTarget final : public ReplayTarget {
 public:
  explicit MemTableTarget(MemTable* mem) : mem_(mem) {}
  MemTable* MemTableForInsert() override { return mem_; }
  absl::Status BatchApplied() override { return absl::OkStatus(); }

 private:
  MemTable* const mem_;
};

}  // namespace

ReadOnlyDB::ReadOnlyDB(const std::string& dbname)
    : dbname_(dbname), icmp_(BytewiseComparator()) {
  options_.env = Env::Default();
}

ReadOnlyDB::~ReadOnlyDB() {
  // Versions hold the table cache's tables: release them before it goes.
  version_.reset();
  versions_.reset();
}

absl::StatusOr<std::unique_ptr<ReadOnlyDB>> ReadOnlyDB::Open(
    const std::string& dbname) {
  std::unique_ptr<ReadOnlyDB> db(new ReadOnlyDB(dbname));
  absl::Status s = db->Load();
  if (!s.ok()) return s;
  return db;
}

absl::Status ReadOnlyDB::Load() {
  Env* env = options_.env;
  // Say plainly what is missing before the engine's recovery words it as
  // damage.
  absl::StatusOr<std::string> current = ReadCurrent(env, dbname_);
  if (!current.ok()) return current.status();

  table_cache_ = std::make_unique<TableCache>(dbname_, options_, &icmp_,
                                              nullptr, kMaxOpenTables);
  versions_ = std::make_unique<VersionSet>(dbname_, &options_,
                                           table_cache_.get(), &icmp_);
  // Recover only reads CURRENT and the MANIFEST; the version it installs is
  // never logged (no LogAndApply), so nothing is written.
  absl::Status s = versions_->Recover();
  if (!s.ok()) return s;
  version_ = versions_->current();
  last_sequence_ = versions_->LastSequence();

  mem_ = std::make_shared<MemTable>(icmp_);
  absl::StatusOr<DirListing> listing = ListDatabase(env, dbname_);
  if (!listing.ok()) return listing.status();
  std::vector<uint64_t> logs;
  for (const auto& [number, size] : listing->logs) {
    if (IsLiveLog(number, versions_->LogNumber())) logs.push_back(number);
  }
  // The same point-in-time replay as recovery, so get and scan see what
  // Open would serve.
  MemTableTarget target(mem_.get());
  WalReplayOptions options;
  options.min_log_number = versions_->LogNumber();
  s = ReplayWals(env, dbname_, logs, options, &target, &last_sequence_,
                 &replay_);
  if (!s.ok()) return s;
  if (replay_.stopped_at_damage) {
    log_damage_.push_back(absl::StrCat(
        replay_.first_error,
        "; showing only the writes before it, as Open would (left out: the "
        "damaged record and ",
        replay_.records_dropped, " intact records after it, ",
        replay_.bytes_dropped, " bytes)"));
  }
  return absl::OkStatus();
}

absl::Status ReadOnlyDB::Get(std::string_view key, std::string* value) {
  const LookupKey lkey(key, last_sequence_);
  absl::Status s;
  if (mem_->Get(lkey, value, &s)) return s;
  return version_->Get(ReadOptions(), lkey, value, nullptr);
}

std::unique_ptr<Iterator> ReadOnlyDB::NewIterator(ReadOptions options) {
  options.fill_cache = false;
  IteratorPins pins;
  pins.mem = mem_;
  pins.version = version_;
  IteratorList children;
  children.push_back(mem_->NewIterator());
  version_->AddIterators(options, &children);
  return NewDBIterator(&icmp_, NewMergingIterator(&icmp_, std::move(children)),
                       last_sequence_, options, std::move(pins));
}

}  // namespace sift::tools
