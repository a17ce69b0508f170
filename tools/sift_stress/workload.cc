#include "tools/sift_stress/workload.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sift/env.h"
#include "sift/table_file_writer.h"
#include "tools/sift_stress/key_value.h"

namespace sift::stress {

OpMix DrawOpMix(Rng* rng, uint32_t num_keys) {
  // {low, high} weight per operation, in Op order. Writes dominate so that
  // flushes and compactions run; the expensive operations (checkpoint,
  // ingestion) are rare but reached in every round of a second or more.
  static const uint32_t kRanges[][2] = {
      {200, 400},  // put
      {30, 100},   // delete
      {50, 150},   // batch
      {100, 300},  // get
      {30, 100},   // multiget
      {10, 40},    // iter_forward
      {10, 40},    // iter_backward
      {10, 30},    // snapshot
      {2, 8},      // flush
      {1, 6},      // compact_range
      {2, 8},      // ingest
      {1, 2},      // checkpoint
  };
  OpMix mix;
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    mix.weight[i] =
        static_cast<uint32_t>(rng->Range(kRanges[i][0], kRanges[i][1]));
    absl::StrAppend(&mix.text, i == 0 ? "" : " ", OpName(static_cast<Op>(i)),
                    "=", mix.weight[i]);
  }
  if (rng->OneIn(2)) {
    mix.hot_keys = std::min<uint32_t>(num_keys, 200);
    mix.hot_base =
        static_cast<uint32_t>(rng->Uniform(num_keys - mix.hot_keys + 1));
  }
  absl::StrAppend(&mix.text, " hot_keys=", mix.hot_keys, "@", mix.hot_base);
  return mix;
}

namespace {

// A snapshot held across operations, with what was read at it.
struct HeldSnapshot {
  const Snapshot* snapshot = nullptr;
  std::vector<uint32_t> keys;
  std::vector<std::optional<std::string>> values;
  uint32_t lo = 0, hi = 0;  // a scanned range and what the scan gave
  std::vector<std::pair<std::string, std::string>> scan;
};

class Worker {
 public:
  Worker(Workload* w, int thread)
      : w_(w),
        db_(w->db),
        state_(w->state),
        n_(w->state->num_keys()),
        thread_(thread),
        rng_(SubSeed(w->seed, 100 + static_cast<uint64_t>(thread))) {
    for (uint32_t weight : w->mix.weight) total_weight_ += weight;
  }

  void Run() {
    while (!w_->stop.load() && !w_->reporter->failed()) {
      const Op op = PickOp();
      if (!RunOp(op)) break;
      state_->CountOp(op);
    }
    if (held_.snapshot != nullptr) db_->ReleaseSnapshot(held_.snapshot);
  }

 private:
  Op PickOp() {
    uint64_t r = rng_.Uniform(total_weight_);
    for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
      if (r < w_->mix.weight[i]) return static_cast<Op>(i);
      r -= w_->mix.weight[i];
    }
    return Op::kGet;
  }

  // Returns false when the worker should stop.
  bool RunOp(Op op) {
    switch (op) {
      case Op::kPut:
      case Op::kDelete:
      case Op::kBatch:
        return DoWrite(op);
      case Op::kGet:
        return DoGet();
      case Op::kMultiGet:
        return DoMultiGet();
      case Op::kIterForward:
      case Op::kIterBackward:
        return DoScan(op == Op::kIterForward);
      case Op::kSnapshot:
        return DoSnapshot();
      case Op::kFlush:
      case Op::kCompactRange:
        return DoFlushOrCompact(op == Op::kFlush);
      case Op::kIngest:
        return DoIngest();
      case Op::kCheckpoint:
        return DoCheckpoint();
      case Op::kCount:
        break;
    }
    return false;
  }

  // An error after the power cut is expected and ends the worker; any
  // other error is a failure.
  bool Check(const absl::Status& s, std::string_view context) {
    if (s.ok()) return true;
    if (!w_->crashed.load()) w_->reporter->Error(context, s);
    return false;
  }
  bool Crashed() const { return w_->crashed.load(); }

