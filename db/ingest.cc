#include "db/ingest.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/filter_allocation.h"
#include "db/version.h"

namespace sift {

absl::Status DBImpl::IngestExternalFiles(const std::vector<std::string>& paths,
                                         const IngestOptions& options) {
  return ExternalFileIngestion(state_, background_, write_path_, options)
      .Run(paths);
}

ExternalFileIngestion::ExternalFileIngestion(DBState& state,
                                             BackgroundWork& background,
                                             WritePath& write_path,
                                             const IngestOptions& options)
    : state_(state),
      background_(background),
      write_path_(write_path),
      options_(options) {}

ExternalFileIngestion::~ExternalFileIngestion() {
  // Run releases the files (and their guards) under the mutex.
  assert(files_.empty());
}

absl::Status ExternalFileIngestion::Run(const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return absl::InvalidArgumentError(
        "DB::IngestExternalFiles: paths is empty (at least one file)");
  }
  absl::Status s;
  for (const std::string& path : paths) {
    s = AddFile(path);
    if (!s.ok()) break;
  }
  if (s.ok()) s = CheckNoOverlap();
  if (s.ok()) {
    s = write_path_.RunAlone(
        [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return MemTablesOverlap(); },
        [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
          background_.Pause();
          absl::Status commit = Commit();
          background_.Resume();
          return commit;
        });
  }
  {
    MutexLock lock(&state_.mutex);
    if (!s.ok()) RemoveCopies();
    files_.clear();  // the guards end: the files are live now, or gone
  }
  if (s.ok()) state_.ReconcileFilters();
  return s;
}

absl::Status ExternalFileIngestion::AddFile(const std::string& source) {
  {
    MutexLock lock(&state_.mutex);
    File& f = files_.emplace_back();
    f.source = source;
    f.output = state_.NewPendingOutput();
  }
  File& f = files_.back();  // only this thread touches files_
  const std::string copy = TableFileName(state_.dbname, f.output.number());
  absl::Status s;
  if (options_.move_files) s = state_.env->LinkFile(source, copy);
  if (!options_.move_files || !s.ok()) {
    // A file that cannot be linked (another file system...) is copied.
    s = CopyTableFile(state_.env, source, copy);
  }
  if (!s.ok()) return s;
  absl::StatusOr<ExternalTableFacts> facts =
      InspectExternalTable(state_.env, state_.table_cache->table_options(),
                           copy, options_.verify_checksums);
  if (!facts.ok()) {
    return absl::Status(
        facts.status().code(),
        absl::StrCat("ingesting ", source, ": ", facts.status().message()));
  }
  f.facts = *std::move(facts);
  return absl::OkStatus();
}

absl::Status ExternalFileIngestion::CheckNoOverlap() const {
  const Comparator* ucmp = state_.icmp.user_comparator();
  std::vector<const File*> sorted;
  for (const File& f : files_) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(), [ucmp](const File* a, const File* b) {
    return ucmp->Compare(a->facts.smallest_user_key,
                         b->facts.smallest_user_key) < 0;
  });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (ucmp->Compare(sorted[i - 1]->facts.largest_user_key,
                      sorted[i]->facts.smallest_user_key) >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("DB::IngestExternalFiles: the key ranges of ",
                       sorted[i - 1]->source, " and ", sorted[i]->source,
                       " overlap (files of one call must be disjoint)"));
    }
  }
  return absl::OkStatus();
}

bool ExternalFileIngestion::MemTablesOverlap() const {
  const Comparator* ucmp = state_.icmp.user_comparator();
  for (const MemTable* mem : {state_.mem().get(), state_.imm().get()}) {
    if (mem == nullptr || mem->NumEntries() == 0) continue;
    std::unique_ptr<Iterator> it = mem->NewIterator();
    for (const File& f : files_) {
      const InternalKey start(f.facts.smallest_user_key, kMaxSequenceNumber,
                              kValueTypeForSeek);
      it->Seek(start.Encode());
      if (it->Valid() && ucmp->Compare(ExtractUserKey(it->key()),
                                       f.facts.largest_user_key) <= 0) {
        return true;
      }
    }
  }
  return false;
}

int ExternalFileIngestion::PickLevel(const Version& current,
                                     const File& f) const {
  const std::string_view smallest = f.facts.smallest_user_key;
  const std::string_view largest = f.facts.largest_user_key;
  int level = 0;
  while (level + 1 < config::kNumLevels &&
         !current.OverlapInLevel(level, &smallest, &largest) &&
         !current.OverlapInLevel(level + 1, &smallest, &largest)) {
    ++level;
  }
  return level;
}

