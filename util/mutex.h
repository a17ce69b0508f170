#ifndef SIFT_UTIL_MUTEX_H_
#define SIFT_UTIL_MUTEX_H_

// Mutex and condition variable for all of sift.
//
// Why not absl::Mutex: Debian's Abseil is built without ThreadSanitizer
// instrumentation, so TSan cannot see absl::Mutex's happens-before edges and
// reports false races on everything it guards. These wrappers sit on
// std::mutex / std::condition_variable (pthreads, which TSan intercepts) and
// keep absl's spelling and its thread-safety annotations, so guarded state is
// still written ABSL_GUARDED_BY(mu_).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace sift {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for the lifetime of the object.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  Mutex* const mu_;
};

// A condition variable used with a sift::Mutex. As with any condition
// variable, wake-ups may be spurious: wait in a loop on the predicate.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // REQUIRES: *mu held. Releases it while waiting; holds it again on return.
  void Wait(Mutex* mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, for at most `micros`. Returns true on timeout.
  bool WaitForMicros(Mutex* mu, int64_t micros) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out =
        cv_.wait_for(lock, std::chrono::microseconds(micros)) ==
        std::cv_status::timeout;
    lock.release();
    return timed_out;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace sift

#endif  // SIFT_UTIL_MUTEX_H_
