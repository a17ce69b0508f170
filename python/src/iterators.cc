// plyvel's Iterator and RawIterator over sift::Iterator.
#include <algorithm>
#include <utility>

#include "handles.h"

namespace sift_python {
namespace {

// The smallest key after every key starting with `prefix`: the prefix with
// its last byte below 0xff incremented and the rest dropped; nullopt if the
// prefix is all 0xff bytes (no upper end).
std::optional<std::string> PrefixSuccessor(std::string prefix) {
  while (!prefix.empty()) {
    unsigned char last = static_cast<unsigned char>(prefix.back());
    if (last != 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::nullopt;
}

py::bytes Bytes(std::string_view s) { return py::bytes(s.data(), s.size()); }

}  // namespace

RangeIterator::RangeIterator(py::object db_obj, py::object snapshot_obj,
                             std::optional<std::string> db_prefix,
                             IteratorArgs args)
    : IteratorBase(std::move(db_obj), std::move(snapshot_obj)),
      reverse_(args.reverse),
      include_key_(args.include_key),
      include_value_(args.include_value) {
  if (args.prefix && (args.start || args.stop)) {
    throw py::type_error(
        "'prefix' cannot be used together with 'start' or 'stop'");
  }
  if (db_prefix) {  // an iterator of a PrefixedDB: every key has db_prefix
    db_prefix_len_ = db_prefix->size();
    if (args.prefix) {
      args.prefix = *db_prefix + *args.prefix;
    } else {
      if (args.start) {
        args.start = *db_prefix + *args.start;
      } else {
        args.start = *db_prefix;
        args.include_start = true;
      }
      if (args.stop) {
        args.stop = *db_prefix + *args.stop;
      } else {
        args.stop = PrefixSuccessor(*db_prefix);
        args.include_stop = false;
      }
    }
    db_prefix_ = std::move(db_prefix);
  }
  if (args.prefix) {
    args.start = *args.prefix;
    args.stop = PrefixSuccessor(*args.prefix);
    args.include_start = true;
    args.include_stop = false;
  }
  start_ = std::move(args.start);
  stop_ = std::move(args.stop);
  include_start_ = args.include_start;
  include_stop_ = args.include_stop;
  state_ = reverse_ ? State::kAfterStop : State::kBeforeStart;

  // The range as the engine's iteration bounds too, so that it never reads
  // tables or blocks outside it. The checks above the engine stay: they
  // handle an excluded start and a reverse iterator's first step.
  sift::ReadOptions options;
  options.verify_checksums = args.verify_checksums;
  options.fill_cache = args.fill_cache;
  if (start_) options.iterate_lower_bound = *start_;
  if (stop_) {
    upper_bound_ = *stop_;
    if (include_stop_) upper_bound_->push_back('\0');
    options.iterate_upper_bound = *upper_bound_;
  }
  Open(options);
}

bool RangeIterator::PastStop(std::string_view key) const {
  if (!stop_) return false;
  int c = key.compare(*stop_);
  return include_stop_ ? c > 0 : c >= 0;
}

bool RangeIterator::BeforeStart(std::string_view key) const {
  if (!start_) return false;
  int c = key.compare(*start_);
  return include_start_ ? c < 0 : c <= 0;
}

py::object RangeIterator::MakeEntry(std::string_view key,
                                    std::string_view value) const {
  if (include_key_ && include_value_) {
    py::bytes k = Bytes(key.substr(db_prefix_len_));
    py::bytes v = Bytes(value);
    PyObject* pair = PyTuple_New(2);
    if (pair == nullptr) throw py::error_already_set();
    PyTuple_SET_ITEM(pair, 0, k.release().ptr());
    PyTuple_SET_ITEM(pair, 1, v.release().ptr());
    return py::reinterpret_steal<py::object>(pair);
  }
  if (include_key_) return Bytes(key.substr(db_prefix_len_));
  if (include_value_) return Bytes(value);
  return py::none();
}

py::object RangeIterator::Current() const {
  return MakeEntry(it()->key(), it()->value());
}

std::optional<py::object> RangeIterator::Next() {
  Use use(*this);
  return reverse_ ? Backward() : Forward();
}

std::optional<py::object> RangeIterator::Prev() {
  Use use(*this);
  return reverse_ ? Forward() : Backward();
}

// The entry after the last one returned (the first of the range from
// kBeforeStart, the one seek() found from kPositioned).
std::optional<py::object> RangeIterator::Forward() {
  if (!ahead_.empty() && !ahead_forward_) DropReadAhead();
  switch (state_) {
    case State::kAfterStop:
      return std::nullopt;
    case State::kBeforeStart:
      Move([this](sift::Iterator* it) {
        if (start_) {
          it->Seek(*start_);
          if (!include_start_ && it->Valid() && it->key() == *start_) {
            it->Next();
          }
        } else {
          it->SeekToFirst();
        }
      });
      break;
    case State::kPositioned:
      if (!include_start_ && start_ && it()->key() == *start_) {
        Move([](sift::Iterator* it) { it->Next(); });
      }
      break;
    case State::kInBetween:
      return Step(/*forward=*/true);
  }
  CheckStatus();
  // Before start only when the range is empty (start after stop).
  if (!it()->Valid() || PastStop(it()->key()) || BeforeStart(it()->key())) {
    state_ = State::kAfterStop;
    return std::nullopt;
  }
  state_ = State::kInBetween;
  return Current();
}

// The entry returned last (kInBetween), the one before seek()'s position
// (kPositioned) or the last of the range (kAfterStop); then one step back.
std::optional<py::object> RangeIterator::Backward() {
  if (!ahead_.empty() && ahead_forward_) DropReadAhead();
  switch (state_) {
    case State::kBeforeStart:
      return std::nullopt;
    case State::kInBetween:
      return Step(/*forward=*/false);
    case State::kPositioned:
      Move([](sift::Iterator* it) { it->Prev(); });
      break;
    case State::kAfterStop:
      Move([this](sift::Iterator* it) {
        if (!stop_) {
          it->SeekToLast();
          return;
        }
        it->Seek(*stop_);
        if (!it->Valid()) {
          if (it->status().ok()) it->SeekToLast();
        } else if (PastStop(it->key())) {
          it->Prev();
        }
      });
      break;
  }
  CheckStatus();
  if (!it()->Valid() || BeforeStart(it()->key())) {
    state_ = State::kBeforeStart;
    return std::nullopt;
  }
  py::object out = Current();
  Move([](sift::Iterator* it) { it->Prev(); });
  CheckStatus();
  state_ = (!it()->Valid() || BeforeStart(it()->key())) ? State::kBeforeStart
                                                        : State::kInBetween;
  return out;
}

// From kInBetween: forward, the entry after the cursor; backward, the
// entry before it (where the engine iterator is), then a step back. Both
// come from a run read ahead in that direction.
std::optional<py::object> RangeIterator::Step(bool forward) {
  if (ahead_pos_ == ahead_.size()) {
    const bool had_run = !ahead_.empty();
    const bool ended = ahead_ended_;
    ahead_.clear();
    ahead_pos_ = 0;
    ahead_ended_ = false;
    if (had_run && !ended) {
      ahead_limit_ = std::min(ahead_limit_ * 2, kMaxReadAhead);
    }
    if (!ended) Fill(forward);
    if (ahead_.empty()) {  // nothing left in this direction
      ahead_ended_ = false;
      CheckStatus();
      state_ = forward ? State::kAfterStop : State::kBeforeStart;
      return std::nullopt;
    }
  }
  const Entry& e = ahead_[ahead_pos_++];
  return MakeEntry(EntryKey(e), EntryValue(e));
}

void RangeIterator::Fill(bool forward) {
  ahead_forward_ = forward;
  const size_t limit = ahead_limit_;
  ahead_bytes_.clear();
  Move([this, forward, limit](sift::Iterator* it) {
    while (ahead_.size() < limit && ahead_bytes_.size() < kMaxReadAheadBytes) {
      if (forward) it->Next();
      // Before start, going forward, only when the range is empty.
      if (!it->Valid() || PastStop(it->key()) || BeforeStart(it->key())) {
        ahead_ended_ = true;
        return;
      }
      ahead_.push_back(
          {ahead_bytes_.size(), it->key().size(), it->value().size()});
      ahead_bytes_.append(it->key());
      ahead_bytes_.append(it->value());
      if (!forward) it->Prev();
    }
  });
}

void RangeIterator::DropReadAhead() {
  // The entry just before the cursor: forward, the last one served (one
  // always is: a run is served from as soon as it is read); backward, the
  // first one not served, or where the engine stopped if all were.
  std::optional<std::string> target;
  if (ahead_forward_) {
    target = std::string(EntryKey(ahead_[ahead_pos_ - 1]));
  } else if (ahead_pos_ < ahead_.size()) {
    target = std::string(EntryKey(ahead_[ahead_pos_]));
  }
  ahead_.clear();
  ahead_pos_ = 0;
  ahead_ended_ = false;
  ahead_limit_ = 1;
  if (target) {
    Move([&target](sift::Iterator* it) { it->Seek(*target); });
  }
  CheckStatus();
  if (!it()->Valid() || BeforeStart(it()->key())) {
    state_ = State::kBeforeStart;
  }
}

void RangeIterator::ResetReadAhead() {
  ahead_.clear();
  ahead_pos_ = 0;
  ahead_ended_ = false;
  ahead_limit_ = 1;
}

void RangeIterator::SeekToStart() {
  Use use(*this);
  ResetReadAhead();
  state_ = State::kBeforeStart;
}

void RangeIterator::SeekToStop() {
  Use use(*this);
  ResetReadAhead();
  state_ = State::kAfterStop;
}

void RangeIterator::Seek(py::handle target) {
  Use use(*this);
  BytesArg arg(target, "target", false);
  ResetReadAhead();
  std::string t = db_prefix_.value_or("");
  t.append(arg.view());
  // Stay within the range.
  if (start_ && t < *start_) t = *start_;
  if (stop_ && t > *stop_) t = *stop_;
  Move([&t](sift::Iterator* it) { it->Seek(t); });
  CheckStatus();
  state_ = it()->Valid() ? State::kPositioned : State::kAfterStop;
}

// ---- RawIterator ----

RawIterator::RawIterator(py::object db_obj, py::object snapshot_obj,
                         bool verify_checksums, bool fill_cache,
                         std::optional<std::string> lower_bound,
                         std::optional<std::string> upper_bound,
                         bool prefix_same_as_start)
    : IteratorBase(std::move(db_obj), std::move(snapshot_obj)),
      lower_bound_(std::move(lower_bound)),
      upper_bound_(std::move(upper_bound)) {
  sift::ReadOptions options;
  options.verify_checksums = verify_checksums;
  options.fill_cache = fill_cache;
  options.prefix_same_as_start = prefix_same_as_start;
  if (lower_bound_) options.iterate_lower_bound = *lower_bound_;
  if (upper_bound_) options.iterate_upper_bound = *upper_bound_;
  Open(options);
}

bool RawIterator::Valid() {
  Use use(*this);
  return it()->Valid();
}

void RawIterator::SeekToFirst() {
  Use use(*this);
  Move([](sift::Iterator* it) { it->SeekToFirst(); });
  CheckStatus();
}

void RawIterator::SeekToLast() {
  Use use(*this);
  Move([](sift::Iterator* it) { it->SeekToLast(); });
  CheckStatus();
}

void RawIterator::Seek(py::handle target) {
  Use use(*this);
  BytesArg arg(target, "target", false);
  Move([&arg](sift::Iterator* it) { it->Seek(arg.view()); });
  CheckStatus();
}

void RawIterator::Next() {
  Use use(*this);
  if (!it()->Valid()) RaiseIteratorInvalid("iterator is not positioned");
  Move([](sift::Iterator* it) { it->Next(); });
  CheckStatus();
}

void RawIterator::Prev() {
  Use use(*this);
  if (!it()->Valid()) RaiseIteratorInvalid("iterator is not positioned");
  Move([](sift::Iterator* it) { it->Prev(); });
  CheckStatus();
}

py::bytes RawIterator::Key() {
  Use use(*this);
  if (!it()->Valid()) RaiseIteratorInvalid("iterator is not positioned");
  return Bytes(it()->key());
}

py::bytes RawIterator::Value() {
  Use use(*this);
  if (!it()->Valid()) RaiseIteratorInvalid("iterator is not positioned");
  return Bytes(it()->value());
}

py::tuple RawIterator::Item() {
  Use use(*this);
  if (!it()->Valid()) RaiseIteratorInvalid("iterator is not positioned");
  return py::make_tuple(Bytes(it()->key()), Bytes(it()->value()));
}

}  // namespace sift_python
