#ifndef SIFT_DB_SNAPSHOT_H_
#define SIFT_DB_SNAPSHOT_H_

#include <cassert>
#include <iterator>
#include <list>
#include <memory>

#include "db/dbformat.h"
#include "sift/db.h"

namespace sift {

class SnapshotList;

// The DB's side of a public Snapshot: the sequence number it reads at. Owned
// by the SnapshotList that made it.
class SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber sequence) : sequence_(sequence) {}
  ~SnapshotImpl() override = default;

  SequenceNumber sequence() const { return sequence_; }

 private:
  friend class SnapshotList;

  const SequenceNumber sequence_;
  // Where this snapshot sits in its list, for O(1) removal.
  std::list<std::unique_ptr<SnapshotImpl>>::iterator self_;
};

// The live snapshots of a DB, oldest first. Snapshots are taken at the last
// published sequence, which never decreases, so appending keeps the list
// sorted by sequence and the oldest (what compaction must preserve) is at the
// front.
//
// Thread safety: not safe for concurrent use; the DB guards it with its
// mutex.
class SnapshotList {
 public:
  SnapshotList() = default;
  SnapshotList(const SnapshotList&) = delete;
  SnapshotList& operator=(const SnapshotList&) = delete;

  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }

  // REQUIRES: !empty()
  SequenceNumber oldest() const { return list_.front()->sequence(); }

  // A new snapshot at `sequence`. REQUIRES: sequence >= every live snapshot's.
  const SnapshotImpl* New(SequenceNumber sequence) {
    assert(empty() || list_.back()->sequence() <= sequence);
    list_.push_back(std::make_unique<SnapshotImpl>(sequence));
    list_.back()->self_ = std::prev(list_.end());
    return list_.back().get();
  }

  // REQUIRES: snapshot came from New on this list and was not released.
  void Release(const SnapshotImpl* snapshot) { list_.erase(snapshot->self_); }

 private:
  std::list<std::unique_ptr<SnapshotImpl>> list_;
};

}  // namespace sift

#endif  // SIFT_DB_SNAPSHOT_H_
