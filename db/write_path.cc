#include "db/write_path.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "db/wal_link.h"
#include "db/write_batch_internal.h"

namespace sift {
namespace {

// A group grows to at most this many bytes...
constexpr size_t kMaxGroupBytes = size_t{1} << 20;
// ...and a small leading write waits for at most this many bytes of
// followers, so that small writes are not slowed by large groups.
constexpr size_t kSmallWriteBytes = size_t{128} << 10;

}  // namespace

struct WritePath::Writer {
  Writer(const WriteBatch* b, bool s) : batch(b), sync(s) {}

  const WriteBatch* const batch;  // nullptr: a memtable switch request
  const bool sync;
  bool done = false;  // a front writer committed this writer's batch
  absl::Status status;
  CondVar cv;
};

WritePath::WritePath(DBState& state, BackgroundWork& background)
    : state_(state), background_(background) {}

WritePath::~WritePath() = default;

void WritePath::SetLog(std::unique_ptr<WritableFile> file) {
  logfile_ = std::move(file);
  log_ = std::make_unique<log::Writer>(logfile_.get());
  log_records_ = 0;
}

absl::Status WritePath::SyncPreviousLog(bool previous_flushed) {
  if (previous_logfile_ == nullptr) return absl::OkStatus();
  // The active log's directory entry first: after this, a sync of the active
  // log makes its records durable and findable.
  absl::Status s = state_.env->SyncDir(state_.dbname);
  if (s.ok() && !previous_flushed) s = previous_logfile_->Sync();
  absl::Status close = previous_logfile_->Close();
  if (s.ok()) s = close;
  previous_logfile_.reset();
  return s;
}

absl::Status WritePath::Close() {
  if (logfile_ == nullptr) return absl::OkStatus();
  absl::Status s = SyncPreviousLog();
  if (s.ok()) s = logfile_->Sync();
  absl::Status close = logfile_->Close();
  if (s.ok()) s = close;
  log_.reset();
  logfile_.reset();
  return s;
}

absl::Status WritePath::Write(const WriteOptions& options,
                              const WriteBatch* updates) {
  Writer w(updates, options.sync);
  MutexLock lock(&state_.mutex);
  writers_.push_back(&w);
  while (!w.done && (&w != writers_.front() || committing_)) {
    w.cv.Wait(&state_.mutex);
  }
  if (w.done) return w.status;

  // This thread is the front writer now.
  const absl::Status status = CommitFrontGroup();
  // Writers that queued while this thread wrote would otherwise wait for
  // the next of them to wake up and lead. On a busy machine that wake-up
  // waits for a core (up to a scheduler tick, 4 ms at HZ=250), and the
  // whole queue waits with it. This thread is running: it commits their
  // group too, once (so its own caller waits for at most one more group),
  // unless that group would make a non-sync caller pay for an fsync.
  if (!writers_.empty() && writers_.front()->batch != nullptr &&
      (!writers_.front()->sync || w.sync)) {
    // Its outcome goes to that group's writers, not to this caller.
    CommitFrontGroup().IgnoreError();
  }
  if (!writers_.empty()) writers_.front()->cv.Signal();
  return status;
}

absl::Status WritePath::CommitFrontGroup() {
  Writer* const front = writers_.front();
  // While set, a writer that finds itself at the front (a spurious wake-up
  // while this thread commits its group) keeps waiting.
  committing_ = true;
  absl::Status status = MakeRoomForWrite(front->batch == nullptr);
  Writer* last_writer = front;
  if (status.ok() && front->batch != nullptr) {
    BuildGroup(&last_writer);
    SequenceNumber last_sequence = state_.versions->LastSequence();
    WriteBatchInternal::SetSequence(&group_batch_, last_sequence + 1);
    last_sequence += WriteBatchInternal::Count(&group_batch_);
    // Only the front writer switches memtables, so `mem` stays the active
    // memtable while the mutex is released.
    MemTable* const mem = state_.mem().get();
    uint64_t logged = 0;
    {
      state_.mutex.Unlock();
      // A synced write makes every earlier write durable, including those
      // in the log before the active one.
      if (front->sync) status = SyncPreviousLog();
      if (status.ok()) {
        status = log_->AddRecord(WriteBatchInternal::Contents(&group_batch_));
      }
      if (status.ok()) ++log_records_;
      logged = log_->size();
      if (status.ok() && front->sync) status = logfile_->Sync();
      if (status.ok())
        status = WriteBatchInternal::InsertInto(&group_batch_, mem);
      state_.mutex.Lock();
    }
    if (status.ok()) {
      state_.wal_bytes_written += logged - logged_bytes_;
      logged_bytes_ = logged;
      state_.versions->SetLastSequence(last_sequence);
    } else {
      // The WAL may now hold a partial record, or a record the memtable
      // lacks: no later write can be trusted to land after it.
      state_.RecordBackgroundError(status);
    }
  }

  // Hand the outcome to every writer of the group (the calling thread's own
  // writer, if it is one, is not waiting: the signal is lost harmlessly).
  while (true) {
    Writer* ready = writers_.front();
    writers_.pop_front();
    ready->status = status;
    ready->done = true;
    ready->cv.Signal();
    if (ready == last_writer) break;
  }
  committing_ = false;
  return status;
}

absl::Status WritePath::RunAlone(absl::FunctionRef<bool()> needs_flush,
                                 absl::FunctionRef<absl::Status()> fn) {
  // Without a batch, like a switch request: never merged into a group.
  Writer w(nullptr, false);
  MutexLock lock(&state_.mutex);
  writers_.push_back(&w);
  while (&w != writers_.front() || committing_) w.cv.Wait(&state_.mutex);

  absl::Status status = state_.bg_error;
  // Set once every memtable before the active one is in a table: the logs
  // switched out before then hold nothing a sync would save.
  bool previous_flushed = false;
  if (status.ok() && needs_flush()) {
    status = MakeRoomForWrite(/*force=*/true);
    if (status.ok()) status = background_.WaitForFlush();
    previous_flushed = status.ok();
  }
  if (status.ok() && logfile_ != nullptr) {
    // Every write before this point becomes durable: whatever fn makes
    // durable (an ingestion) then never survives a crash that loses an
    // earlier write.
    state_.mutex.Unlock();
    status = SyncPreviousLog(previous_flushed);
    if (status.ok()) status = logfile_->Sync();
    state_.mutex.Lock();
    if (!status.ok()) state_.RecordBackgroundError(status);
  }
  if (status.ok()) status = fn();

  writers_.pop_front();
  if (!writers_.empty()) writers_.front()->cv.Signal();
  return status;
}

void WritePath::BuildGroup(Writer** last_writer) {
  Writer* const first = writers_.front();
  assert(first->batch != nullptr);
  group_batch_.Clear();
  WriteBatchInternal::Append(&group_batch_, first->batch);
  size_t size = WriteBatchInternal::ByteSize(first->batch);
  const size_t max_size =
      size <= kSmallWriteBytes ? size + kSmallWriteBytes : kMaxGroupBytes;
  *last_writer = first;
  for (auto it = writers_.begin() + 1; it != writers_.end(); ++it) {
    const Writer* w = *it;
    if (w->batch == nullptr) break;      // a switch request leads alone
    if (w->sync && !first->sync) break;  // see the class comment
    size += WriteBatchInternal::ByteSize(w->batch) -
            WriteBatchInternal::kHeaderSize;
    if (size > max_size) break;
    WriteBatchInternal::Append(&group_batch_, w->batch);
    *last_writer = *it;
  }
}

absl::Status WritePath::MakeRoomForWrite(bool force) {
  WriteStalls::Waits waits;
  absl::Status s = WaitForRoom(force, &waits);
  state_.write_stalls.Add(waits);
  return s;
}

absl::Status WritePath::WaitForRoom(bool force, WriteStalls::Waits* waits) {
  bool allow_delay = !force;
  while (true) {
    if (!state_.bg_error.ok()) return state_.bg_error;
    if (allow_delay &&
        state_.versions->NumLevelFiles(0) >= config::kL0SlowdownWritesTrigger) {
      // Level 0 is piling up: give compaction a millisecond of this writer's
      // time, once per write, rather than stopping writes for seconds later.
      const uint64_t start = state_.env->NowMicros();
      state_.mutex.Unlock();
      state_.env->SleepForMicroseconds(1000);
      allow_delay = false;
      state_.mutex.Lock();
      waits->Add(WriteStalls::kLevel0Slowdown, MicrosSince(start));
    } else if (!force && state_.mem()->ApproximateMemoryUsage() <=
                             state_.options.write_buffer_size) {
      return absl::OkStatus();
    } else if (force && state_.mem()->NumEntries() == 0) {
      return absl::OkStatus();  // nothing to switch out
    } else if (state_.imm() != nullptr) {
      // The previous memtable is still being flushed.
      const uint64_t start = state_.env->NowMicros();
      state_.bg_cv.Wait(&state_.mutex);
      waits->Add(WriteStalls::kMemTableFlush, MicrosSince(start));
    } else if (state_.versions->NumLevelFiles(0) >=
               config::kL0StopWritesTrigger) {
      // Too many level-0 tables: wait for compaction.
      const uint64_t start = state_.env->NowMicros();
      background_.MaybeSchedule();
      state_.bg_cv.Wait(&state_.mutex);
      waits->Add(WriteStalls::kLevel0Stop, MicrosSince(start));
    } else {
      const uint64_t start = state_.env->NowMicros();
      absl::Status s = SwitchMemTable();
      waits->Add(WriteStalls::kWalSwitch, MicrosSince(start));
      if (!s.ok()) return s;
      force = false;  // switched: the new memtable has room
    }
  }
}

uint64_t WritePath::MicrosSince(uint64_t start_micros) const {
  const uint64_t now = state_.env->NowMicros();
  return now > start_micros ? now - start_micros : 0;
}

absl::Status WritePath::SwitchMemTable() {
  assert(state_.imm() == nullptr);
  const uint64_t old_number = state_.logfile_number();
  const uint64_t number = state_.versions->NewFileNumber();
  const std::string fname = LogFileName(state_.dbname, number);
  std::unique_ptr<WritableFile> file;
  std::unique_ptr<log::Writer> log;
  absl::Status s;
  {
    // The queue keeps other writers out, and only this thread sets imm, so
    // nothing this depends on changes while the mutex is released.
    state_.mutex.Unlock();
    absl::StatusOr<std::unique_ptr<WritableFile>> created =
        state_.env->NewLogFile(fname);
    if (created.ok()) {
      file = *std::move(created);
      // The old WAL is not synced here (a sync of up to a write buffer's
      // worth of log would stall every writer). Instead the new WAL starts
      // with a link naming the old one and its record count: replay after a
      // machine crash stops before the new WAL if the old one lost records,
      // so what survives is still a prefix of the writes. A synced write,
      // RunAlone and Close sync the old WAL (and the directory) first.
      //
      // A log switched out earlier and still unsynced belongs to a memtable
      // that has been flushed (imm is null): its writes are in a synced
      // table, so it is handed, as it is, to the background thread to close
      // (RetireLog below).
      log = std::make_unique<log::Writer>(file.get());
      std::string link;
      WalLink(old_number, log_records_).EncodeTo(&link);
      if (s.ok()) s = log->AddRecord(link);
    } else {
      s = created.status();
    }
    state_.mutex.Lock();
  }
  if (!s.ok()) {
    if (file == nullptr) state_.versions->ReuseFileNumber(number);
    // The sticky error keeps every later write away from both logs.
    log_.reset();
    logfile_.reset();
    state_.RecordBackgroundError(s);
    return s;
  }
  if (previous_logfile_ != nullptr) {
    state_.RetireLog(std::move(previous_logfile_));
  }
  previous_logfile_ = std::move(logfile_);
  logfile_ = std::move(file);
  log_ = std::move(log);
  log_records_ = 1;  // the link
  logged_bytes_ = log_->size();
  state_.wal_bytes_written += logged_bytes_;
  state_.SwitchMemTable(number);
  background_.MaybeSchedule();
  return absl::OkStatus();
}

}  // namespace sift
