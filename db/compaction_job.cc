#include "db/compaction_job.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "table/iterators.h"

namespace sift {

CompactionJob::CompactionJob(const std::string& dbname, const Options& options,
                             const InternalKeyComparator* icmp,
                             TableCache* table_cache, Compaction* compaction,
                             SequenceNumber smallest_snapshot,
                             std::function<uint64_t()> new_file_number,
                             const std::atomic<bool>* shutting_down)
    : dbname_(dbname),
      options_(options),
      env_(options.env != nullptr ? options.env : Env::Default()),
      icmp_(icmp),
      table_cache_(table_cache),
      compaction_(compaction),
      smallest_snapshot_(smallest_snapshot),
      new_file_number_(std::move(new_file_number)),
      shutting_down_(shutting_down),
      table_options_([&] {
        TableOptions t = table_cache->table_options();
        t.filter_bits_per_key = FilterBitsForCompaction(options, *compaction);
        return t;
      }()) {}

CompactionJob::~CompactionJob() {
  // Run always finishes or abandons its output; this only guards misuse.
  if (builder_ != nullptr) builder_->Abandon();
}

std::unique_ptr<Iterator> CompactionJob::MakeInputIterator() {
  ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;  // inputs are read once; keep the cache for readers
  std::vector<std::unique_ptr<Iterator>> children;
  for (int which = 0; which < 2; ++which) {
    const FileList& files = compaction_->inputs(which);
    if (files.empty()) continue;
    if (compaction_->level() + which == 0) {
      // Level-0 files overlap: each one is its own sorted run.
      for (const auto& f : files) {
        children.push_back(
            table_cache_->NewIterator(ro, f->number, f->file_size));
      }
    } else {
      children.push_back(NewFileListIterator(table_cache_, icmp_, ro, files));
    }
  }
  return NewMergingIterator(icmp_, std::move(children));
}

absl::Status CompactionJob::OpenOutput() {
  FileMetaData out;
  out.number = new_file_number_();
  outputs_.push_back(out);
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env_->NewWritableFile(TableFileName(dbname_, out.number));
  if (!file.ok()) return file.status();
  outfile_ = *std::move(file);
  builder_ = std::make_unique<TableBuilder>(table_options_, outfile_.get());
  return absl::OkStatus();
}

absl::Status CompactionJob::FinishOutput(const absl::Status& input_status) {
  FileMetaData& out = outputs_.back();
  absl::Status s = input_status;
  if (s.ok()) {
    s = builder_->Finish();
  } else {
    builder_->Abandon();
  }
  out.file_size = builder_->FileSize();
  builder_.reset();
  if (s.ok()) s = outfile_->Sync();
  if (s.ok()) {
    s = outfile_->Close();
  } else {
    outfile_->Close().IgnoreError();  // the first error is the one to report
  }
  outfile_.reset();
  if (!s.ok()) return s;

  stats_.bytes_written += out.file_size;
  ++stats_.output_files;
  // Check that the new table reads back before it replaces its inputs.
  std::unique_ptr<Iterator> it =
      table_cache_->NewIterator(ReadOptions(), out.number, out.file_size);
  if (options_.paranoid_checks) {
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
  return it->status();
}

void CompactionJob::RemoveOutputs() {
  if (builder_ != nullptr) {
    builder_->Abandon();
    builder_.reset();
  }
  if (outfile_ != nullptr) {
    outfile_->Close().IgnoreError();
    outfile_.reset();
  }
  for (const FileMetaData& out : outputs_) {
    table_cache_->Evict(out.number);
    // The file may not exist (its creation failed); either way it is gone.
    env_->RemoveFile(TableFileName(dbname_, out.number)).IgnoreError();
  }
  outputs_.clear();
}

absl::Status CompactionJob::Run() {
  const uint64_t start_micros = env_->NowMicros();
  Compaction* const c = compaction_;
  stats_.input_files = c->num_input_files(0) + c->num_input_files(1);
  stats_.bytes_read = c->TotalInputBytes();

  const Comparator* ucmp = icmp_->user_comparator();
  std::unique_ptr<Iterator> input = MakeInputIterator();
  absl::Status status;

  // The user key of the entries being read, and the sequence of the last
  // (newer) entry of it seen, if any.
  std::string current_user_key;
  bool has_current_user_key = false;
  std::optional<SequenceNumber> last_sequence_for_key;
  // The grandparent limit asked for a cut, which waits for the next user key.
  bool cut_pending = false;

  for (input->SeekToFirst(); input->Valid(); input->Next()) {
    if (shutting_down_ != nullptr &&
        shutting_down_->load(std::memory_order_acquire)) {
      status =
          absl::AbortedError("compaction stopped: the database is closing");
      break;
    }
    if (interleave_hook_) interleave_hook_();

    const std::string_view key = input->key();
    ++stats_.entries_read;
    if (c->ShouldStopBefore(key)) cut_pending = true;
    ParsedInternalKey ikey;
    if (!ParseInternalKey(key, &ikey)) {
      status = absl::DataLossError(
          absl::StrCat("compaction of level ", c->level(),
                       ": an input table holds a malformed internal key"));
      break;
    }

    if (!has_current_user_key ||
        ucmp->Compare(ikey.user_key, current_user_key) != 0) {
      current_user_key.assign(ikey.user_key.data(), ikey.user_key.size());
      has_current_user_key = true;
      last_sequence_for_key.reset();
      // Outputs end only between user keys, so that every version of a key
      // stays in one file of the level.
      if (c->CrossesInputGap(ikey.user_key)) cut_pending = true;
      if (builder_ != nullptr &&
          (cut_pending ||
           builder_->FileSize() >= compaction_->MaxOutputFileSize())) {
        status = FinishOutput(absl::OkStatus());
        if (!status.ok()) break;
      }
      cut_pending = false;
    }

    bool drop = false;
    if (last_sequence_for_key.has_value() &&
        *last_sequence_for_key <= smallest_snapshot_) {
      // A newer entry of this key is visible to every snapshot: nobody can
      // read this one.
      drop = true;
    } else if (ikey.type == kTypeDeletion &&
               ikey.sequence <= smallest_snapshot_ &&
               c->IsBaseLevelForKey(ikey.user_key)) {
      // Nothing older of this key remains below, and older entries of it in
      // this compaction are dropped by the rule above: the marker has
      // nothing left to hide.
      drop = true;
    }
    last_sequence_for_key = ikey.sequence;
    if (drop) {
      ++stats_.entries_dropped;
      continue;
    }

    if (builder_ == nullptr) {
      status = OpenOutput();
      if (!status.ok()) break;
      outputs_.back().smallest.DecodeFrom(key);
    }
    outputs_.back().largest.DecodeFrom(key);
    builder_->Add(key, input->value());
  }

  if (status.ok()) status = input->status();
  if (builder_ != nullptr) {
    absl::Status finish = FinishOutput(status);
    if (status.ok()) status = finish;
  }
  input.reset();
  stats_.micros = env_->NowMicros() - start_micros;

  if (!status.ok()) {
    RemoveOutputs();
    return status;
  }
  c->AddInputDeletions(c->edit());
  for (const FileMetaData& out : outputs_) {
    c->edit()->AddFile(c->level() + 1, out);
  }
  return absl::OkStatus();
}

}  // namespace sift
