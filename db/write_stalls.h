#ifndef SIFT_DB_WRITE_STALLS_H_
#define SIFT_DB_WRITE_STALLS_H_

// What writers have waited for since the DB opened: the front writer of the
// write queue holds back every writer queued behind it, so each wait below is
// a stall of all writes (db/write_path.h, MakeRoomForWrite). A stall is one
// write's wait for one cause, from its start until the write has room,
// however many times the writer woke up to check in between. Shown by the
// sift.stats and sift.write-stalls properties.
//
// Thread safety: none; DBState keeps one under its mutex.

#include <array>
#include <cstdint>
#include <string>

namespace sift {

class WriteStalls {
 public:
  enum Cause {
    // Level 0 reached config::kL0SlowdownWritesTrigger tables: one write
    // sleeps 1 ms to give compaction time.
    kLevel0Slowdown,
    // The active memtable is full while the previous one is still being
    // flushed.
    kMemTableFlush,
    // Level 0 reached config::kL0StopWritesTrigger tables.
    kLevel0Stop,
    // The front writer starting a new WAL and memtable (the switch itself,
    // not a wait for background work).
    kWalSwitch,
  };
  static constexpr int kNumCauses = kWalSwitch + 1;

  // The name sift.write-stalls gives `cause`.
  static const char* Name(Cause cause);

  // One write's waits, collected while it makes room: a wait that spans
  // several wake-ups (each step of the background thread wakes the writer
  // to check again) is one stall of its whole time.
  class Waits {
   public:
    void Add(Cause cause, uint64_t micros) {
      micros_[cause] += micros;
      waited_[cause] = true;
    }

   private:
    friend class WriteStalls;
    std::array<uint64_t, kNumCauses> micros_{};
    std::array<bool, kNumCauses> waited_{};
  };

  // Counts one stall of `micros` microseconds.
  void Add(Cause cause, uint64_t micros);
  // Counts one stall per cause `waits` holds, of its whole time.
  void Add(const Waits& waits);

  uint64_t count(Cause cause) const { return causes_[cause].count; }
  uint64_t micros(Cause cause) const { return causes_[cause].micros; }
  // The longest single stall of this cause.
  uint64_t longest_micros(Cause cause) const {
    return causes_[cause].longest_micros;
  }

  // One line per cause: "<name>: <count> stalls, <total> us, longest <us>".
  std::string ToString() const;

 private:
  struct Counts {
    uint64_t count = 0;
    uint64_t micros = 0;
    uint64_t longest_micros = 0;
  };
  std::array<Counts, kNumCauses> causes_{};
};

}  // namespace sift

#endif  // SIFT_DB_WRITE_STALLS_H_
