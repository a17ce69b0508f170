#include "db/compaction_job.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/builder.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "db/global_seqno.h"
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
      env_(options.env),
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
  IteratorList children;
  for (int which = 0; which < 2; ++which) {
    const FileList& files = compaction_->inputs(which);
    if (files.empty()) continue;
    if (compaction_->level() + which == 0) {
      // Level-0 files overlap: each one is its own sorted run.
      for (const auto& f : files) {
        children.push_back(NewTableFileIterator(table_cache_, ro, *f));
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
  // The new table must read back before it replaces its inputs.
  const absl::Status s = FinishTable(options_, table_cache_, input_status,
                                     builder_.get(), outfile_.get(), &out);
  builder_.reset();
  outfile_.reset();
  if (!s.ok()) return s;
  stats_.bytes_written += out.file_size;
  ++stats_.output_files;
  return absl::OkStatus();
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

  std::unique_ptr<Iterator> input = MakeInputIterator();
  absl::Status status = ProcessInput(input.get());
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
    c->edit()->AddFile(c->output_level(), out);
  }
  return absl::OkStatus();
}

absl::Status CompactionJob::ProcessInput(Iterator* input) {
  const Comparator* ucmp = icmp_->user_comparator();
  for (input->SeekToFirst(); input->Valid(); input->Next()) {
    if (shutting_down_ != nullptr &&
        shutting_down_->load(std::memory_order_acquire)) {
      return absl::AbortedError("compaction stopped: the database is closing");
    }
    if (interleave_hook_) interleave_hook_();

    const std::string_view key = input->key();
    ++stats_.entries_read;
    if (compaction_->ShouldStopBefore(key)) cut_pending_ = true;
    ParsedInternalKey ikey;
    if (!ParseInternalKey(key, &ikey)) {
      return absl::DataLossError(
          absl::StrCat("compaction of level ", compaction_->level(),
                       ": an input table holds a malformed internal key"));
    }
    if (!has_current_user_key_ ||
        ucmp->Compare(ikey.user_key, current_user_key_) != 0) {
      if (absl::Status s = StartUserKey(ikey.user_key); !s.ok()) return s;
    }
    if (DropEntry(ikey)) {
      ++stats_.entries_dropped;
      continue;
    }
    if (absl::Status s = AddToOutput(key, input->value()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CompactionJob::StartUserKey(std::string_view user_key) {
  current_user_key_.assign(user_key.data(), user_key.size());
  has_current_user_key_ = true;
  last_sequence_for_key_.reset();
  // Outputs end only between user keys, so that every version of a key
  // stays in one file of the level.
  if (compaction_->CrossesInputGap(user_key)) cut_pending_ = true;
  absl::Status s;
  if (builder_ != nullptr &&
      (cut_pending_ ||
       builder_->FileSize() >= compaction_->MaxOutputFileSize())) {
    s = FinishOutput(absl::OkStatus());
  }
  cut_pending_ = false;
  return s;
}

bool CompactionJob::DropEntry(const ParsedInternalKey& ikey) {
  bool drop = false;
  if (last_sequence_for_key_.has_value() &&
      *last_sequence_for_key_ <= smallest_snapshot_) {
    // A newer entry of this key is visible to every snapshot: nobody can
    // read this one.
    drop = true;
  } else if (ikey.type == kTypeDeletion &&
             ikey.sequence <= smallest_snapshot_ &&
             compaction_->IsBaseLevelForKey(ikey.user_key)) {
    // Nothing older of this key remains below, and older entries of it in
    // this compaction are dropped by the rule above: the marker has
    // nothing left to hide.
    drop = true;
  }
  last_sequence_for_key_ = ikey.sequence;
  return drop;
}

absl::Status CompactionJob::AddToOutput(std::string_view key,
                                        std::string_view value) {
  if (builder_ == nullptr) {
    if (absl::Status s = OpenOutput(); !s.ok()) return s;
    outputs_.back().smallest.DecodeFrom(key);
  }
  outputs_.back().largest.DecodeFrom(key);
  builder_->Add(key, value);
  return absl::OkStatus();
}

}  // namespace sift
