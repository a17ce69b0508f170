#include "db/compaction.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace sift {

Compaction::Compaction(int level, int output_level,
                       std::shared_ptr<const Version> input_version,
                       const InternalKeyComparator* icmp,
                       uint64_t max_file_size)
    : level_(level),
      output_level_(output_level),
      input_version_(std::move(input_version)),
      icmp_(icmp),
      max_output_file_size_(max_file_size) {}

bool Compaction::IsTrivialMove() const {
  uint64_t grandparent_bytes = 0;
  for (const auto& f : grandparents_) grandparent_bytes += f->file_size;
  // A moved file with a lot of grandparent overlap would make its next
  // compaction very expensive; merging it now splits it up instead.
  return output_level_ == level_ + 1 && num_input_files(0) == 1 &&
         num_input_files(1) == 0 &&
         grandparent_bytes <= MaxGrandParentOverlapBytes(max_output_file_size_);
}

void Compaction::MakeTrivialMoveEdit() {
  assert(IsTrivialMove());
  const FileMetaData& f = *inputs_[0][0];
  edit_.RemoveFile(level_, f.number);
  edit_.AddFile(output_level_, f);
}

void Compaction::AddInputDeletions(VersionEdit* edit) const {
  for (int which = 0; which < 2; ++which) {
    for (const auto& f : inputs_[which]) {
      edit->RemoveFile(level_ + which, f->number);
    }
  }
}

bool Compaction::IsBaseLevelForKey(std::string_view user_key) {
  const Comparator* ucmp = icmp_->user_comparator();
  for (int level = output_level_ + 1; level < config::kNumLevels; ++level) {
    const FileList& files = input_version_->files(level);
    size_t& ptr = level_ptrs_[level];
    // Keys come in order, so files passed once stay passed.
    while (ptr < files.size()) {
      const FileMetaData& f = *files[ptr];
      if (ucmp->Compare(user_key, f.largest.user_key()) <= 0) {
        if (ucmp->Compare(user_key, f.smallest.user_key()) >= 0) return false;
        break;
      }
      ++ptr;
    }
  }
  return true;
}

bool Compaction::ShouldStopBefore(std::string_view internal_key) {
  // Count the grandparent files that end before this key: the current output
  // overlaps each of them entirely.
  while (grandparent_index_ < grandparents_.size() &&
         icmp_->Compare(internal_key,
                        grandparents_[grandparent_index_]->largest.Encode()) >
             0) {
    if (seen_key_) {
      overlapped_bytes_ += grandparents_[grandparent_index_]->file_size;
    }
    ++grandparent_index_;
  }
  seen_key_ = true;
  if (overlapped_bytes_ > MaxGrandParentOverlapBytes(max_output_file_size_)) {
    overlapped_bytes_ = 0;
    return true;
  }
  return false;
}

bool Compaction::CrossesInputGap(std::string_view user_key) {
  if (!cut_at_input_gaps_) return false;
  const Comparator* ucmp = icmp_->user_comparator();
  if (!input_ranges_built_) {
    input_ranges_built_ = true;
    std::vector<const FileMetaData*> files;
    for (int which = 0; which < 2; ++which) {
      for (const auto& f : inputs_[which]) files.push_back(f.get());
    }
    std::sort(files.begin(), files.end(),
              [ucmp](const FileMetaData* a, const FileMetaData* b) {
                return ucmp->Compare(a->smallest.user_key(),
                                     b->smallest.user_key()) < 0;
              });
    for (const FileMetaData* f : files) {
      if (!input_ranges_.empty() &&
          ucmp->Compare(f->smallest.user_key(), input_ranges_.back().second) <=
              0) {
        // Overlaps the stretch so far: extend it.
        if (ucmp->Compare(f->largest.user_key(), input_ranges_.back().second) >
            0) {
          input_ranges_.back().second = std::string(f->largest.user_key());
        }
      } else {
        input_ranges_.emplace_back(std::string(f->smallest.user_key()),
                                   std::string(f->largest.user_key()));
      }
    }
  }
  const size_t before = input_range_index_;
  while (input_range_index_ + 1 < input_ranges_.size() &&
         ucmp->Compare(user_key, input_ranges_[input_range_index_].second) >
             0) {
    ++input_range_index_;
  }
  return input_range_index_ != before;
}

uint64_t Compaction::TotalInputBytes() const {
  uint64_t sum = 0;
  for (int which = 0; which < 2; ++which) {
    for (const auto& f : inputs_[which]) sum += f->file_size;
  }
  return sum;
}

}  // namespace sift
