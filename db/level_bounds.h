#ifndef SIFT_DB_LEVEL_BOUNDS_H_
#define SIFT_DB_LEVEL_BOUNDS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/dbformat.h"
#include "db/version_edit.h"
#include "util/coding.h"
#include "util/comparator.h"

namespace sift {

// The first file in files[lo, hi) whose largest key is at or after
// `internal_key` (hi if none), by binary search with key compares.
// REQUIRES: files[lo, hi) sorted and disjoint; files before lo end before the
// key and files from hi on (if any) end at or after it.
size_t FindFileBetween(const InternalKeyComparator& icmp, const FileList& files,
                       std::string_view internal_key, size_t lo, size_t hi);

// The key ranges of a level's files as 64-bit integers, so that finding a
// key's file compares integers, not strings: a point read checks the range of
// every level-0 table and searches every deeper level, and the string
// compares were a fifth of an absent-key Get.
//
// Under the bytewise comparator every key of the level starts with `common`,
// the longest prefix shared by the level's smallest and largest user keys; a
// key that starts with it is represented by its "window", the 8 bytes after
// `common` read big-endian, zero-padded past the key's end. Windows order as
// the keys do where they differ: a < b whenever window(a) < window(b). Equal
// windows decide nothing, and the search compares the keys themselves there.
// Under any other comparator (usable() false) every search and range test
// compares the keys, so callers have one path whatever the order.
//
// Invariant: either usable() is false, or smallest_ holds one window per file
// of the FileList given to Build, in the same order, and largest_ the same
// followed by kLinearSteps padding entries of ~0 (which no window is below).
//
// Thread safety: const methods are safe for concurrent use.
class LevelBounds {
 public:
  // Builds the windows of `files` when `icmp` orders user keys bytewise and
  // `files` is not empty; otherwise the bounds stay unusable and compare
  // keys. FindFile needs the files sorted and disjoint (a level >= 1); the
  // range tests do not.
  void Build(const InternalKeyComparator& icmp, const FileList& files);

  // Whether searches compare windows (else keys). For tests and tools.
  bool usable() const { return usable_; }

  // Where a user key stands against the level, computed once per search.
  class Position {
   private:
    friend class LevelBounds;
    // kCompare: no windows (usable() false), compare the keys.
    enum class Side : uint8_t { kBefore, kInside, kAfter, kCompare };
    Side side = Side::kBefore;  // against the prefix every key shares
    uint64_t window = 0;        // valid when side == kInside
  };
  Position Locate(std::string_view user_key) const {
    Position p;
    if (!usable_) {
      p.side = Position::Side::kCompare;
      return p;
    }
    const size_t n = std::min(user_key.size(), common_.size());
    const int r = CompareBytes(user_key.substr(0, n), common_);
    if (r > 0) {
      p.side = Position::Side::kAfter;
    } else if (r == 0 && user_key.size() >= common_.size()) {
      // (A proper prefix of the common prefix sorts before the level.)
      return LocateInside(user_key);
    }
    return p;
  }

  // Whether every user key from `first` to `last` (in the bytewise order)
  // starts with the level's common prefix: then Locate of each of them is
  // LocateInside. (The keys with a given prefix are one run of that order, so
  // the two ends decide it.) A sorted batch asks once instead of comparing
  // the prefix per key. False when the bounds are not usable.
  bool InsideAll(std::string_view first, std::string_view last) const {
    return usable_ && first.starts_with(common_) && last.starts_with(common_);
  }
  // Locate of a key InsideAll covered. REQUIRES: InsideAll(a, b) for some
  // a <= user_key <= b.
  Position LocateInside(std::string_view user_key) const {
    Position p;
    p.side = Position::Side::kInside;
    p.window = Window(user_key);
    return p;
  }

  // The first file at or after `from` whose largest internal key is at or
  // after `internal_key` (files.size() if none), as FindFile (db/version.h)
  // computes it when `from` is 0. REQUIRES: `files` the list given to Build,
  // `position` = Locate of the key's user key, every file before `from` ends
  // before `internal_key`.
  size_t FindFile(const InternalKeyComparator& icmp, const FileList& files,
                  std::string_view internal_key, const Position& position,
                  size_t from = 0) const {
    // The common cases, inline. A single lookup (from == 0) checks the
    // first file, then Search does a binary search of the level. A batch's
    // sorted keys (from > 0): the key's file is the one the previous key
    // fell into, or a few files on (a level of F files and a batch of B
    // keys: F / B files apart on average). The next kLinearSteps files are
    // counted without a branch (the windows ascend, so those ending before
    // the key come first, and the padding never does): a loop stopping at
    // the key's file mispredicts its exit about once per key and level.
    if (position.side == Position::Side::kInside) {
      if (from == 0) {
        if (largest_[0] > position.window) return 0;
      } else {
        size_t before = 0;
        for (size_t i = 0; i < kLinearSteps; ++i) {
          before += largest_[from + i] < position.window;
        }
        from += before;
        // Files before `from` end before the key. Equal windows need the
        // keys. (A padding entry here means no file holds the key.)
        if (before < kLinearSteps && largest_[from] > position.window) {
          return from;
        }
      }
    }
    return Search(icmp, files, internal_key, position, from);
  }

  // Whether `user_key` is at or after the smallest user key of files[index].
  // REQUIRES: as FindFile's, and index < files.size().
  bool AtOrAfterSmallest(const InternalKeyComparator& icmp,
                         const FileList& files, size_t index,
                         std::string_view user_key,
                         const Position& position) const {
    if (position.side != Position::Side::kInside) {
      if (position.side == Position::Side::kCompare) {
        return icmp.CompareUserKeys(user_key,
                                    files[index]->smallest.user_key()) >= 0;
      }
      return position.side == Position::Side::kAfter;
    }
    if (position.window != smallest_[index]) {
      return position.window > smallest_[index];
    }
    return icmp.CompareUserKeys(user_key, files[index]->smallest.user_key()) >=
           0;
  }
  // Whether `user_key` is at or before the largest user key of files[index].
  // Same REQUIRES.
  bool AtOrBeforeLargest(const InternalKeyComparator& icmp,
                         const FileList& files, size_t index,
                         std::string_view user_key,
                         const Position& position) const {
    if (position.side != Position::Side::kInside) {
      if (position.side == Position::Side::kCompare) {
        return icmp.CompareUserKeys(user_key,
                                    files[index]->largest.user_key()) <= 0;
      }
      return position.side == Position::Side::kBefore;
    }
    if (position.window != largest_[index]) {
      return position.window < largest_[index];
    }
    return icmp.CompareUserKeys(user_key, files[index]->largest.user_key()) <=
           0;
  }

 private:
  // How many files after the previous key's FindFile counts before it
  // searches.
  static constexpr size_t kLinearSteps = 4;

  // FindFile past its inline case.
  size_t Search(const InternalKeyComparator& icmp, const FileList& files,
                std::string_view internal_key, const Position& position,
                size_t from) const;

  // The 8 bytes of `user_key` after the common prefix, big-endian,
  // zero-padded. REQUIRES: user_key starts with common_.
  uint64_t Window(std::string_view user_key) const {
    return BigEndianWindow(user_key, common_.size());
  }

  bool usable_ = false;
  std::string common_;
  std::vector<uint64_t> smallest_;  // window of each file's smallest user key
  std::vector<uint64_t> largest_;   // window of each file's largest user key,
                                    // then the padding
};

}  // namespace sift

#endif  // SIFT_DB_LEVEL_BOUNDS_H_
