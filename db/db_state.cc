#include "db/db_state.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/memtable_filter.h"

namespace sift {
namespace {

// File descriptors kept for the WAL, MANIFEST, LOG and LOCK, outside the
// table cache's share of max_open_files.
constexpr int kNonTableFiles = 10;

}  // namespace

DBState::DBState(const Options& opts, std::string name)
    : dbname(std::move(name)),
      options(opts),
      env(opts.env),
      icmp(BytewiseComparator()),
      block_cache(opts.block_cache_capacity > 0
                      ? NewLRUCache(opts.block_cache_capacity)
                      : nullptr),
      table_cache(std::make_unique<TableCache>(
          dbname, options, &icmp, block_cache.get(),
          options.max_open_files - kNonTableFiles)),
      filter_residency(opts.filter_memory_limit > 0
                           ? std::make_unique<FilterResidency>(
                                 opts.filter_memory_limit, table_cache.get())
                           : nullptr),
      versions(std::make_unique<VersionSet>(dbname, &options, table_cache.get(),
                                            &icmp)) {
  if (filter_residency != nullptr) {
    table_cache->SetFilterUnitsAtOpen(
        [residency = filter_residency.get()](uint64_t number,
                                             const ModularHeader& header) {
          return residency->UnitsAtOpen(number, header);
        });
  }
}

DBState::~DBState() = default;

void DBState::RecordBackgroundError(const absl::Status& s) {
  if (s.ok() || !bg_error.ok()) return;
  bg_error = s;
  Log(absl::StrCat("background error; writes now fail: ", s.ToString()));
  bg_cv.SignalAll();
}

SequenceNumber DBState::SmallestSnapshot() const {
  return snapshots.empty() ? versions->LastSequence() : snapshots.oldest();
}

std::shared_ptr<MemTable> DBState::NewMemTable() const {
  return std::make_shared<MemTable>(
      icmp, MemTableFilter::BytesFor(options.write_buffer_size));
}

void DBState::SetMemTable(std::shared_ptr<MemTable> mem, uint64_t log_number) {
  assert(imm_ == nullptr);
  mem_ = std::move(mem);
  logfile_number_ = log_number;
  InstallSuperVersion();
}

void DBState::SwitchMemTable(uint64_t new_log_number) {
  assert(imm_ == nullptr);
  imm_ = std::exchange(mem_, NewMemTable());
  has_imm_.store(true, std::memory_order_release);
  logfile_number_ = new_log_number;
  InstallSuperVersion();
}

void DBState::DropImmutableMemTable() {
  assert(imm_ != nullptr);
  imm_.reset();
  has_imm_.store(false, std::memory_order_release);
  InstallSuperVersion();
}

void DBState::RetireLog(std::unique_ptr<WritableFile> log) {
  retired_logs_.push_back(std::move(log));
}

void DBState::CloseRetiredLogs() {
  if (retired_logs_.empty()) return;
  std::vector<std::unique_ptr<WritableFile>> logs;
  logs.swap(retired_logs_);
  mutex.Unlock();
  for (std::unique_ptr<WritableFile>& log : logs) {
    if (absl::Status s = log->Close(); !s.ok()) {
      Log(absl::StrCat("cannot close a switched-out WAL: ", s.ToString()));
    }
  }
  logs.clear();
  mutex.Lock();
}

void DBState::InstallSuperVersion() {
  super_versions.Install(std::make_shared<const SuperVersion>(
      SuperVersion{mem_, imm_, versions->current()}));
}

void DBState::ReconcileFilters(bool open_tables) {
  if (filter_residency == nullptr) return;
  std::shared_ptr<const Version> current;
  {
    MutexLock lock(&mutex);
    current = versions->current();
  }
  ReadStats stats;
  const absl::Status s = filter_residency->Reconcile(
      current,
      [this](FilterResidency::DropFn drop) {
        MutexLock lock(&mutex);
        drop(&versions->current()->retired());
      },
      &stats, open_tables,
      static_cast<size_t>(
          std::max(options.max_open_files - kNonTableFiles, 1)));
  super_versions.AddStats(stats);
  if (!s.ok()) {
    Log(
        absl::StrCat("filter units not loaded (their tables answer with "
                     "fewer): ",
                     s.ToString()));
  }
}

void DBState::Log(std::string_view message) const {
  if (info_log != nullptr) info_log->Log(message);
}

PendingOutput DBState::NewPendingOutput() {
  // A deletion pass lists the directory without the mutex, against the
  // pending set it copied before: a number registered meanwhile, by a
  // thread other than the deleter (an ingestion), would look obsolete. So
  // registration waits for the pass to end. The deleter itself never gets
  // here during its pass.
  while (deleting_files) bg_cv.Wait(&mutex);
  const uint64_t number = versions->NewFileNumber();
  pending_outputs_.insert(number);
  return PendingOutput(this, number);
}

PendingOutput::PendingOutput(PendingOutput&& other) noexcept
    : state_(std::exchange(other.state_, nullptr)), number_(other.number_) {}

PendingOutput& PendingOutput::operator=(PendingOutput&& other) noexcept {
  if (this != &other) {
    Unregister();
    state_ = std::exchange(other.state_, nullptr);
    number_ = other.number_;
  }
  return *this;
}

PendingOutput::~PendingOutput() { Unregister(); }

void PendingOutput::Unregister() {
  if (state_ == nullptr) return;
  state_->pending_outputs_.erase(number_);
  state_ = nullptr;
}

}  // namespace sift
