#include "db/wal_replay.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "db/filename.h"
#include "db/log_reader.h"
#include "db/wal_link.h"
#include "db/write_batch_internal.h"
#include "sift/write_batch.h"

namespace sift {
namespace {

// Remembers the earliest damage the reader reports, and the torn tails.
class StopAtDamage final : public log::Reader::Reporter {
 public:
  void Report(const log::Problem& p) override {
    if (p.kind == log::Problem::Kind::kTornTail) {
      torn_tails_.push_back(p);
      return;
    }
    // A record damaged in a later fragment is reported after that fragment,
    // with an earlier offset: the prefix ends at the earliest.
    if (!damage_ || p.offset < damage_->offset) damage_ = p;
  }
  // Read errors; the replay returns them from Reader::status().
  void Corruption(size_t /*bytes*/, const absl::Status& /*status*/) override {}

  void SetDamage(log::Problem p) {
    if (!damage_ || p.offset < damage_->offset) damage_ = std::move(p);
  }
  const std::optional<log::Problem>& damage() const { return damage_; }
  const std::vector<log::Problem>& torn_tails() const { return torn_tails_; }

 private:
  std::optional<log::Problem> damage_;
  std::vector<log::Problem> torn_tails_;
};

std::string Describe(const std::string& fname, const log::Problem& p) {
  return absl::StrCat(fname, ": log record at offset ", p.offset, ": ",
                      p.reason);
}

// Intact records from the reader's position on (damage skipped).
uint64_t CountRest(log::Reader& reader) {
  uint64_t n = 0;
  std::string_view record;
  std::string scratch;
  while (reader.ReadRecord(&record, &scratch)) ++n;
  return n;
}

// Decode `record` into *batch and insert it into the target's memtable,
// raising *max_sequence. A DataLossError if the batch does not decode, in
// which case nothing was inserted.
absl::Status InsertBatch(std::string_view record, ReplayTarget* target,
                         WriteBatch* batch, SequenceNumber* max_sequence) {
  absl::Status s = WriteBatchInternal::SetContents(batch, record);
  if (s.ok()) {
    s = WriteBatchInternal::InsertInto(batch, target->MemTableForInsert());
  }
  if (!s.ok()) return s;
  const uint32_t count = WriteBatchInternal::Count(batch);
  if (count > 0) {
    *max_sequence = std::max(*max_sequence,
                             WriteBatchInternal::Sequence(batch) + count - 1);
  }
  return absl::OkStatus();
}

// Why `fname`, which starts with `link`, must not be replayed after
// `previous`: empty if it may (WalLink::CheckAgainst).
std::string CheckLink(const WalLink& link, const std::string& fname,
                      const std::optional<WalLink::ReadBack>& previous,
                      uint64_t min_log_number) {
  switch (link.CheckAgainst(previous, min_log_number)) {
    case WalLink::Check::kSatisfied:
      return "";
    case WalLink::Check::kPredecessorMissing:
      return absl::StrCat(fname, " follows log ", link.previous_log(),
                          ", which is missing: its writes were lost in a "
                          "crash before they were synced");
    case WalLink::Check::kPredecessorShort:
      return absl::StrCat(fname, " follows log ", link.previous_log(),
                          ", which held ", link.previous_records(),
                          " records when ", fname, " was started, but only ",
                          previous->records,
                          " were read back: its tail was lost in a crash "
                          "before it was synced");
  }
  return "";
}

// Replays one log; sets *damaged if it stopped at damage (and then counts
// what it dropped into *report). *previous is the log replayed before it,
// and is set to this one on return.
absl::Status ReplayWal(Env* env, const std::string& fname,
                       const WalReplayOptions& options, ReplayTarget* target,
                       SequenceNumber* max_sequence, RecoveryReport* report,
                       std::optional<WalLink::ReadBack>* previous,
                       uint64_t number, bool* damaged) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  StopAtDamage reporter;
  log::Reader reader(file->get(), &reporter, /*verify_checksums=*/true);
  std::string scratch;
  std::string_view record;
  WriteBatch batch;
  uint64_t records = 0;
  uint64_t records_after_damage = 0;
  // Set when the log before this one lost records this one depends on.
  std::string lost_predecessor;
  while (reader.ReadRecord(&record, &scratch)) {
    // Reported before the record is returned: this record follows it.
    if (reporter.damage()) {
      records_after_damage = 1;
      break;
    }
    if (WalLink::IsLink(record)) {
      WalLink link;
      absl::Status s = link.DecodeAt(record, reader.LastRecordOffset());
      if (!s.ok()) {
        reporter.SetDamage({log::Problem::Kind::kDamage,
                            reader.LastRecordOffset(), record.size(),
                            std::string(s.message())});
        break;
      }
      lost_predecessor =
          CheckLink(link, fname, *previous, options.min_log_number);
      if (!lost_predecessor.empty()) {
        records_after_damage = 1;
        break;
      }
      ++records;
      continue;
    }
    if (absl::Status s = InsertBatch(record, target, &batch, max_sequence);
        !s.ok()) {
      // The record passed its checksum: damage from before it was written.
      reporter.SetDamage({log::Problem::Kind::kDamage,
                          reader.LastRecordOffset(), record.size(),
                          absl::StrCat("bad write batch: ", s.message())});
      break;
    }
    ++records;
    if (absl::Status s = target->BatchApplied(); !s.ok()) return s;
  }
  if (!reader.status().ok()) return reader.status();
  *previous = WalLink::ReadBack{number, records};

