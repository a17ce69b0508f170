#include "tools/sift_stress/verify.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "tools/sift_stress/key_value.h"

namespace sift::stress {

void Reporter::Print(const std::string& line) {
  std::lock_guard<std::mutex> l(mu_);
  if (printed_++ < 30) std::fprintf(stderr, "%s\n", line.c_str());
  if (exit_) {
    std::fflush(stderr);
    std::_Exit(3);
  }
}

void Reporter::Fail(Verdict verdict, uint32_t index, std::string_view context,
                    std::string_view why) {
  counts_[static_cast<int>(verdict)]++;
  failed_ = true;
  Print(absl::StrCat("sift_stress: FAILED (", VerdictName(verdict),
                     ") seed=", seed_, " key=", KeyOf(index), " in ",
                     Av(context), ": ", Av(why)));
}

void Reporter::Error(std::string_view context, const absl::Status& status) {
  errors_++;
  failed_ = true;
  Print(absl::StrCat("sift_stress: FAILED (error) seed=", seed_, " in ",
                     Av(context), ": ", status.ToString()));
}

std::optional<std::string> ReadKey(DB* db, const ReadOptions& ro,
                                   uint32_t index, std::string_view context,
                                   Reporter* reporter) {
  std::string value;
  absl::Status s = db->Get(ro, KeyOf(index), &value);
  if (s.ok()) return value;
  if (!absl::IsNotFound(s)) reporter->Error(context, s);
  return std::nullopt;
}

std::string Show(const std::optional<std::string>& v) {
  if (!v.has_value()) return "absent";
  return absl::StrCat("\"", v->substr(0, 24), v->size() > 24 ? "..." : "",
                      "\"");
}

namespace {

// A scan agrees with the point reads `gets` over [lo, hi): each key at
// most once, in order, with the value Get gave; every present key listed.
// `scan` holds the scanned (index, value) pairs in scan order.
void CheckScan(const std::vector<std::pair<uint32_t, std::string>>& scan,
               bool forward, uint32_t lo, uint32_t hi,
               const std::vector<std::optional<std::string>>& gets,
               std::string_view context, Reporter* reporter) {
  std::vector<bool> seen(hi - lo, false);
  for (size_t i = 0; i < scan.size(); ++i) {
    const auto& [index, value] = scan[i];
    if (i > 0 &&
        (forward ? scan[i - 1].first >= index : scan[i - 1].first <= index)) {
      reporter->Fail(
          Verdict::kWrong, index, context,
          absl::StrCat("out of order after ", KeyOf(scan[i - 1].first)));
      return;
    }
    if (index < lo || index >= hi) {
      reporter->Fail(Verdict::kWrong, index, context,
                     absl::StrCat("outside the scanned range [", KeyOf(lo),
                                  ", ", KeyOf(hi), ")"));
      continue;
    }
    seen[index - lo] = true;
    if (gets[index] != value) {
      reporter->Fail(Verdict::kWrong, index, context,
                     absl::StrCat("iterator found ", Show(value),
                                  ", point read found ", Show(gets[index])));
    }
  }
  for (uint32_t k = lo; k < hi; ++k) {
    if (!seen[k - lo] && gets[k].has_value()) {
      reporter->Fail(Verdict::kWrong, k, context,
                     absl::StrCat("iterator found absent, point read found ",
                                  Show(gets[k])));
    }
  }
}

// All or nothing per batch. A batch is known to have committed when a key
// it put holds exactly the batch's version (versions are per key and never
// reused). Then each of its keys must hold the batch's write or a later
// one: a key holding an older version, or absent where the batch put it and
// nothing was begun after, lost its part of a committed batch. (An absent
// key the batch deleted, or one written again later, proves nothing either
// way and is not judged here.)
// Returns the number of batches known to have committed.
uint64_t CheckBatches(const ExpectedState& state, CrashKind kind,
                      const std::vector<KeyWrite>& found, Reporter* reporter) {
  uint64_t committed_batches = 0;
  for (const std::vector<BatchWrite>& batch : state.Batches()) {
    const BatchWrite* committed = nullptr;
    for (const BatchWrite& w : batch) {
      const KeyWrite& f = found[w.key];
      if (w.write.present() && f.present() && f.version == w.write.version) {
        committed = &w;
        break;
      }
    }
    if (committed == nullptr) continue;
    ++committed_batches;
    for (const BatchWrite& w : batch) {
      const KeyWrite& f = found[w.key];
      const bool older = f.present() && f.version < w.write.version;
      const bool gone =
          !f.present() && w.write.present() &&
          state.WindowAfterCrash(w.key, kind).max_started == w.write.version;
      if (!older && !gone) continue;
      reporter->Fail(
          Verdict::kLost, w.key, "verify batches (all or nothing)",
          absl::StrCat(
              "a batch of ", batch.size(), " writes committed (",
              KeyOf(committed->key), " holds its version ",
              committed->write.version, ") but this key holds ",
              f.present() ? absl::StrCat("version ", f.version)
                          : std::string("nothing"),
              ", not the batch's ",
              w.write.present()
                  ? absl::StrCat("version ", w.write.version)
                  : absl::StrCat("delete (version ", w.write.version, ")")));
    }
  }
  return committed_batches;
}

}  // namespace

uint64_t VerifyAfterCrash(DB* db, const ExpectedState& state, CrashKind kind,
                          Rng* rng, Reporter* reporter,
                          std::vector<KeyWrite>* found,
                          uint64_t* batches_checked) {
  const uint32_t n = state.num_keys();
  ReadOptions ro;
  ro.fill_cache = rng->OneIn(2);
  std::vector<std::optional<std::string>> gets(n);
  found->assign(n, KeyWrite{});
  for (uint32_t k = 0; k < n; ++k) {
    gets[k] = ReadKey(db, ro, k, "verify get", reporter);
    std::string why;
    const Verdict v = Judge(k, gets[k], state.WindowAfterCrash(k, kind), &why);
    if (v != Verdict::kOk) reporter->Fail(v, k, "verify after crash", why);
    uint64_t version = 0;
    if (gets[k].has_value() && ParseValue(k, *gets[k], &version)) {
      (*found)[k] = KeyWrite{version, false};
    }
  }

  *batches_checked += CheckBatches(state, kind, *found, reporter);

  // Across keys, after a power loss: no write survives that began after an
  // acknowledged write that was lost.
  if (kind == CrashKind::kPowerLoss) {
    uint32_t lost_key = 0, later_key = 0;
    OrderFacts lost, later;
    for (uint32_t k = 0; k < n; ++k) {
      const OrderFacts f = state.OrderFactsOf(
          k, gets[k].has_value() ? (*found)[k] : KeyWrite{0, true});
      if (f.lost_ticket < lost.lost_ticket) {
        lost = f;
        lost_key = k;
      }
      if (f.found_begin > later.found_begin) {
        later = f;
        later_key = k;
      }
    }
    if (lost.lost_ticket <= later.found_begin) {
      reporter->Fail(
          Verdict::kLost, lost_key, "verify write order (prefix)",
          absl::StrCat("acknowledged version ", lost.lost_version, " (ticket ",
                       lost.lost_ticket, ") is lost, but ", KeyOf(later_key),
                       " holds a write begun after it (", "begin ticket ",
                       later.found_begin, ")"));
    }
  }

  // A full forward scan: also catches keys that are not the soak's.
  std::vector<std::pair<uint32_t, std::string>> scan;
  {
    std::unique_ptr<Iterator> it = db->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      uint32_t index = 0;
      if (!ParseKey(it->key(), &index) || index >= n) {
        reporter->Error("verify full scan",
                        absl::DataLossError(absl::StrCat(
                            "a key the soak never wrote: ", Av(it->key()))));
        continue;
      }
      scan.emplace_back(index, std::string(it->value()));
    }
    if (!it->status().ok()) reporter->Error("verify full scan", it->status());
  }
  CheckScan(scan, true, 0, n, gets, "verify full scan vs point reads",
            reporter);

