#include "tools/sift_stress/expected_state.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tools/sift_stress/key_value.h"

namespace sift::stress {
namespace {

constexpr uint64_t kMagic = 0x73696674'73747232ULL;  // "siftstr2"
constexpr int kRing = 4;  // acknowledged writes kept per key until durable

// Header words.
enum : int {
  kMagicWord = 0,
  kNumKeysWord = 1,
  kTicketWord = 2,   // tickets handed out (acknowledged writes)
  kDurableWord = 3,  // every ticket <= this is durable
  kBatchWord = 4,    // batches recorded since the last ClearBatches
  kOpCountWords = 8,
  kHeaderWords = 64,
};

uint64_t Load(const uint64_t* p) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(p))
      .load(std::memory_order_acquire);
}
void Store(uint64_t* p, uint64_t v) {
  std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release);
}

// A batch record: its sequence number (1-based; written last, so a record
// is whole once it holds the number it should), the number of writes, then
// (key, KeyWrite::Encode) per write.
constexpr size_t kBatchRecordWords = 2 + 2 * ExpectedState::kMaxBatchKeys;

}  // namespace

// One key's words in the file. Written only under the key's lock, read
// anywhere: every access is atomic.
struct ExpectedState::Slot {
  uint64_t next_version;  // highest version begun
  uint64_t last_delete;   // highest delete version begun
  uint64_t epoch;         // highest version begun at the last Settle
  uint64_t floor;         // KeyWrite::Encode of the last known-durable write
  uint64_t last_acked;    // KeyWrite::Encode of the last acknowledged write
  uint64_t n_recs;        // acknowledged writes not yet known durable,
  uint64_t rec_write[kRing];  // oldest first
  uint64_t rec_ticket[kRing];
  uint64_t rec_begin[kRing];  // TicketNow() when each write began
  uint64_t last_begin;        // TicketNow() when the last write began
};

const char* OpName(Op op) {
  static const char* const kNames[] = {
      "put",      "delete",        "batch",         "get",
      "multiget", "iter_forward",  "iter_backward", "snapshot",
      "flush",    "compact_range", "ingest",        "checkpoint"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) ==
                static_cast<size_t>(Op::kCount));
  return kNames[static_cast<int>(op)];
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kLost:
      return "lost";
    case Verdict::kResurrected:
      return "resurrected";
    case Verdict::kWrong:
      return "wrong";
  }
  return "?";
}

namespace {
std::string Describe(KeyWrite w) {
  if (w.version == 0) return "absent (never written)";
  if (w.deleted)
    return absl::StrCat("absent (deleted by version ", w.version, ")");
  return absl::StrCat("version ", w.version);
}
std::string Expected(const KeyWindow& w) {
  const uint64_t first = std::max(w.floor.version, w.epoch) + 1;
  if (first > w.max_started)
    return Describe(w.floor) + " (nothing begun after it)";
  return absl::StrCat(Describe(w.floor),
                      " or a write begun after it (versions ", first, "..",
                      w.max_started, ", last delete ", w.last_delete, ")");
}
}  // namespace

Verdict Judge(uint32_t index, const std::optional<std::string>& found,
              const KeyWindow& w, std::string* why) {
  if (!found.has_value()) {
    if (w.floor.deleted) return Verdict::kOk;
    if (w.last_delete > w.floor.version && w.last_delete > w.epoch) {
      return Verdict::kOk;
    }
    *why = absl::StrCat("expected ", Expected(w), "; found absent");
    return Verdict::kLost;
  }
  uint64_t v = 0;
  if (!ParseValue(index, *found, &v)) {
    *why = absl::StrCat("expected ", Expected(w),
                        "; found a value no write produced: \"",
                        found->substr(0, 40), found->size() > 40 ? "..." : "",
                        "\" (", found->size(), " bytes)");
    return Verdict::kWrong;
  }
  if (w.floor.present() && v == w.floor.version) return Verdict::kOk;
  if (v > w.max_started) {
    *why = absl::StrCat("expected ", Expected(w), "; found version ", v,
                        ", never written");
    return Verdict::kWrong;
  }
  if (v > w.floor.version && v > w.epoch) return Verdict::kOk;
  *why = absl::StrCat("expected ", Expected(w), "; found version ", v);
  if (v > w.floor.version) {
    absl::StrAppend(why, ", lost in an earlier crash and back");
    return Verdict::kResurrected;
  }
  if (w.floor.deleted) {
    absl::StrAppend(why, ", older than the durable delete");
    return Verdict::kResurrected;
  }
  absl::StrAppend(why, ", older than the durable version");
  return Verdict::kLost;
}

