#ifndef SIFT_INCLUDE_SIFT_ITERATOR_H_
#define SIFT_INCLUDE_SIFT_ITERATOR_H_

#include <string_view>

#include "absl/status/status.h"

namespace sift {

// A position in an ordered sequence of key/value pairs. The same interface
// serves the DB iterator handed to users and the engine's internal block,
// table and merging iterators.
//
// Thread safety: an Iterator is not safe for concurrent use; give each thread
// its own. Const methods may be called concurrently only if nothing else
// touches the iterator.
class Iterator {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  virtual ~Iterator() = default;

  // True iff the iterator is positioned at an entry.
  virtual bool Valid() const = 0;

  // Position at the first entry; Valid() is false if there is none.
  virtual void SeekToFirst() = 0;
  // Position at the last entry; Valid() is false if there is none.
  virtual void SeekToLast() = 0;
  // Position at the first entry with key >= target.
  virtual void Seek(std::string_view target) = 0;

  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid()
  virtual void Prev() = 0;

  // REQUIRES: Valid(). The view stays valid until the iterator is moved or
  // destroyed.
  virtual std::string_view key() const = 0;
  // REQUIRES: Valid(). The view stays valid until the iterator is moved or
  // destroyed.
  virtual std::string_view value() const = 0;

  // OK unless an error (I/O, corruption) was met; an iterator that met one
  // becomes !Valid() and stays so.
  virtual absl::Status status() const = 0;
};

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_ITERATOR_H_