  // A bounded backward scan of a random range.
  const uint32_t lo = static_cast<uint32_t>(rng->Uniform(n));
  const uint32_t hi =
      std::min<uint32_t>(n, lo + static_cast<uint32_t>(rng->Range(1, 2000)));
  const std::string lower = KeyOf(lo), upper = KeyOf(hi);
  ReadOptions bounded = ro;
  bounded.iterate_lower_bound = lower;
  bounded.iterate_upper_bound = upper;
  scan.clear();
  {
    std::unique_ptr<Iterator> it = db->NewIterator(bounded);
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      uint32_t index = 0;
      if (ParseKey(it->key(), &index)) {
        scan.emplace_back(index, std::string(it->value()));
      }
    }
    if (!it->status().ok())
      reporter->Error("verify backward scan", it->status());
  }
  CheckScan(scan, false, lo, hi, gets, "verify bounded backward scan",
            reporter);

  // MultiGet of a sample, duplicates included.
  std::vector<std::string> keys;
  std::vector<uint32_t> indexes;
  for (int i = 0; i < 64; ++i) {
    indexes.push_back(static_cast<uint32_t>(rng->Uniform(n)));
    keys.push_back(KeyOf(indexes.back()));
  }
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  std::vector<absl::Status> statuses = db->MultiGet(ro, views, &values);
  for (size_t i = 0; i < views.size(); ++i) {
    std::optional<std::string> got;
    if (statuses[i].ok()) {
      got = values[i];
    } else if (!absl::IsNotFound(statuses[i])) {
      reporter->Error("verify multiget", statuses[i]);
    }
    if (got != gets[indexes[i]]) {
      reporter->Fail(Verdict::kWrong, indexes[i], "verify multiget",
                     absl::StrCat("MultiGet found ", Show(got), ", Get found ",
                                  Show(gets[indexes[i]])));
    }
  }
  return n;
}

}  // namespace sift::stress