absl::StatusOr<std::unique_ptr<ExpectedState>> ExpectedState::Open(
    const std::string& path, uint32_t num_keys, bool create) {
  const size_t size = kHeaderWords * sizeof(uint64_t) +
                      size_t{num_keys} * sizeof(Slot) +
                      kBatchCapacity * kBatchRecordWords * sizeof(uint64_t);
  const int fd = ::open(path.c_str(), O_RDWR | (create ? O_CREAT : 0), 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  if (create && (::ftruncate(fd, 0) != 0 ||
                 ::ftruncate(fd, static_cast<off_t>(size)) != 0)) {
    const int e = errno;
    ::close(fd);
    return absl::InternalError(
        absl::StrCat("truncate ", path, ": ", std::strerror(e)));
  }
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int e = errno;
  ::close(fd);  // the mapping keeps the file
  if (base == MAP_FAILED) {
    return absl::InternalError(
        absl::StrCat("mmap ", path, ": ", std::strerror(e)));
  }
  std::unique_ptr<ExpectedState> state(new ExpectedState(base, size, num_keys));
  if (create) {
    Store(state->header_word(kMagicWord), kMagic);
    Store(state->header_word(kNumKeysWord), num_keys);
  } else if (Load(state->header_word(kMagicWord)) != kMagic ||
             Load(state->header_word(kNumKeysWord)) != num_keys) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is not an expected-state file of ", num_keys, " keys"));
  }
  return state;
}

ExpectedState::ExpectedState(void* base, size_t size, uint32_t num_keys)
    : base_(base),
      size_(size),
      num_keys_(num_keys),
      locks_(new std::mutex[num_keys]) {}

ExpectedState::~ExpectedState() { ::munmap(base_, size_); }

uint64_t* ExpectedState::header_word(int i) const {
  return static_cast<uint64_t*>(base_) + i;
}

ExpectedState::Slot* ExpectedState::slot(uint32_t index) const {
  return reinterpret_cast<Slot*>(static_cast<uint64_t*>(base_) + kHeaderWords) +
         index;
}

uint64_t ExpectedState::BeginWrite(uint32_t index, bool deleted) {
  Slot* s = slot(index);
  const uint64_t v = Load(&s->next_version) + 1;
  // The version is recorded before the DB sees the write: if the process
  // dies in between, the write counts as in flight (may or may not be there).
  if (deleted) Store(&s->last_delete, v);
  Store(&s->last_begin, TicketNow());
  Store(&s->next_version, v);
  return v;
}

void ExpectedState::AckWrite(uint32_t index, uint64_t version, bool deleted,
                             bool synced, uint64_t ticket) {
  Slot* s = slot(index);
  const uint64_t w = KeyWrite{version, deleted}.Encode();
  Store(&s->last_acked, w);
  if (synced) {
    Store(&s->floor, w);
    Store(&s->n_recs, 0);
    return;
  }
  uint64_t n = Load(&s->n_recs);
  const uint64_t durable = Load(header_word(kDurableWord));
  // Fold writes that became durable into the floor; when the ring is full,
  // drop the oldest not-yet-durable one: the floor then stays older than it
  // could be, which only makes the check more permissive, never wrong.
  while (n > 0 && (Load(&s->rec_ticket[0]) <= durable || n == kRing)) {
    if (Load(&s->rec_ticket[0]) <= durable) {
      Store(&s->floor, Load(&s->rec_write[0]));
    }
    for (uint64_t i = 1; i < n; ++i) {
      Store(&s->rec_write[i - 1], Load(&s->rec_write[i]));
      Store(&s->rec_ticket[i - 1], Load(&s->rec_ticket[i]));
      Store(&s->rec_begin[i - 1], Load(&s->rec_begin[i]));
    }
    --n;
  }
  Store(&s->rec_write[n], w);
  Store(&s->rec_ticket[n], ticket);
  Store(&s->rec_begin[n], Load(&s->last_begin));  // this write's Begin
  Store(&s->n_recs, n + 1);
}

uint64_t ExpectedState::TicketNow() const {
  return Load(header_word(kTicketWord));
}

uint64_t ExpectedState::NewTicket() {
  return std::atomic_ref<uint64_t>(*header_word(kTicketWord))
             .fetch_add(1, std::memory_order_acq_rel) +
         1;
}

void ExpectedState::SyncPoint(uint64_t ticket) {
  std::atomic_ref<uint64_t> durable(*header_word(kDurableWord));
  uint64_t cur = durable.load();
  while (cur < ticket && !durable.compare_exchange_weak(cur, ticket)) {
  }
}

KeyWrite ExpectedState::LastAcked(uint32_t index) const {
  return KeyWrite::Decode(Load(&slot(index)->last_acked));
}

KeyWindow ExpectedState::WindowAfterCrash(uint32_t index,
                                          CrashKind kind) const {
  const Slot* s = slot(index);
  KeyWindow w;
  w.max_started = Load(&s->next_version);
  w.last_delete = Load(&s->last_delete);
  w.epoch = Load(&s->epoch);
  if (kind == CrashKind::kKill) {
    w.floor = KeyWrite::Decode(Load(&s->last_acked));
    return w;
  }
  uint64_t floor = Load(&s->floor);
  const uint64_t durable = Load(header_word(kDurableWord));
  const uint64_t n = Load(&s->n_recs);
  // Tickets grow with versions, so the durable writes are a prefix.
  for (uint64_t i = 0; i < n && Load(&s->rec_ticket[i]) <= durable; ++i) {
    floor = Load(&s->rec_write[i]);
  }
  w.floor = KeyWrite::Decode(floor);
  return w;
}

