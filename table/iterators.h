#ifndef SIFT_TABLE_ITERATORS_H_
#define SIFT_TABLE_ITERATORS_H_

// Iterators that combine other iterators. Shared by tables (index + data
// blocks) and the DB (levels of tables, memtables + tables).

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "sift/iterator.h"
#include "util/comparator.h"

namespace sift {

// An iterator over nothing, with the given status.
std::unique_ptr<Iterator> NewEmptyIterator(
    absl::Status status = absl::OkStatus());

// Iterators to merge. A DB iterator's (its memtables, the level-0 tables and
// one per deeper level) usually fit inline: an iterator is made per scan, and
// the array of its children was one more allocation each time.
using IteratorList = absl::InlinedVector<std::unique_ptr<Iterator>, 8>;

// Merges `children` (each sorted by `comparator`) into one sorted sequence.
// Equal keys from different children are all yielded, the earlier child first
// (going backward, the later child first). A child's error stops the merge:
// the result is !Valid() from then on and status() reports the error.
// `comparator` is not owned and must outlive the result.
std::unique_ptr<Iterator> NewMergingIterator(const Comparator* comparator,
                                             IteratorList&& children);

// Iterates over the concatenation of the sequences that `make_second` builds
// from each value of `index` (e.g. index entry -> data block, or file list
// entry -> table). Empty second-level iterators are skipped. An error from
// the index or from a second-level iterator (including one built already
// failed, e.g. NewEmptyIterator(error)) stops the iteration: the result is
// !Valid() from then on and status() reports the first error, so no entry of
// a failed block is silently left out.
std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index,
    std::function<std::unique_ptr<Iterator>(std::string_view index_value)>
        make_second);

}  // namespace sift

#endif  // SIFT_TABLE_ITERATORS_H_