  uint32_t PickKey() {
    if (w_->mix.hot_keys > 0 && rng_.OneIn(2)) {
      return w_->mix.hot_base +
             static_cast<uint32_t>(rng_.Uniform(w_->mix.hot_keys));
    }
    return static_cast<uint32_t>(rng_.Uniform(n_));
  }
  // `count` distinct keys in increasing order (the lock order).
  std::vector<uint32_t> PickKeys(size_t count) {
    std::vector<uint32_t> keys;
    for (size_t i = 0; i < count; ++i) keys.push_back(PickKey());
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
  }
  // Locks taken in increasing key order, so no two threads deadlock.
  std::vector<std::unique_lock<std::mutex>> Lock(
      const std::vector<uint32_t>& sorted_keys) {
    std::vector<std::unique_lock<std::mutex>> locks;
    for (uint32_t k : sorted_keys) locks.emplace_back(state_->KeyLock(k));
    return locks;
  }

  // Record acknowledged writes; a synced one is also a sync point for
  // everything acknowledged before it began (`start_ticket`).
  void Ack(const std::vector<uint32_t>& keys,
           const std::vector<uint64_t>& versions,
           const std::vector<bool>& deleted, bool synced,
           uint64_t start_ticket) {
    const uint64_t ticket = state_->NewTicket();
    for (size_t i = 0; i < keys.size(); ++i) {
      state_->AckWrite(keys[i], versions[i], deleted[i], synced, ticket);
    }
    if (synced) state_->SyncPoint(start_ticket);
  }

  bool DoWrite(Op op) {
    std::vector<uint32_t> keys =
        op == Op::kBatch ? PickKeys(rng_.Range(2, 24)) : PickKeys(1);
    auto locks = Lock(keys);
    WriteOptions wo;
    wo.sync = rng_.Percent(static_cast<uint64_t>(w_->drawn->sync_percent));
    const uint64_t start = state_->TicketNow();
    std::vector<uint64_t> versions;
    std::vector<bool> deleted;
    absl::Status s;
    if (op == Op::kBatch) {
      WriteBatch batch;
      std::vector<BatchWrite> record;
      for (uint32_t k : keys) {
        const bool del = rng_.OneIn(4);
        versions.push_back(state_->BeginWrite(k, del));
        deleted.push_back(del);
        record.push_back(BatchWrite{k, KeyWrite{versions.back(), del}});
        if (del) {
          batch.Delete(KeyOf(k));
        } else {
          batch.Put(KeyOf(k), ValueOf(k, versions.back()));
        }
      }
      state_->RecordBatch(record);
      s = db_->Write(wo, &batch);
    } else {
      const bool del = op == Op::kDelete;
      versions.push_back(state_->BeginWrite(keys[0], del));
      deleted.push_back(del);
      s = del ? db_->Delete(wo, KeyOf(keys[0]))
              : db_->Put(wo, KeyOf(keys[0]), ValueOf(keys[0], versions[0]));
    }
    if (!Check(s, OpName(op))) return false;
    Ack(keys, versions, deleted, wo.sync, start);
    return true;
  }

  // What a read under the key's lock must see: exactly the last
  // acknowledged write (anything in the window's epoch is a resurrection).
  KeyWindow ExactWindow(uint32_t k) {
    KeyWindow w = state_->WindowSince(k, state_->LastAcked(k));
    w.max_started = std::max(w.floor.version, w.epoch);
    w.last_delete = 0;
    return w;
  }

  void Judge(uint32_t k, const std::optional<std::string>& found,
             const KeyWindow& w, std::string_view context) {
    std::string why;
    const Verdict v = stress::Judge(k, found, w, &why);
    if (v != Verdict::kOk) w_->reporter->Fail(v, k, context, why);
  }

  ReadOptions RandomReadOptions() {
    ReadOptions ro;
    ro.verify_checksums = !rng_.OneIn(4);
    ro.fill_cache = !rng_.OneIn(4);
    return ro;
  }

  bool DoGet() {
    const uint32_t k = PickKey();
    std::lock_guard<std::mutex> l(state_->KeyLock(k));
    std::string value;
    absl::Status s = db_->Get(RandomReadOptions(), KeyOf(k), &value);
    if (!s.ok() && !absl::IsNotFound(s)) return Check(s, "get");
    if (Crashed()) return false;  // the read may have raced the power cut
    Judge(k, s.ok() ? std::optional<std::string>(value) : std::nullopt,
          ExactWindow(k), "get (key locked)");
    return true;
  }