absl::Status ExternalFileIngestion::Renumber(File* f, double bits_per_key) {
  PendingOutput output = state_.NewPendingOutput();
  const std::string from = TableFileName(state_.dbname, f->output.number());
  const std::string to = TableFileName(state_.dbname, output.number());
  absl::Status s;
  uint64_t size = f->facts.file_size;
  {
    state_.mutex.Unlock();
    if (bits_per_key < 0) {
      s = state_.env->RenameFile(from, to);
    } else {
      TableOptions write_options = state_.table_cache->table_options();
      write_options.filter_bits_per_key = bits_per_key;
      s = RewriteTable(state_.env, state_.table_cache->table_options(), from,
                       write_options, to, &size);
      if (s.ok()) state_.env->RemoveFile(from).IgnoreError();
    }
    state_.mutex.Lock();
  }
  if (!s.ok()) return s;  // `from` is still the file's copy
  f->output = std::move(output);
  f->facts.file_size = size;
  if (bits_per_key >= 0) {
    f->facts.filter_kind =
        static_cast<uint8_t>(state_.table_cache->table_options().filter_kind);
    f->facts.filter_bits_per_key = bits_per_key;
  }
  return absl::OkStatus();
}

absl::Status ExternalFileIngestion::Commit() {
  if (!state_.bg_error.ok()) return state_.bg_error;
  const std::shared_ptr<const Version> current = state_.versions->current();
  const RunShape shape = ShapeOf(*current);
  uint64_t newest_level0 = 0;
  for (const auto& f : current->files(0)) {
    newest_level0 = std::max(newest_level0, f->number);
  }
  for (File& f : files_) {
    f.level = PickLevel(*current, f);
    const double wanted = FilterBitsForNewTable(
        state_.options, shape, f.level, static_cast<double>(f.facts.file_size));
    const double have =
        f.facts.filter_kind == 0 ? 0.0 : f.facts.filter_bits_per_key;
    absl::Status s;
    if (wanted > have + 1e-9) {
      s = Renumber(&f, wanted);  // the new number is the newest too
    } else if (f.level == 0 && f.output.number() < newest_level0) {
      // Level-0 tables are read newest (highest number) first.
      s = Renumber(&f, -1);
    }
    if (!s.ok()) return s;
  }

  // The files' directory entries must be durable before the MANIFEST names
  // them.
  state_.mutex.Unlock();
  absl::Status s = state_.env->SyncDir(state_.dbname);
  state_.mutex.Lock();
  if (!s.ok()) return s;

  const SequenceNumber sequence = state_.versions->LastSequence() + 1;
  VersionEdit edit;
  for (const File& f : files_) {
    FileMetaData meta;
    meta.number = f.output.number();
    meta.file_size = f.facts.file_size;
    meta.smallest =
        InternalKey(f.facts.smallest_user_key, sequence, f.facts.smallest_type);
    meta.largest =
        InternalKey(f.facts.largest_user_key, sequence, f.facts.largest_type);
    meta.global_seqno = sequence;
    edit.AddFile(f.level, meta);
  }
  // LogAndApply makes `sequence` the last one only with the version that
  // holds the files, and the MANIFEST records it, so that after a recovery
  // every later write is numbered above them. Set earlier, it would let a
  // snapshot taken while the MANIFEST is written (the mutex is released)
  // name the files' sequence yet read without them, and see them appear
  // later.
  edit.SetLastSequence(sequence);
  s = state_.versions->LogAndApply(&edit, &state_.mutex);
  if (!s.ok()) {
    // The abandoned MANIFEST may hold the edit: keep the files (see the
    // file comment of db/ingest.h).
    for (File& f : files_) f.output.KeepPending();
    files_.clear();
    return s;
  }
  state_.InstallSuperVersion();
  std::string placed;
  for (const File& f : files_) {
    absl::StrAppend(&placed, " #", f.output.number(), "@L", f.level);
  }
  state_.Log(absl::StrCat("ingested ", files_.size(), " files at sequence ",
                          sequence, ":", placed, "; ",
                          state_.versions->LevelSummary()));
  return absl::OkStatus();
}

void ExternalFileIngestion::RemoveCopies() {
  for (const File& f : files_) {
    state_.env->RemoveFile(TableFileName(state_.dbname, f.output.number()))
        .IgnoreError();  // may not exist (the copy failed)
  }
}

}  // namespace sift
