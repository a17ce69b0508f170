#include "db/db_impl.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "db/batch_order.h"
#include "db/db_iter.h"
#include "db/db_properties.h"
#include "db/options_check.h"
#include "db/recovery.h"
#include "db/snapshot.h"
#include "db/write_batch_internal.h"
#include "table/iterators.h"
#include "util/small_buffer.h"

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
  db->state_.ReconcileFilters(/*open_tables=*/true);
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
  SuperVersionPublisher::Lease sv(&state_.super_versions, &state_.mutex);
  // Read after the SuperVersion: every entry up to this sequence is in it
  // (a later memtable switch leaves the writes it missed above the
  // sequence or in a memtable it does not hold, which the read then does
  // not see, as if it had run before them).
  const SequenceNumber sequence = ReadSequence(options);
  ReadStats stats;
  stats.gets = 1;
  const LookupKey lkey(key, sequence);
  // One hash of the key for the memtables' filters and every table filter.
  FilterKeyHash filter_key(key);
  absl::Status s;
  if (sv->mem->Get(lkey, &filter_key, value, &s) ||
      (sv->imm != nullptr && sv->imm->Get(lkey, &filter_key, value, &s))) {
    stats.memtable_hits = 1;
  } else {
    s = sv->version->Get(options, lkey, &filter_key, value, &stats);
  }
  sv.AddStats(stats);
  return s;
}

std::vector<absl::Status> DBImpl::MultiGet(
    const ReadOptions& options, absl::Span<const std::string_view> keys,
    std::vector<std::string>* values) {
  values->assign(keys.size(), std::string());
  std::vector<absl::Status> statuses(keys.size());
  if (keys.empty()) return statuses;
  SuperVersionPublisher::Lease sv(&state_.super_versions, &state_.mutex);
  const SequenceNumber sequence = ReadSequence(options);  // as in Get

  // The per-key state of a batch of up to kInlineBatch keys is on the stack.
  constexpr size_t kInlineBatch = Version::kInlineBatch;
  SmallBuffer<uint32_t, kInlineBatch> order(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) order.emplace_back();
  BatchOrder(state_.icmp.user_comparator(), keys,
             absl::MakeSpan(order.data(), order.size()));
  // Each key is hashed once, for the memtables' filters and every table
  // filter it meets.
  SmallBuffer<FilterKeyHash, kInlineBatch> filter_keys(keys.size());
  for (const std::string_view key : keys) filter_keys.emplace_back(key);
  // The memtable filter lines of the whole batch load together.
  for (FilterKeyHash& filter_key : filter_keys) {
    sv->mem->PrefetchFilter(&filter_key);
  }
  // In the batch's order, as Version::MultiGet takes them. A LookupKey does
  // not move, and SmallBuffer's elements never do.
  SmallBuffer<LookupKey, kInlineBatch> lookup_keys(keys.size());
  SmallBuffer<Version::BatchLookup, kInlineBatch> lookups(keys.size());
  ReadStats stats;
  stats.gets = keys.size();
  for (const uint32_t i : order) {
    const LookupKey& lkey = lookup_keys.emplace_back(keys[i], sequence);
    FilterKeyHash* filter_key = &filter_keys[i];
    Version::BatchLookup& l = lookups.emplace_back(
        Version::BatchLookup{&lkey, filter_key, &(*values)[i], &statuses[i]});
    if (sv->mem->Get(lkey, filter_key, l.value, l.status) ||
        (sv->imm != nullptr &&
         sv->imm->Get(lkey, filter_key, l.value, l.status))) {
      l.done = true;
      ++stats.memtable_hits;
    }
  }
  sv->version->MultiGet(options, absl::MakeSpan(lookups.data(), lookups.size()),
                        &stats);
  sv.AddStats(stats);
  return statuses;
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  SequenceNumber sequence;
  IteratorPins pins;
  {
    MutexLock lock(&state_.mutex);
    sequence = ReadSequence(options);
    pins.mem = state_.mem();
    pins.imm = state_.imm();
    pins.version = state_.versions->current();
  }
  pins.publisher = &state_.super_versions;
  pins.seek_sink = &background_;
  pins.prefix_extractor = state_.options.prefix_extractor;
  // Opening level-0 tables may read files: done without the mutex.
  return NewDBIterator(&state_.icmp, sequence, options, std::move(pins));
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
  // The deepest level (at least 1) holding data in the range. Asked again
  // after each step: a compaction the DB picks between the steps may have
  // pushed data deeper.
  auto bottom_level = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_.mutex) {
    const std::shared_ptr<const Version> current = state_.versions->current();
    int bottom = 1;
    for (int level = 1; level < config::kNumLevels; ++level) {
      if (current->OverlapInLevel(level, begin_user ? &*begin_user : nullptr,
                                  end_user ? &*end_user : nullptr)) {
        bottom = level;
      }
    }
    return bottom;
  };
  // Compact each level down into the next; the last step also rewrites the
  // bottom level's files of the range, so that all of the range ends merged
  // there with the deletion markers that hide nothing dropped.
  for (int level = 0; level < bottom_level(); ++level) {
    absl::Status s = background_.CompactLevelRange(
        level, begin_key ? &*begin_key : nullptr, end_key ? &*end_key : nullptr,
        /*to_bottom=*/level + 1 == bottom_level());
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

ReadStats DBImpl::GetReadStats() const { return state_.super_versions.Total(); }

std::optional<std::string> DBImpl::GetProperty(std::string_view name) {
  return GetDBProperty(state_, name);
}

}  // namespace sift
