#ifndef SIFT_TOOLS_SIFT_STRESS_EXPECTED_STATE_H_
#define SIFT_TOOLS_SIFT_STRESS_EXPECTED_STATE_H_

// The expected state of the soak: what every key may hold, kept outside the
// database in a file mapped into memory (MAP_SHARED), as RocksDB's db_stress
// keeps its expected-state file. In a kill round the writer is a child
// process: it updates the file as it writes, and the parent reads the file
// after the SIGKILL (the kernel keeps a killed process's writes to a shared
// mapping). In a power-loss round the writer runs in-process.
//
// Write protocol (per key, under the key's lock, so writes of one key are
// ordered): BeginWrite hands out the key's next version before the DB call;
// AckWrite records it once the DB call returned OK. A version is a put (the
// value ValueOf(key, version)) or a delete. Every acknowledged write also
// takes a ticket from a global counter; a "sync point" (a sync=true write, a
// Flush, CompactRange or IngestExternalFiles that returned OK) that started
// when the counter was at t makes every write with ticket <= t durable
// (doc/durability.md, promise 2: a sync point makes every write acknowledged
// before it durable).
//
// The rule enforced after a crash, for each key (see Judge): let the floor be
//   kill round:   the last acknowledged write (a process kill loses nothing
//                 acknowledged, sync or not);
//   power round:  the last write known durable: acknowledged with sync=true
//                 or by ingestion, or acknowledged before a sync point began;
// then the key must hold the floor's state or the state of a write begun
// after it (acknowledged but unsynced, or in flight): a lost unsynced write
// is allowed only when it is newer than everything durable. Never an older
// overwritten value, never a value deleted by the floor (resurrected), never
// a value that no write produced, never a version lost in an earlier crash.
//
// Thread safety: BeginWrite and AckWrite for a key require its lock
// (KeyLock); everything else is safe to call concurrently (atomic loads and
// stores on the mapped words).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sift::stress {

// Kinds of operations, counted in the file so the child's work is counted.
enum class Op : int {
  kPut,
  kDelete,
  kBatch,
  kGet,
  kMultiGet,
  kIterForward,
  kIterBackward,
  kSnapshot,
  kFlush,
  kCompactRange,
  kIngest,
  kCheckpoint,
  kCount
};
const char* OpName(Op op);

// One write's effect on a key: version 0 is "never written" (absent).
struct KeyWrite {
  uint64_t version = 0;
  bool deleted = true;

  uint64_t Encode() const { return version << 1 | (deleted ? 1 : 0); }
  static KeyWrite Decode(uint64_t e) { return {e >> 1, (e & 1) != 0}; }
  bool present() const { return !deleted; }
};

// Which crash a round ends with; decides the floor (see the file comment).
enum class CrashKind { kKill, kPowerLoss };

// What a key may hold: its floor and the writes begun after it.
struct KeyWindow {
  KeyWrite floor;
  uint64_t max_started = 0;  // highest version begun
  uint64_t last_delete = 0;  // highest delete version begun
  uint64_t epoch = 0;        // versions <= epoch not found at the last check
                             // are gone for good (lost in a crash)
};

// One key's write in a recorded batch (ExpectedState::RecordBatch).
struct BatchWrite {
  uint32_t key;
  KeyWrite write;
};

// For the check across keys after a power loss (promise 2: what survives is
// a prefix of the write order): a write that began after another write was
// acknowledged comes after it in commit order, so it may not survive while
// that acknowledged write is lost. Tickets as in ExpectedState.
struct OrderFacts {
  // TicketNow() when the write found began; 0 if unknown (a durable write,
  // an absent key, a write whose record was dropped): never a violation.
  uint64_t found_begin = 0;
  // The smallest ticket of an acknowledged, not durable write newer than
  // the one found (so lost), and its version; UINT64_MAX if none.
  uint64_t lost_ticket = UINT64_MAX;
  uint64_t lost_version = 0;
};

enum class Verdict { kOk, kLost, kResurrected, kWrong };
const char* VerdictName(Verdict v);

// Judge what a read found for key `index` against `w`: `found` is nullopt
// for absent. On a failure, *why says what was expected and found.
Verdict Judge(uint32_t index, const std::optional<std::string>& found,
              const KeyWindow& w, std::string* why);

class ExpectedState {
 public:
  // Map the state file at `path`; create it (every key absent, counters 0)
  // if it does not exist or holds another key count and `create` is true.
  static absl::StatusOr<std::unique_ptr<ExpectedState>> Open(
      const std::string& path, uint32_t num_keys, bool create);
  ~ExpectedState();
  ExpectedState(const ExpectedState&) = delete;
  ExpectedState& operator=(const ExpectedState&) = delete;

  uint32_t num_keys() const { return num_keys_; }
  // Process-local: in a kill round only the child writes.
  std::mutex& KeyLock(uint32_t index) { return locks_[index]; }

  // REQUIRES (both): KeyLock(index) held.
  uint64_t BeginWrite(uint32_t index, bool deleted);
  void AckWrite(uint32_t index, uint64_t version, bool deleted, bool synced,
                uint64_t ticket);

  // Tickets: TicketNow() before a sync point, NewTicket() for each ack,
  // SyncPoint(t) when a sync point begun at t returned OK.
  uint64_t TicketNow() const;
  uint64_t NewTicket();
  void SyncPoint(uint64_t ticket);

  // The last acknowledged write (or the state found by the last Settle):
  // what a read must see exactly while KeyLock(index) is held and no write
  // of the key has failed.
  KeyWrite LastAcked(uint32_t index) const;
  // The key's window after a crash of kind `kind` (file comment).
  KeyWindow WindowAfterCrash(uint32_t index, CrashKind kind) const;
  // The window of a read that began when the last acknowledged write was
  // `acked_before` and ended now.
  KeyWindow WindowSince(uint32_t index, KeyWrite acked_before) const;

  // What `found` (what key `index` holds after a power loss) says about the
  // order of writes (OrderFacts).
  OrderFacts OrderFactsOf(uint32_t index, const KeyWrite& found) const;

  // After a verified reopen: `found` is the key's durable state from now on;
  // versions begun so far and not found are gone for good.
  void Settle(uint32_t index, KeyWrite found);

  // Batches, for the all-or-nothing check after a crash (a WriteBatch is
  // one log record: after recovery all of its writes are there or none).
  // RecordBatch before the DB call, with the versions BeginWrite gave, under
  // the keys' locks; a record the process died writing is not kept (its DB
  // call had not begun). Batches() returns the batches recorded since the
  // last ClearBatches, at most the latest kBatchCapacity, oldest first.
  static constexpr size_t kBatchCapacity = 4096;
  static constexpr size_t kMaxBatchKeys = 32;
  // REQUIRES: writes.size() <= kMaxBatchKeys.
  void RecordBatch(const std::vector<BatchWrite>& writes);
  std::vector<std::vector<BatchWrite>> Batches() const;
  void ClearBatches();

  void CountOp(Op op);
  uint64_t OpCount(Op op) const;

 private:
  struct Slot;
  ExpectedState(void* base, size_t size, uint32_t num_keys);
  Slot* slot(uint32_t index) const;
  uint64_t* header_word(int i) const;
  uint64_t* batch_record(uint64_t seq) const;

  void* base_;
  size_t size_;
  uint32_t num_keys_;
  std::unique_ptr<std::mutex[]> locks_;
};

}  // namespace sift::stress

#endif  // SIFT_TOOLS_SIFT_STRESS_EXPECTED_STATE_H_