OrderFacts ExpectedState::OrderFactsOf(uint32_t index,
                                       const KeyWrite& found) const {
  const Slot* s = slot(index);
  OrderFacts f;
  const uint64_t durable = Load(header_word(kDurableWord));
  const uint64_t n = Load(&s->n_recs);
  // The write found: for an absent key, the latest delete it could be
  // (which loses the fewest writes), and no begin ticket (permissive).
  uint64_t found_version = found.version;
  if (found.deleted) {
    found_version = 0;
    if (Load(&s->last_delete) > Load(&s->epoch)) {
      found_version = Load(&s->last_delete);
    }
  } else if (found.version == Load(&s->next_version)) {
    f.found_begin = Load(&s->last_begin);
  }
  for (uint64_t i = 0; i < n; ++i) {
    const KeyWrite w = KeyWrite::Decode(Load(&s->rec_write[i]));
    const uint64_t ticket = Load(&s->rec_ticket[i]);
    if (!found.deleted && w.version == found.version) {
      f.found_begin = Load(&s->rec_begin[i]);
    }
    if (w.version > found_version && ticket > durable &&
        ticket < f.lost_ticket) {
      f.lost_ticket = ticket;
      f.lost_version = w.version;
    }
  }
  return f;
}

KeyWindow ExpectedState::WindowSince(uint32_t index,
                                     KeyWrite acked_before) const {
  const Slot* s = slot(index);
  KeyWindow w;
  w.floor = acked_before;
  w.max_started = Load(&s->next_version);
  w.last_delete = Load(&s->last_delete);
  w.epoch = Load(&s->epoch);
  return w;
}

void ExpectedState::Settle(uint32_t index, KeyWrite found) {
  Slot* s = slot(index);
  // An absent key is recorded as "never written since": any older put
  // version that shows up later is a resurrection.
  if (found.deleted) found = KeyWrite{0, true};
  Store(&s->floor, found.Encode());
  Store(&s->last_acked, found.Encode());
  Store(&s->n_recs, 0);
  Store(&s->epoch, Load(&s->next_version));
}

uint64_t* ExpectedState::batch_record(uint64_t seq) const {
  uint64_t* first = reinterpret_cast<uint64_t*>(slot(num_keys_));
  return first + (seq % kBatchCapacity) * kBatchRecordWords;
}

void ExpectedState::RecordBatch(const std::vector<BatchWrite>& writes) {
  const uint64_t seq = std::atomic_ref<uint64_t>(*header_word(kBatchWord))
                           .fetch_add(1, std::memory_order_acq_rel) +
                       1;
  uint64_t* r = batch_record(seq);
  Store(&r[0], 0);  // incomplete until the end
  const size_t n = std::min(writes.size(), kMaxBatchKeys);
  Store(&r[1], n);
  for (size_t i = 0; i < n; ++i) {
    Store(&r[2 + 2 * i], writes[i].key);
    Store(&r[3 + 2 * i], writes[i].write.Encode());
  }
  Store(&r[0], seq);
}

namespace {

// The oldest batch record the ring may still hold when `last` is the newest:
// a record older than kBatchCapacity has been overwritten.
uint64_t FirstHeldBatch(uint64_t last) {
  return last > ExpectedState::kBatchCapacity
             ? last - ExpectedState::kBatchCapacity + 1
             : 1;
}

}  // namespace

std::vector<std::vector<BatchWrite>> ExpectedState::Batches() const {
  std::vector<std::vector<BatchWrite>> out;
  const uint64_t last = Load(header_word(kBatchWord));
  for (uint64_t seq = FirstHeldBatch(last); seq <= last; ++seq) {
    const uint64_t* r = batch_record(seq);
    if (Load(&r[0]) != seq) continue;  // torn by a kill, or overwritten
    const uint64_t n = std::min<uint64_t>(Load(&r[1]), kMaxBatchKeys);
    std::vector<BatchWrite> batch;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t key = Load(&r[2 + 2 * i]);
      if (key >= num_keys_) break;  // cannot happen in a whole record
      batch.push_back(BatchWrite{static_cast<uint32_t>(key),
                                 KeyWrite::Decode(Load(&r[3 + 2 * i]))});
    }
    out.push_back(std::move(batch));
  }
  return out;
}

void ExpectedState::ClearBatches() {
  const uint64_t last = Load(header_word(kBatchWord));
  for (uint64_t seq = FirstHeldBatch(last); seq <= last; ++seq) {
    Store(batch_record(seq), 0);
  }
  Store(header_word(kBatchWord), 0);
}

void ExpectedState::CountOp(Op op) {
  std::atomic_ref<uint64_t>(*header_word(kOpCountWords + static_cast<int>(op)))
      .fetch_add(1, std::memory_order_relaxed);
}

uint64_t ExpectedState::OpCount(Op op) const {
  return Load(header_word(kOpCountWords + static_cast<int>(op)));
}

}  // namespace sift::stress