  bool DoMultiGet() {
    std::vector<uint32_t> keys = PickKeys(rng_.Range(1, 16));
    auto locks = Lock(keys);
    std::vector<std::string> names;
    for (uint32_t k : keys) names.push_back(KeyOf(k));
    if (rng_.OneIn(3)) {  // a duplicate, which MultiGet allows
      keys.push_back(keys[0]);
      names.push_back(names[0]);
    }
    std::vector<std::string_view> views(names.begin(), names.end());
    std::vector<std::string> values;
    std::vector<absl::Status> statuses =
        db_->MultiGet(RandomReadOptions(), views, &values);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!statuses[i].ok() && !absl::IsNotFound(statuses[i])) {
        return Check(statuses[i], "multiget");
      }
    }
    if (Crashed()) return false;
    for (size_t i = 0; i < keys.size(); ++i) {
      Judge(keys[i],
            statuses[i].ok() ? std::optional<std::string>(values[i])
                             : std::nullopt,
            ExactWindow(keys[i]), "multiget (keys locked)");
    }
    return true;
  }

  // Scan [lo, hi) forward or backward, with the bounds in ReadOptions or
  // by stopping at them; returns (index, value) pairs in scan order, or
  // nullopt after an error. Keys out of order or outside are failures.
  std::optional<std::vector<std::pair<uint32_t, std::string>>> Scan(
      ReadOptions ro, uint32_t lo, uint32_t hi, bool forward, bool bounded,
      std::string_view context, bool prefix_scoped = false) {
    const std::string lower = KeyOf(lo), upper = KeyOf(hi);
    if (bounded) {
      ro.iterate_lower_bound = lower;
      ro.iterate_upper_bound = upper;
    }
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    std::vector<std::pair<uint32_t, std::string>> out;
    if (forward) {
      if (bounded && !prefix_scoped && rng_.OneIn(2)) {
        it->SeekToFirst();
      } else {
        it->Seek(lower);
      }
    } else if (bounded) {
      it->SeekToLast();
    } else {
      it->Seek(upper);
      if (it->Valid()) {
        it->Prev();
      } else if (it->status().ok()) {
        it->SeekToLast();
      }
    }
    for (; it->Valid(); forward ? it->Next() : it->Prev()) {
      const std::string_view key = it->key();
      if (!bounded && (forward ? key >= upper : key < lower)) break;
      uint32_t index = 0;
      if (!ParseKey(key, &index) || index < lo || index >= hi) {
        w_->reporter->Fail(Verdict::kWrong, index, context,
                           absl::StrCat("key \"", Av(key), "\" outside [",
                                        lower, ", ", upper, ")"));
        return std::nullopt;
      }
      if (!out.empty() &&
          (forward ? out.back().first >= index : out.back().first <= index)) {
        w_->reporter->Fail(
            Verdict::kWrong, index, context,
            absl::StrCat("out of order after ", KeyOf(out.back().first)));
        return std::nullopt;
      }
      out.emplace_back(index, std::string(it->value()));
    }
    if (!Check(it->status(), context)) return std::nullopt;
    return out;
  }

  bool DoScan(bool forward) {
    const uint32_t lo = PickKey();
    const uint32_t hi =
        std::min<uint32_t>(n_, lo + static_cast<uint32_t>(rng_.Range(1, 300)));
    std::vector<KeyWrite> before;
    for (uint32_t k = lo; k < hi; ++k) before.push_back(state_->LastAcked(k));
    const bool bounded = rng_.OneIn(2);
    ReadOptions ro = RandomReadOptions();
    // A forward scan from Seek(lower) may be confined to lower's prefix.
    const bool prefix_scoped = forward && PrefixScopedScans() && rng_.OneIn(2);
    const char* context = !forward        ? "backward scan"
                          : prefix_scoped ? "forward prefix scan"
                                          : "forward scan";
    SetPrefixSameAsStart(&ro, prefix_scoped);
    auto scan = Scan(ro, lo, hi, forward, bounded, context, prefix_scoped);
    if (!scan.has_value()) return false;
    if (Crashed()) return false;
    std::vector<std::optional<std::string>> found(hi - lo);
    for (auto& [index, value] : *scan) {
      if (prefix_scoped && !SamePrefix(lo, index)) {
        w_->reporter->Fail(Verdict::kWrong, index, context,
                           absl::StrCat("outside the prefix of ", KeyOf(lo)));
        return true;
      }
      found[index - lo] = std::move(value);
    }
    for (uint32_t k = lo; k < hi; ++k) {
      if (prefix_scoped && !SamePrefix(lo, k)) continue;  // not asked for
      Judge(k, found[k - lo], state_->WindowSince(k, before[k - lo]), context);
    }
    return true;
  }

  // Prefix scans (ReadOptions::prefix_same_as_start), where the engine has
  // them and the round draws a prefix extractor.
  bool PrefixScopedScans() const {
    return w_->drawn->options.prefix_extractor != nullptr;
  }
  void SetPrefixSameAsStart(ReadOptions* ro, bool on) const {
    ro->prefix_same_as_start = on;
  }
  // Whether a scan confined to the prefix of key `start` (its Seek target)
  // yields key `k`: all keys when `start` has no prefix (total order).
  bool SamePrefix(uint32_t start, uint32_t k) const {
    const PrefixExtractor& x = *w_->drawn->options.prefix_extractor;
    const std::string a = KeyOf(start), b = KeyOf(k);
    if (!x.InDomain(a)) return true;
    return x.InDomain(b) && x.Transform(a) == x.Transform(b);
  }

  // Take a snapshot and read at it, or read again at the held one: the
  // answers must not change, whatever was written, flushed or compacted
  // since. Scans at the snapshot must agree with point reads at it.
  bool DoSnapshot() {
    ReadOptions ro = RandomReadOptions();
    if (held_.snapshot == nullptr) {
      held_.snapshot = db_->GetSnapshot();
      ro.snapshot = held_.snapshot;
      held_.keys = PickKeys(8);
      held_.values.clear();
      for (uint32_t k : held_.keys) {
        std::string v;
        absl::Status s = db_->Get(ro, KeyOf(k), &v);
        if (!s.ok() && !absl::IsNotFound(s)) return Check(s, "snapshot get");
        held_.values.push_back(s.ok() ? std::optional<std::string>(v)
                                      : std::nullopt);
      }
      held_.lo = PickKey();
      held_.hi = std::min<uint32_t>(
          n_, held_.lo + static_cast<uint32_t>(rng_.Range(1, 100)));
      auto scan =
          Scan(ro, held_.lo, held_.hi, true, rng_.OneIn(2), "snapshot scan");
      if (!scan.has_value()) return false;
      held_.scan.clear();
      for (auto& [index, value] : *scan) {
        held_.scan.emplace_back(KeyOf(index), std::move(value));
      }
      // The scan and point reads at the same snapshot agree.
      size_t pos = 0;
      for (uint32_t k = held_.lo; k < held_.hi; ++k) {
        std::string v;
        absl::Status s = db_->Get(ro, KeyOf(k), &v);
        if (!s.ok() && !absl::IsNotFound(s)) return Check(s, "snapshot get");
        const bool in_scan =
            pos < held_.scan.size() && held_.scan[pos].first == KeyOf(k);
        if (s.ok() != in_scan || (in_scan && held_.scan[pos].second != v)) {
          if (Crashed()) return false;
          w_->reporter->Fail(
              Verdict::kWrong, k, "snapshot scan vs point read",
              absl::StrCat("scan ", in_scan ? "has" : "lacks", " the key, Get ",
                           s.ok() ? "finds it" : "does not"));
        }
        if (in_scan) ++pos;
      }
      return true;
    }
    ro.snapshot = held_.snapshot;
    for (size_t i = 0; i < held_.keys.size(); ++i) {
      std::string v;
      absl::Status s = db_->Get(ro, KeyOf(held_.keys[i]), &v);
      if (!s.ok() && !absl::IsNotFound(s)) return Check(s, "snapshot reread");
      const std::optional<std::string> now =
          s.ok() ? std::optional<std::string>(v) : std::nullopt;
      if (now != held_.values[i]) {
        if (Crashed()) return false;
        w_->reporter->Fail(
            Verdict::kWrong, held_.keys[i], "snapshot reread",
            absl::StrCat("the value at the snapshot changed: first read ",
                         Show(held_.values[i]), ", now ", Show(now)));
      }
    }
    const bool forward = rng_.OneIn(2);
    auto scan =
        Scan(ro, held_.lo, held_.hi, forward, rng_.OneIn(2), "snapshot rescan");
    if (!scan.has_value()) return false;
    if (!forward) std::reverse(scan->begin(), scan->end());
    bool same = scan->size() == held_.scan.size();
    for (size_t i = 0; same && i < scan->size(); ++i) {
      same = KeyOf((*scan)[i].first) == held_.scan[i].first &&
             (*scan)[i].second == held_.scan[i].second;
    }
    if (!same && !Crashed()) {
      w_->reporter->Fail(Verdict::kWrong, held_.lo, "snapshot rescan",
                         "a scan at the snapshot changed");
    }
    if (rng_.OneIn(3)) {
      db_->ReleaseSnapshot(held_.snapshot);
      held_.snapshot = nullptr;
    }
    return true;
  }

  bool DoFlushOrCompact(bool flush) {
    const uint64_t start = state_->TicketNow();
    absl::Status s;
    if (flush) {
      s = db_->Flush();
    } else {
      // A random range, sometimes open at either end.
      const uint32_t a = PickKey();
      const uint32_t b =
          std::min<uint32_t>(n_, a + static_cast<uint32_t>(rng_.Range(1, n_)));
      const std::string begin = KeyOf(a), end = KeyOf(b);
      s = db_->CompactRange(rng_.OneIn(5) ? nullptr : &begin,
                            rng_.OneIn(5) ? nullptr : &end);
    }
    if (!Check(s, flush ? "flush" : "compact_range")) return false;
    // doc/durability.md: both make every write acknowledged before them
    // durable.
    state_->SyncPoint(start);
    return true;
  }

  // Write a table of up to 40 keys (a quarter deletions) with
  // TableFileWriter and ingest it: one atomic, durable write of all of them.
  bool DoIngest() {
    const uint32_t stride = static_cast<uint32_t>(rng_.Range(1, 3));
    const uint32_t first = PickKey();
    const size_t count = rng_.Range(1, 40);
    std::vector<uint32_t> keys;
    for (uint32_t k = first; k < n_ && keys.size() < count; k += stride) {
      keys.push_back(k);
    }
    auto locks = Lock(keys);
    const std::string path = absl::StrCat(w_->scratch_dir, "/ingest-", thread_,
                                          "-", ingests_++, ".sst");
    Options options = w_->drawn->options;
    options.env = w_->env;
    auto writer = TableFileWriter::Open(options, path);
    if (!Check(writer.status(), "ingest: open table writer")) return false;
    std::vector<uint64_t> versions;
    std::vector<bool> deleted;
    for (uint32_t k : keys) {
      const bool del = rng_.OneIn(4);
      versions.push_back(state_->BeginWrite(k, del));
      deleted.push_back(del);
      absl::Status s =
          del ? (*writer)->Delete(KeyOf(k))
              : (*writer)->Put(KeyOf(k), ValueOf(k, versions.back()));
      if (!Check(s, "ingest: table writer")) return false;
    }
    if (!Check((*writer)->Finish().status(), "ingest: finish table")) {
      return false;
    }
    IngestOptions io;
    io.move_files = rng_.OneIn(2);
    io.verify_checksums = rng_.OneIn(2);
    const uint64_t start = state_->TicketNow();
    if (!Check(db_->IngestExternalFiles({path}, io), "ingest")) return false;
    // Durable on return, with every write acknowledged before it.
    Ack(keys, versions, deleted, true, start);
    // The caller may remove its file (a link or a copy is in the database).
    (void)w_->env->RemoveFile(path);
    return true;
  }

  // Checkpoint, open it as a database and check every key: it holds every
  // write acknowledged before the call and possibly racing ones.
  bool DoCheckpoint() {
    std::vector<KeyWrite> before(n_);
    for (uint32_t k = 0; k < n_; ++k) before[k] = state_->LastAcked(k);
    const std::string dir = absl::StrCat(w_->scratch_dir, "/checkpoint-",
                                         thread_, "-", checkpoints_++);
    if (!Check(db_->CreateCheckpoint(dir), "checkpoint")) return false;
    std::vector<KeyWindow> windows(n_);
    for (uint32_t k = 0; k < n_; ++k) {
      windows[k] = state_->WindowSince(k, before[k]);
    }
    Options options = w_->drawn->options;
    options.env = w_->env;
    auto copy = DB::Open(options, dir);
    if (!Check(copy.status(), "open checkpoint")) return false;
    for (uint32_t k = 0; k < n_; ++k) {
      std::string v;
      absl::Status s = (*copy)->Get(ReadOptions(), KeyOf(k), &v);
      if (!s.ok() && !absl::IsNotFound(s)) return Check(s, "checkpoint get");
      Judge(k, s.ok() ? std::optional<std::string>(v) : std::nullopt,
            windows[k], "checkpoint");
    }
    // The copy stays until the end of the round (a power cut may still
    // need its files); the round removes the scratch directory.
    return true;
  }

  Workload* const w_;
  DB* const db_;
  ExpectedState* const state_;
  const uint32_t n_;
  const int thread_;
  Rng rng_;
  uint64_t total_weight_ = 0;
  HeldSnapshot held_;
  int ingests_ = 0;
  int checkpoints_ = 0;
};

}  // namespace

void RunWorker(Workload* w, int thread) { Worker(w, thread).Run(); }

}  // namespace sift::stress