  if (!lost_predecessor.empty()) {
    // A crash, not damage: the writes it lost were never synced, so this is
    // allowed even under fail_on_damage. What cannot be replayed without a
    // hole is left out, and kept aside, as after damage.
    *damaged = true;
    report->stopped_at_damage = true;
    report->stopped_at_lost_writes = true;
    report->first_error = lost_predecessor;
    report->records_dropped += records_after_damage + CountRest(reader);
    absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
    if (size.ok()) report->bytes_dropped += *size;
    return absl::OkStatus();
  }
  report->logs_replayed += 1;
  report->records_replayed += records;

  if (!reporter.damage()) {
    for (const log::Problem& p : reporter.torn_tails()) {
      if (options.info) {
        options.info(
            absl::StrCat("WAL torn tail (a write cut short by a "
                         "crash; not damage): ",
                         Describe(fname, p), " (", p.bytes, " bytes)"));
      }
    }
    return absl::OkStatus();
  }
  const log::Problem& damage = *reporter.damage();
  const std::string what = Describe(fname, damage);
  if (options.fail_on_damage) return absl::DataLossError(what);

  *damaged = true;
  report->stopped_at_damage = true;
  report->first_error = what;
  report->records_dropped += records_after_damage + CountRest(reader);
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (size.ok() && *size > damage.offset) {
    report->bytes_dropped += *size - damage.offset;
  }
  return absl::OkStatus();
}

// A log after the damaged one: not replayed, only counted.
void CountDropped(Env* env, const std::string& fname, RecoveryReport* report) {
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (size.ok()) report->bytes_dropped += *size;
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(fname);
  if (!file.ok()) return;
  log::Reader reader(file->get(), /*reporter=*/nullptr,
                     /*verify_checksums=*/true);
  report->records_dropped += CountRest(reader);
}

}  // namespace

absl::Status ReplayWals(Env* env, std::string_view dbname,
                        const std::vector<uint64_t>& numbers,
                        const WalReplayOptions& options, ReplayTarget* target,
                        SequenceNumber* max_sequence, RecoveryReport* report) {
  bool damaged = false;
  std::optional<WalLink::ReadBack> previous;
  for (uint64_t number : numbers) {
    const std::string fname = LogFileName(dbname, number);
    if (damaged) {
      report->unreplayed_logs.push_back(number);
      CountDropped(env, fname, report);
      continue;
    }
    if (absl::Status s = ReplayWal(env, fname, options, target, max_sequence,
                                   report, &previous, number, &damaged);
        !s.ok()) {
      return s;
    }
    if (damaged) report->unreplayed_logs.push_back(number);
  }
  if (damaged && options.info && report->stopped_at_lost_writes) {
    options.info(absl::StrCat(
        "WAL writes lost in a machine crash: ", report->first_error,
        "; replay stopped before that log (point-in-time recovery): ",
        report->records_dropped, " intact records (", report->bytes_dropped,
        " bytes in ", report->unreplayed_logs.size(),
        " log(s)) were not replayed"));
  } else if (damaged && options.info) {
    options.info(absl::StrCat(
        "WAL damage: ", report->first_error,
        "; replay stopped there (point-in-time recovery): the damaged record "
        "and ",
        report->records_dropped, " intact records after it (",
        report->bytes_dropped, " bytes in ", report->unreplayed_logs.size(),
        " log(s)) were not replayed"));
  }
  return absl::OkStatus();
}

std::string RecoveryReportText(const RecoveryReport& report) {
  std::string out = absl::StrCat(
      "logs replayed: ", report.logs_replayed,
      "\nrecords replayed: ", report.records_replayed, "\nstopped at damage: ",
      report.stopped_at_lost_writes ? "yes (writes lost in a machine crash)"
      : report.stopped_at_damage    ? "yes"
                                    : "no",
      "\n");
  if (report.stopped_at_damage) {
    absl::StrAppend(&out, "first error: ", report.first_error,
                    "\nrecords dropped: ", report.records_dropped,
                    "\nbytes dropped: ", report.bytes_dropped,
                    "\nkept aside: ", absl::StrJoin(report.kept_aside, " "),
                    "\n");
  }
  return out;
}

}  // namespace sift
