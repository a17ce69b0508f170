// VersionSet's choice of what to compact next.

#include <algorithm>
#include <utility>

#include "db/version_set.h"

namespace sift {

namespace {

// How many bytes of input one compaction may grow to when it takes in more
// files of the compacted level: for free (without more files of the next
// level), or to bring a level >= 1 back to its target in one go.
uint64_t ExpandedCompactionByteSizeLimit(uint64_t max_file_size) {
  return 25 * max_file_size;
}

uint64_t TotalFileSize(const FileList& files) {
  uint64_t sum = 0;
  for (const auto& f : files) sum += f->file_size;
  return sum;
}

// The smallest and largest internal keys of the files in `a` and `b`.
// REQUIRES: at least one file.
void GetRange(const InternalKeyComparator& icmp, const FileList& a,
              const FileList& b, InternalKey* smallest, InternalKey* largest) {
  bool first = true;
  for (const FileList* files : {&a, &b}) {
    for (const auto& f : *files) {
      if (first || icmp.Compare(f->smallest.Encode(), smallest->Encode()) < 0) {
        *smallest = f->smallest;
      }
      if (first || icmp.Compare(f->largest.Encode(), largest->Encode()) > 0) {
        *largest = f->largest;
      }
      first = false;
    }
  }
}

}  // namespace

bool VersionSet::NeedsCompaction() const {
  return current_->compaction_score() >= 1 || seek_compaction_.file != nullptr;
}

void VersionSet::RequestSeekCompaction(Version::SeekCharge charge) {
  // The last level has nowhere to go; a file no longer in the current
  // version was compacted or moved since the seek's version was read.
  if (seek_compaction_.file != nullptr) return;
  if (charge.level < 0 || charge.level >= config::kNumLevels - 1) return;
  const FileList& files = current_->files(charge.level);
  if (std::find(files.begin(), files.end(), charge.file) == files.end()) return;
  seek_compaction_ = std::move(charge);
  seek_compaction_pending_.store(true, std::memory_order_relaxed);
}

std::unique_ptr<Compaction> VersionSet::NewCompaction(int level,
                                                      int output_level) {
  return std::unique_ptr<Compaction>(new Compaction(
      level, output_level, current_, icmp_, options_->max_file_size));
}

std::unique_ptr<Compaction> VersionSet::PickCompaction() {
  const Version& v = *current_;
  if (v.compaction_score() < 1) return PickSeekCompaction();
  const int level = v.compaction_level();
  const FileList& files = v.files(level);

  std::unique_ptr<Compaction> c = NewCompaction(level, level + 1);
  // Start with the first file past where the last compaction of this level
  // ended, wrapping around: every key range gets its turn.
  size_t first = 0;
  while (first < files.size() && !compact_pointer_[level].empty() &&
         icmp_->Compare(files[first]->largest.Encode(),
                        compact_pointer_[level].Encode()) <= 0) {
    ++first;
  }
  if (first == files.size()) first = 0;
  c->inputs_[0].push_back(files[first]);

  if (level > 0) {
    TakeLevelExcess(c.get(), first);
  } else {
    // Older versions of the chosen file's keys may sit in other level-0
    // files; they must move down together, or a newer version would land
    // below an older one.
    InternalKey smallest;
    InternalKey largest;
    GetRange(*icmp_, c->inputs_[0], {}, &smallest, &largest);
    v.GetOverlappingInputs(0, &smallest, &largest, &c->inputs_[0]);
  }
  SetupOtherInputs(c.get());
  return c;
}

std::unique_ptr<Compaction> VersionSet::PickSeekCompaction() {
  if (seek_compaction_.file == nullptr) return nullptr;
  const int level = seek_compaction_.level;
  std::unique_ptr<Compaction> c = NewCompaction(level, level + 1);
  c->inputs_[0].push_back(std::move(seek_compaction_.file));
  seek_compaction_ = Version::SeekCharge();
  seek_compaction_pending_.store(false, std::memory_order_relaxed);
  if (level == 0) {
    // As for a level-0 compaction by size: older versions of its keys in
    // other level-0 files move down with it.
    InternalKey smallest;
    InternalKey largest;
    GetRange(*icmp_, c->inputs_[0], {}, &smallest, &largest);
    current_->GetOverlappingInputs(0, &smallest, &largest, &c->inputs_[0]);
  }
  SetupOtherInputs(c.get());
  return c;
}

void VersionSet::TakeLevelExcess(Compaction* c, size_t first) {
  const Version& v = *current_;
  const int level = c->level();
  const FileList& files = v.files(level);
  // Each compaction rewrites the files of level + 1 at the two ends of its
  // input range whole, though the inputs overlap only part of them: about
  // one file of level + 1 per compaction beyond its share. Taking the
  // level's whole excess at once instead of one file at a time pays that once
  // per excess; in 10M-key random fills it cut the bytes written into levels
  // 1-3 by 6-17% (doc/benchmarks.md).
  FileList below;
  v.GetOverlappingInputs(level + 1, &files[first]->smallest,
                         &files[first]->largest, &below);
  // A file that overlaps nothing below moves down alone, without a rewrite
  // (Compaction::IsTrivialMove).
  if (below.empty()) return;
  const double excess =
      static_cast<double>(v.NumLevelBytes(level)) - v.LevelTargetBytes(level);
  uint64_t taken = files[first]->file_size;
  for (size_t i = first + 1;
       i < files.size() && static_cast<double>(taken) < excess; ++i) {
    const std::shared_ptr<const FileMetaData>& f = files[i];
    FileList more;
    v.GetOverlappingInputs(level + 1, &f->smallest, &f->largest, &more);
    // Left for a move of its own, or for the next compaction's first file.
    if (more.empty()) break;
    FileList all;
    v.GetOverlappingInputs(level + 1, &files[first]->smallest, &f->largest,
                           &all);
    if (taken + f->file_size + TotalFileSize(all) >
        ExpandedCompactionByteSizeLimit(options_->max_file_size)) {
      break;
    }
    c->inputs_[0].push_back(f);
    taken += f->file_size;
  }
}

std::unique_ptr<Compaction> VersionSet::CompactRange(int level,
                                                     const InternalKey* begin,
                                                     const InternalKey* end) {
  FileList inputs;
  current_->GetOverlappingInputs(level, begin, end, &inputs);
  if (inputs.empty()) return nullptr;
  std::unique_ptr<Compaction> c = NewCompaction(level, level + 1);
  c->inputs_[0] = std::move(inputs);
  SetupOtherInputs(c.get());
  return c;
}

std::unique_ptr<Compaction> VersionSet::CompactRangeToBottom(
    int level, const InternalKey* begin, const InternalKey* end) {
  const Version& v = *current_;
  const int bottom = level + 1;
  FileList inputs;
  v.GetOverlappingInputs(level, begin, end, &inputs);
  std::unique_ptr<Compaction> c;
  if (inputs.empty()) {
    // Nothing comes down: rewrite the bottom's files where they are.
    v.GetOverlappingInputs(bottom, begin, end, &inputs);
    if (inputs.empty()) return nullptr;
    c = NewCompaction(bottom, bottom);
    c->inputs_[0] = std::move(inputs);
  } else {
    c = NewCompaction(level, bottom);
    c->inputs_[0] = std::move(inputs);
    // Every bottom file of the range joins, not only those the inputs
    // overlap: the range, widened to what the inputs cover (a level-0 input
    // may stick out of it), is rewritten as a whole.
    InternalKey smallest;
    InternalKey largest;
    GetRange(*icmp_, c->inputs_[0], {}, &smallest, &largest);
    const InternalKey* from = nullptr;  // open ends stay open
    if (begin != nullptr) {
      from = icmp_->Compare(smallest.Encode(), begin->Encode()) < 0 ? &smallest
                                                                    : begin;
    }
    const InternalKey* to = nullptr;
    if (end != nullptr) {
      to = icmp_->Compare(largest.Encode(), end->Encode()) > 0 ? &largest : end;
    }
    v.GetOverlappingInputs(bottom, from, to, &c->inputs_[1]);
  }
  c->cut_at_input_gaps_ = false;
  InternalKey start;
  InternalKey limit;
  GetRange(*icmp_, c->inputs_[0], c->inputs_[1], &start, &limit);
  InternalKey largest;
  InternalKey unused;
  GetRange(*icmp_, c->inputs_[0], {}, &unused, &largest);
  SetupGrandparentsAndPointer(c.get(), start, limit, largest);
  return c;
}

void VersionSet::SetupOtherInputs(Compaction* c) {
  const Version& v = *current_;
  const int level = c->level();
  InternalKey smallest;
  InternalKey largest;
  GetRange(*icmp_, c->inputs_[0], {}, &smallest, &largest);
  v.GetOverlappingInputs(level + 1, &smallest, &largest, &c->inputs_[1]);

  InternalKey all_start;
  InternalKey all_limit;
  GetRange(*icmp_, c->inputs_[0], c->inputs_[1], &all_start, &all_limit);

  // Take in more files of `level` if they fall inside the range of the
  // level + 1 files already chosen: they ride along without adding any
  // level + 1 input.
  if (!c->inputs_[1].empty()) {
    FileList expanded0;
    v.GetOverlappingInputs(level, &all_start, &all_limit, &expanded0);
    if (expanded0.size() > c->inputs_[0].size() &&
        TotalFileSize(expanded0) + TotalFileSize(c->inputs_[1]) <
            ExpandedCompactionByteSizeLimit(options_->max_file_size)) {
      InternalKey new_start;
      InternalKey new_limit;
      GetRange(*icmp_, expanded0, {}, &new_start, &new_limit);
      FileList expanded1;
      v.GetOverlappingInputs(level + 1, &new_start, &new_limit, &expanded1);
      if (expanded1.size() == c->inputs_[1].size()) {
        smallest = new_start;
        largest = new_limit;
        c->inputs_[0] = std::move(expanded0);
        c->inputs_[1] = std::move(expanded1);
        GetRange(*icmp_, c->inputs_[0], c->inputs_[1], &all_start, &all_limit);
      }
    }
  }

  SetupGrandparentsAndPointer(c, all_start, all_limit, largest);
}

void VersionSet::SetupGrandparentsAndPointer(Compaction* c,
                                             const InternalKey& start,
                                             const InternalKey& limit,
                                             const InternalKey& largest) {
  const int grandparent_level = c->output_level() + 1;
  if (grandparent_level < config::kNumLevels) {
    current_->GetOverlappingInputs(grandparent_level, &start, &limit,
                                   &c->grandparents_);
  }
  // The next compaction of this level starts after this one. Recorded in the
  // edit too, so that it survives a reopen.
  compact_pointer_[c->level()] = largest;
  c->edit_.SetCompactPointer(c->level(), largest);
}

}  // namespace sift
