#include "db/version_set.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/log_reader.h"

namespace sift {

// Applies a sequence of edits to a base version and produces the result.
// Used by LogAndApply (one edit) and Recover (every edit of the MANIFEST).
class VersionSet::Builder {
 public:
  Builder(const InternalKeyComparator* icmp, const Version* base)
      : icmp_(icmp), base_(base) {}

  void Apply(const VersionEdit& edit) {
    for (const auto& [level, number] : edit.deleted_files()) {
      levels_[level].deleted.insert(number);
      levels_[level].added.erase(number);
    }
    for (const auto& [level, f] : edit.new_files()) {
      levels_[level].deleted.erase(f.number);
      levels_[level].added[f.number] = std::make_shared<const FileMetaData>(f);
    }
  }

  // Fill v's files: the base's minus the deleted plus the added. Fails if
  // the result is not a valid version (a file twice, overlapping files in a
  // level >= 1), which only a damaged MANIFEST or a wrong edit can cause.
  absl::Status SaveTo(Version* v) const {
    std::set<uint64_t> seen;
    for (int level = 0; level < config::kNumLevels; ++level) {
      const LevelState& state = levels_[level];
      FileList& files = v->files_[level];
      for (const auto& f : base_->files(level)) {
        if (state.deleted.count(f->number) == 0 &&
            state.added.count(f->number) == 0) {
          files.push_back(f);
        }
      }
      for (const auto& [number, f] : state.added) files.push_back(f);

      if (level == 0) {
        // Oldest first: the order the files were written in.
        std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
          return a->number < b->number;
        });
      } else {
        std::sort(
            files.begin(), files.end(), [this](const auto& a, const auto& b) {
              const int r =
                  icmp_->Compare(a->smallest.Encode(), b->smallest.Encode());
              return r != 0 ? r < 0 : a->number < b->number;
            });
      }
      for (size_t i = 0; i < files.size(); ++i) {
        const FileMetaData& f = *files[i];
        if (!seen.insert(f.number).second) {
          return absl::DataLossError(
              absl::StrCat("table ", f.number, " is listed twice"));
        }
        if (f.smallest.empty() || f.largest.empty() ||
            icmp_->Compare(f.smallest.Encode(), f.largest.Encode()) > 0) {
          return absl::DataLossError(
              absl::StrCat("table ", f.number, " has an invalid key range"));
        }
        if (level > 0 && i > 0 &&
            icmp_->user_comparator()->Compare(files[i - 1]->largest.user_key(),
                                              f.smallest.user_key()) >= 0) {
          return absl::DataLossError(
              absl::StrCat("tables ", files[i - 1]->number, " and ", f.number,
                           " overlap in level ", level));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  struct LevelState {
    std::set<uint64_t> deleted;
    std::map<uint64_t, std::shared_ptr<const FileMetaData>> added;
  };

  const InternalKeyComparator* const icmp_;
  const Version* const base_;
  std::array<LevelState, config::kNumLevels> levels_;
};

VersionSet::VersionSet(std::string dbname, const Options* options,
                       TableCache* table_cache,
                       const InternalKeyComparator* icmp)
    : dbname_(std::move(dbname)),
      options_(options),
      env_(options->env),
      table_cache_(table_cache),
      icmp_(icmp) {
  AppendVersion(NewVersion());
}

VersionSet::~VersionSet() {
  if (descriptor_file_ != nullptr) {
    // Every record was synced when written; closing only frees the handle.
    descriptor_file_->Close().IgnoreError();
  }
}

std::shared_ptr<Version> VersionSet::NewVersion() const {
  return std::make_shared<Version>(table_cache_, icmp_, options_->max_file_size,
                                   Level1MaxBytes(options_->write_buffer_size));
}

void VersionSet::AppendVersion(std::shared_ptr<Version> v) {
  v->Finalize();
  std::erase_if(versions_, [](const std::weak_ptr<const Version>& w) {
    return w.expired();
  });
  versions_.push_back(v);
  if (current_ != nullptr) current_->retired_->SetNext(v->retired_);
  current_ = std::move(v);
  if (seek_compaction_.file != nullptr) {
    const FileList& files = current_->files(seek_compaction_.level);
    if (std::find(files.begin(), files.end(), seek_compaction_.file) ==
        files.end()) {
      // Compacted or moved meanwhile.
      seek_compaction_ = Version::SeekCharge();
      seek_compaction_pending_.store(false, std::memory_order_relaxed);
    }
  }
}

void VersionSet::MarkFileNumberUsed(uint64_t number) {
  if (next_file_number_ <= number) next_file_number_ = number + 1;
}

void VersionSet::ReuseFileNumber(uint64_t number) {
  if (next_file_number_ == number + 1) next_file_number_ = number;
}

void VersionSet::SetLastSequence(SequenceNumber s) {
  assert(s >= LastSequence());
  last_sequence_.store(s, std::memory_order_release);
}

int VersionSet::NumLevelFiles(int level) const {
  return current_->NumFiles(level);
}

int64_t VersionSet::NumLevelBytes(int level) const {
  return current_->NumLevelBytes(level);
}

void VersionSet::AddLiveFiles(std::set<uint64_t>* live) const {
  for (const auto& weak : versions_) {
    const std::shared_ptr<const Version> v = weak.lock();
    if (v == nullptr) continue;
    for (int level = 0; level < config::kNumLevels; ++level) {
      for (const auto& f : v->files(level)) live->insert(f->number);
    }
  }
}

std::string VersionSet::LevelSummary() const {
  std::string r = "files[";
  for (int level = 0; level < config::kNumLevels; ++level) {
    absl::StrAppend(&r, " ", current_->NumFiles(level));
  }
  r += " ]";
  return r;
}

std::string VersionSet::EncodeSnapshot() const {
  VersionEdit edit;
  edit.SetComparatorName(icmp_->user_comparator()->Name());
  // The counters too, so that the snapshot alone describes a database; the
  // edit logged after it updates them.
  edit.SetLogNumber(log_number_);
  edit.SetNextFile(next_file_number_);
  edit.SetLastSequence(LastSequence());
  for (int level = 0; level < config::kNumLevels; ++level) {
    if (!compact_pointer_[level].empty()) {
      edit.SetCompactPointer(level, compact_pointer_[level]);
    }
    for (const auto& f : current_->files(level)) edit.AddFile(level, *f);
  }
  std::string record;
  edit.EncodeTo(&record);
  return record;
}

absl::Status VersionSet::LogAndApply(VersionEdit* edit, Mutex* mu) {
  if (edit->log_number().has_value()) {
    assert(*edit->log_number() >= log_number_);
    assert(*edit->log_number() < next_file_number_);
  } else {
    edit->SetLogNumber(log_number_);
  }

  auto v = NewVersion();
  {
    Builder builder(icmp_, current_.get());
    builder.Apply(*edit);
    if (absl::Status s = builder.SaveTo(v.get()); !s.ok()) {
      return absl::InternalError(
          absl::StrCat("invalid version edit: ", s.message()));
    }
  }

  // Without an open MANIFEST, start a new one whose first record is the whole
  // state before this edit; the edit follows it.
  const bool new_manifest = descriptor_log_ == nullptr;
  const uint64_t manifest_number =
      new_manifest ? NewFileNumber() : manifest_file_number_;
  edit->SetNextFile(next_file_number_);
  // An edit that carries a last sequence (an ingestion's) publishes it only
  // with its version, below: a snapshot taken while the MANIFEST is written
  // must not name a sequence whose files no read can reach yet.
  const bool publishes_sequence = edit->last_sequence().has_value();
  if (publishes_sequence) {
    assert(*edit->last_sequence() >= LastSequence());
  } else {
    edit->SetLastSequence(LastSequence());
  }
  std::string snapshot;
  if (new_manifest) snapshot = EncodeSnapshot();
  std::string record;
  edit->EncodeTo(&record);

  // Write without the mutex: readers and writers go on meanwhile. Only
  // LogAndApply touches descriptor_file_/descriptor_log_.
  const std::string manifest_name =
      DescriptorFileName(dbname_, manifest_number);
  std::unique_ptr<WritableFile> new_file;
  std::unique_ptr<log::Writer> new_log;
  bool current_touched = false;
  mu->Unlock();
  absl::Status s;
  if (new_manifest) {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        env_->NewWritableFile(manifest_name);
    s = file.status();
    if (s.ok()) {
      new_file = *std::move(file);
      new_log = std::make_unique<log::Writer>(new_file.get());
      s = new_log->AddRecord(snapshot);
    }
  }
  WritableFile* file = new_manifest ? new_file.get() : descriptor_file_.get();
  log::Writer* log = new_manifest ? new_log.get() : descriptor_log_.get();
  if (s.ok()) s = log->AddRecord(record);
  if (s.ok()) s = file->Sync();
  if (s.ok() && new_manifest) {
    current_touched = true;
    s = SetCurrentFile(env_, dbname_, manifest_number);
  }
  // `log` is null if the new MANIFEST could not be created.
  const uint64_t manifest_size = s.ok() ? log->size() : 0;
  mu->Lock();

  if (!s.ok()) {
    // Leave everything as it was. The MANIFEST written to may now end in a
    // partial record: stop using it, and start afresh next time.
    if (new_manifest) {
      if (new_file != nullptr) new_file->Close().IgnoreError();
      // Once CURRENT may have been replaced, the new MANIFEST must stay.
      if (!current_touched) env_->RemoveFile(manifest_name).IgnoreError();
    } else {
      descriptor_log_.reset();
      descriptor_file_->Close().IgnoreError();
      descriptor_file_.reset();
    }
    return s;
  }

  if (new_manifest) {
    if (descriptor_file_ != nullptr) descriptor_file_->Close().IgnoreError();
    descriptor_file_ = std::move(new_file);
    descriptor_log_ = std::move(new_log);
    manifest_file_number_ = manifest_number;
  }
  manifest_file_size_ = manifest_size;
  for (const auto& [level, key] : edit->compact_pointers()) {
    compact_pointer_[level] = key;
  }
  log_number_ = *edit->log_number();
  AppendVersion(std::move(v));
  if (publishes_sequence) SetLastSequence(*edit->last_sequence());
  return absl::OkStatus();
}

namespace {

// Collects the first damage the log reader reports.
class ManifestReporter final : public log::Reader::Reporter {
 public:
  void Corruption(size_t /*bytes*/, const absl::Status& status) override {
    if (first_.ok()) first_ = status;
  }
  const absl::Status& first() const { return first_; }

 private:
  absl::Status first_;
};

}  // namespace

// The fields of a MANIFEST's records that Recover needs besides the files:
// the last value of each, as the records are read in order.
struct VersionSet::ManifestState {
  bool have_comparator = false;
  std::optional<uint64_t> log_number;
  std::optional<uint64_t> next_file;
  std::optional<SequenceNumber> last_sequence;
  std::array<InternalKey, config::kNumLevels> compact_pointers;

  void Apply(const VersionEdit& edit) {
    if (edit.comparator().has_value()) have_comparator = true;
    for (const auto& [level, key] : edit.compact_pointers()) {
      compact_pointers[level] = key;
    }
    if (edit.log_number()) log_number = edit.log_number();
    if (edit.next_file_number()) next_file = edit.next_file_number();
    if (edit.last_sequence()) last_sequence = edit.last_sequence();
  }

  // The first field a usable MANIFEST must have but this one lacks, or
  // nullptr.
  const char* Missing() const {
    if (!have_comparator) return "comparator name";
    if (!log_number) return "log number";
    if (!next_file) return "next file number";
    if (!last_sequence) return "last sequence number";
    return nullptr;
  }
};

absl::StatusOr<uint64_t> VersionSet::ReadCurrentFile() const {
  absl::StatusOr<uint64_t> current = sift::ReadCurrentFile(env_, dbname_);
  if (!current.ok() && absl::IsNotFound(current.status())) {
    return absl::DataLossError(absl::StrCat(
        CurrentFileName(dbname_), ": missing (", current.status().message(),
        "); the database cannot be opened without it"));
  }
  return current;
}

absl::Status VersionSet::ReplayManifest(const std::string& manifest_name,
                                        Builder* builder,
                                        ManifestState* state) const {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env_->NewSequentialFile(manifest_name);
  if (!file.ok()) {
    if (absl::IsNotFound(file.status())) {
      return absl::DataLossError(
          absl::StrCat(manifest_name, ": missing, though CURRENT names it (",
                       file.status().message(), ")"));
    }
    return file.status();
  }

  ManifestReporter reporter;
  log::Reader reader(file->get(), &reporter, /*verify_checksums=*/true);
  std::string_view record;
  std::string scratch;
  while (reader.ReadRecord(&record, &scratch)) {
    VersionEdit edit;
    if (absl::Status s = edit.DecodeFrom(record); !s.ok()) {
      return absl::DataLossError(
          absl::StrCat(manifest_name, ": record at offset ",
                       reader.LastRecordOffset(), ": ", s.message()));
    }
    if (edit.comparator().has_value() &&
        *edit.comparator() != icmp_->user_comparator()->Name()) {
      return absl::InvalidArgumentError(absl::StrCat(
          manifest_name, ": written with comparator ", *edit.comparator(),
          ", opened with ", icmp_->user_comparator()->Name()));
    }
    builder->Apply(edit);
    state->Apply(edit);
  }
  if (!reader.status().ok()) return reader.status();
  if (!reporter.first().ok()) {
    return absl::DataLossError(
        absl::StrCat(manifest_name, ": ", reporter.first().message()));
  }
  return absl::OkStatus();
}

absl::Status VersionSet::Recover() {
  absl::StatusOr<uint64_t> manifest_number = ReadCurrentFile();
  if (!manifest_number.ok()) return manifest_number.status();
  const std::string manifest_name =
      DescriptorFileName(dbname_, *manifest_number);

  Builder builder(icmp_, current_.get());
  ManifestState state;
  if (absl::Status s = ReplayManifest(manifest_name, &builder, &state);
      !s.ok()) {
    return s;
  }
  if (const char* missing = state.Missing(); missing != nullptr) {
    return absl::DataLossError(
        absl::StrCat(manifest_name, ": no ", missing, " entry"));
  }
  auto v = NewVersion();
  if (absl::Status s = builder.SaveTo(v.get()); !s.ok()) {
    return absl::DataLossError(absl::StrCat(manifest_name, ": ", s.message()));
  }

  // Commit: nothing below can fail.
  AppendVersion(std::move(v));
  compact_pointer_ = std::move(state.compact_pointers);
  manifest_file_number_ = *manifest_number;
  next_file_number_ = *state.next_file;
  last_sequence_.store(*state.last_sequence, std::memory_order_release);
  log_number_ = *state.log_number;
  // A damaged counter must not hand out a number already in use.
  MarkFileNumberUsed(manifest_file_number_);
  MarkFileNumberUsed(log_number_);
  for (int level = 0; level < config::kNumLevels; ++level) {
    for (const auto& f : current_->files(level)) MarkFileNumberUsed(f->number);
  }
  return absl::OkStatus();
}

}  // namespace sift
