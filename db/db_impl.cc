#include "db/db_impl.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/db_iter.h"
#include "db/db_properties.h"
#include "db/options_check.h"
#include "db/recovery.h"
#include "db/snapshot.h"
#include "db/write_batch_internal.h"
#include "table/iterators.h"

namespace sift {

absl::StatusOr<std::unique_ptr<DB>> DB::Open(const Options& options,
                                             const std::string& path) {
  return DBImpl::OpenDB(options, path);
}

absl::StatusOr<std::unique_ptr<DB>> DBImpl::OpenDB(const Options& options,
                                                   const std::string& dbname) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  std::unique_ptr<DBImpl> db(new DBImpl(SanitizeOptions(options), dbname));
  absl::Status s;
  {
    MutexLock lock(&db->state_.mutex);
    std::unique_ptr<WritableFile> wal;
    s = Recovery(db->state_).Run(&db->db_lock_, &wal);
    if (s.ok()) {
      db->write_path_.SetLog(std::move(wal));
      // Recovery may leave level 0 over its trigger.
      db->background_.MaybeSchedule();
    }
  }
  if (!s.ok()) return s;  // the destructor releases the lock if taken
  return std::unique_ptr<DB>(std::move(db));
}

DBImpl::DBImpl(const Options& options, std::string dbname)
    : state_(options, std::move(dbname)),
      background_(state_),
      write_path_(state_, background_) {}

DBImpl::~DBImpl() {
  {
    MutexLock lock(&state_.mutex);
    state_.shutting_down.store(true, std::memory_order_release);
    background_.WaitUntilIdle();
  }
  if (absl::Status s = write_path_.Close(); !s.ok()) {
    state_.Log(absl::StrCat("closing the WAL: ", s.ToString()));
  }
  if (db_lock_ != nullptr) {
    if (absl::Status s = state_.env->UnlockFile(std::move(db_lock_)); !s.ok()) {
      state_.Log(absl::StrCat("releasing the LOCK: ", s.ToString()));
    }
  }
}

absl::Status DBImpl::Put(const WriteOptions& options, std::string_view key,
                         std::string_view value) {
  WriteBatch batch;
  batch.Put(key, value);
  return write_path_.Write(options, &batch);
}

absl::Status DBImpl::Delete(const WriteOptions& options, std::string_view key) {
  WriteBatch batch;
  batch.Delete(key);
  return write_path_.Write(options, &batch);
}

absl::Status DBImpl::Write(const WriteOptions& options, WriteBatch* updates) {
  // A null batch is the write path's internal "switch the memtable" request
  // (Flush); from a caller it is a mistake.
  if (updates == nullptr) {
    return absl::InvalidArgumentError("DB::Write: updates is nullptr");
  }
  return write_path_.Write(options, updates);
}

SequenceNumber DBImpl::ReadSequence(const ReadOptions& options) const {
  if (options.snapshot != nullptr) {
    return static_cast<const SnapshotImpl*>(options.snapshot)->sequence();
  }
  return state_.versions->LastSequence();
}

absl::Status DBImpl::Get(const ReadOptions& options, std::string_view key,
                         std::string* value) {
  SequenceNumber sequence;
  std::shared_ptr<MemTable> mem;
  std::shared_ptr<MemTable> imm;
  std::shared_ptr<const Version> current;
  {
    MutexLock lock(&state_.mutex);
    sequence = ReadSequence(options);
    mem = state_.mem;
    imm = state_.imm;
    current = state_.versions->current();
  }

  ReadStats stats;
  stats.gets = 1;
  const LookupKey lkey(key, sequence);
  absl::Status s;
  if (mem->Get(lkey, value, &s) ||
      (imm != nullptr && imm->Get(lkey, value, &s))) {
    stats.memtable_hits = 1;
  } else {
    s = current->Get(options, lkey, value, &stats);
  }
  state_.read_stats.Add(stats);
  return s;
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  SequenceNumber sequence;
  IteratorPins pins;
  {
    MutexLock lock(&state_.mutex);
    sequence = ReadSequence(options);
    pins.mem = state_.mem;
    pins.imm = state_.imm;
    pins.version = state_.versions->current();
  }
  // Opening level-0 tables may read files: done without the mutex.
  std::vector<std::unique_ptr<Iterator>> children;
  children.push_back(pins.mem->NewIterator());
  if (pins.imm != nullptr) children.push_back(pins.imm->NewIterator());
  pins.version->AddIterators(options, &children);
  std::unique_ptr<Iterator> internal =
      NewMergingIterator(&state_.icmp, std::move(children));
  return NewDBIterator(&state_.icmp, std::move(internal), sequence,
                       std::move(pins));
}

const Snapshot* DBImpl::GetSnapshot() {
  MutexLock lock(&state_.mutex);
  return state_.snapshots.New(state_.versions->LastSequence());
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  MutexLock lock(&state_.mutex);
  state_.snapshots.Release(static_cast<const SnapshotImpl*>(snapshot));
}

absl::Status DBImpl::Flush() {
  if (absl::Status s = write_path_.Write(WriteOptions(), nullptr); !s.ok()) {
    return s;
  }
  MutexLock lock(&state_.mutex);
  return background_.WaitForFlush();
}

absl::Status DBImpl::CompactRange(const std::string* begin,
                                  const std::string* end) {
  if (absl::Status s = Flush(); !s.ok()) return s;

  std::optional<InternalKey> begin_key;
  std::optional<InternalKey> end_key;
  // The first internal key of *begin and the last of *end.
  if (begin != nullptr) {
    begin_key.emplace(*begin, kMaxSequenceNumber, kValueTypeForSeek);
  }
  if (end != nullptr) end_key.emplace(*end, 0, kTypeDeletion);
  std::optional<std::string_view> begin_user;
  std::optional<std::string_view> end_user;
  if (begin != nullptr) begin_user = *begin;
  if (end != nullptr) end_user = *end;

  MutexLock lock(&state_.mutex);
  // Compact each level down into the next, as deep as the range has data.
  int max_level = 1;
  {
    const std::shared_ptr<const Version> current = state_.versions->current();
    for (int level = 1; level < config::kNumLevels; ++level) {
      if (current->OverlapInLevel(level, begin_user ? &*begin_user : nullptr,
                                  end_user ? &*end_user : nullptr)) {
        max_level = level;
      }
    }
  }
  for (int level = 0; level < max_level; ++level) {
    absl::Status s =
        background_.CompactLevelRange(level, begin_key ? &*begin_key : nullptr,
                                      end_key ? &*end_key : nullptr);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

ReadStats DBImpl::GetReadStats() const { return state_.read_stats.Snapshot(); }

std::optional<std::string> DBImpl::GetProperty(std::string_view name) {
  return GetDBProperty(state_, name);
}

}  // namespace sift
