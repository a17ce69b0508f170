#include "tools/readonly_db.h"

#include "absl/strings/str_cat.h"
#include "db/db_iter.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "db/write_batch_internal.h"
#include "sift/env.h"
#include "table/iterators.h"
#include "tools/db_files.h"
#include "tools/output.h"

namespace sift::tools {

namespace {

// Tables a tool keeps open at once; plenty for a single lookup or scan.
constexpr int kMaxOpenTables = 200;

class DamageCollector : public log::Reader::Reporter {
 public:
  DamageCollector(const std::string& fname, std::vector<std::string>* out)
      : fname_(fname), out_(out) {}
  void Corruption(size_t bytes, const absl::Status& status) override {
    out_->push_back(absl::StrCat(fname_, ": ", bytes,
                                 " bytes skipped: ", status.message()));
  }

 private:
  const std::string& fname_;
  std::vector<std::string>* const out_;
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
  for (const auto& [number, size] : listing->logs) {
    if (number < versions_->LogNumber()) continue;  // already in tables
    s = ReplayLog(LogFileName(dbname_, number));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ReadOnlyDB::ReplayLog(const std::string& fname) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      options_.env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  DamageCollector reporter(fname, &log_damage_);
  log::Reader reader(file->get(), &reporter, /*verify_checksums=*/true);
  std::string_view record;
  std::string scratch;
  WriteBatch batch;
  while (reader.ReadRecord(&record, &scratch)) {
    absl::Status s = WriteBatchInternal::SetContents(&batch, record);
    if (s.ok()) s = WriteBatchInternal::InsertInto(&batch, mem_.get());
    if (!s.ok()) {
      log_damage_.push_back(absl::StrCat(fname, ": batch at offset ",
                                         reader.LastRecordOffset(),
                                         " skipped: ", s.message()));
      continue;
    }
    const uint32_t count = WriteBatchInternal::Count(&batch);
    if (count > 0) {
      last_sequence_ = std::max(
          last_sequence_, WriteBatchInternal::Sequence(&batch) + count - 1);
    }
  }
  return reader.status();
}

absl::Status ReadOnlyDB::Get(std::string_view key, std::string* value) {
  const LookupKey lkey(key, last_sequence_);
  absl::Status s;
  if (mem_->Get(lkey, value, &s)) return s;
  return version_->Get(ReadOptions(), lkey, value, nullptr);
}

std::unique_ptr<Iterator> ReadOnlyDB::NewIterator() {
  ReadOptions options;
  options.fill_cache = false;
  IteratorPins pins;
  pins.mem = mem_;
  pins.version = version_;
  std::vector<std::unique_ptr<Iterator>> children;
  children.push_back(mem_->NewIterator());
  version_->AddIterators(options, &children);
  return NewDBIterator(&icmp_, NewMergingIterator(&icmp_, std::move(children)),
                       last_sequence_, std::move(pins));
}

}  // namespace sift::tools
