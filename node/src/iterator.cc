#include "iterator.h"

#include <string>
#include <utility>

#include "database.h"

namespace sift_node {

// One read of a run of entries. Holds a reference to the iterator's
// JavaScript object, so the iterator outlives the read (the DbWorker base
// holds the database).
class NextWorker final : public DbWorker {
 public:
  NextWorker(Napi::Env env, Database* db, Iterator* it, uint32_t size)
      : DbWorker(env, db, "sift-level.next"),
        it_(it),
        it_ref_(Napi::Persistent(it->Value())),
        size_(size) {}

 private:
  void Execute() override { status_ = it_->Fill(sift_db_, size_); }
  void BeforeSettle() override {
    it_->busy_ = false;
    if (it_->close_pending_) it_->Detach();
  }
  Napi::Value Result(Napi::Env env) override {
    // The entries live in the iterator's buffers, which a close after the
    // read has not touched (Detach releases only the sift objects).
    return it_->Entries(env);
  }

  Iterator* const it_;
  Napi::ObjectReference it_ref_;
  const uint32_t size_;
};

Napi::Function Iterator::Init(Napi::Env env) {
  return DefineClass(env, "Iterator",
                     {InstanceMethod<&Iterator::Seek>("seek"),
                      InstanceMethod<&Iterator::Next>("next"),
                      InstanceMethod<&Iterator::Close>("close")});
}

// new Iterator(database, options, snapshotHandle | null, keys, values):
// options as abstract-level passes them to _iterator/_keys/_values; keys and
// values say which halves of each entry to read.
Iterator::Iterator(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<Iterator>(info) {
  Napi::Env env = info.Env();
  database_ = info[0].IsObject() ? Database::Unwrap(info[0].As<Napi::Object>())
                                 : nullptr;
  if (database_ == nullptr || database_->db() == nullptr) {
    database_ = nullptr;
    CodedError(env, "LEVEL_DATABASE_NOT_OPEN", "Database is not open")
        .ThrowAsJavaScriptException();
    return;
  }
  if (!info[1].IsObject()) {
    database_ = nullptr;
    Napi::TypeError::New(env, "options must be an object")
        .ThrowAsJavaScriptException();
    return;
  }
  Napi::Object o = info[1].As<Napi::Object>();
  if (!ReadRangeOptions(o, &lower_, &upper_)) {
    database_ = nullptr;
    CodedError(env, "LEVEL_INVALID_KEY",
               "range options must be strings or Uint8Arrays")
        .ThrowAsJavaScriptException();
    return;
  }
  reverse_ = o.Get("reverse").ToBoolean().Value();
  keys_ = info[3].ToBoolean().Value();
  values_ = info[4].ToBoolean().Value();
  keys_as_string_ =
      o.Get("keyEncoding").StrictEquals(Napi::String::New(env, "utf8"));
  values_as_string_ =
      o.Get("valueEncoding").StrictEquals(Napi::String::New(env, "utf8"));
  Napi::Value fill = o.Get("fillCache");
  fill_cache_ = !fill.IsBoolean() || fill.As<Napi::Boolean>().Value();
  if (Napi::Value limit = o.Get("limit"); limit.IsNumber()) {
    double l = limit.As<Napi::Number>().DoubleValue();
    limit_ = l < 0 || l > 9e15 ? -1 : static_cast<int64_t>(l);
  }
  // The snapshot is taken now: the iterator must not see writes made after
  // its creation, though its first read runs later.
  if (info[2].IsObject()) {
    SnapshotHandle* handle = SnapshotHandle::Unwrap(info[2].As<Napi::Object>());
    if (handle == nullptr || handle->snapshot() == nullptr) {
      database_ = nullptr;
      CodedError(env, "LEVEL_SNAPSHOT_NOT_OPEN", "Snapshot is not open")
          .ThrowAsJavaScriptException();
      return;
    }
    snapshot_ = handle->snapshot();
  } else {
    snapshot_ = database_->ImplicitSnapshot();
  }
  database_->Register(this);
}

Iterator::~Iterator() { Detach(); }

void Iterator::Detach() {
  it_.reset();
  snapshot_.reset();
  if (database_ != nullptr) database_->Unregister(this);
  database_ = nullptr;
}

Napi::Value Iterator::Seek(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string target;
  if (!ReadBytes(info[0], &target)) {
    CodedError(env, "LEVEL_INVALID_KEY",
               "target must be a string or a Uint8Array")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // Positioning happens in the next read, off this thread.
  seek_target_ = std::move(target);
  positioned_ = false;
  ended_ = false;
  return env.Undefined();
}

Napi::Value Iterator::Next(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (database_ == nullptr || database_->db() == nullptr) {
    return Rejected(env, CodedError(env, "LEVEL_ITERATOR_NOT_OPEN",
                                    "Iterator is not open"));
  }
  if (busy_) {
    return Rejected(env,
                    CodedError(env, "LEVEL_ITERATOR_BUSY", "Iterator is busy"));
  }
  double size =
      info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 1;
  // A run longer than this is split by the caller's loop, not held at once.
  constexpr double kMaxRun = 1u << 30;
  if (!(size >= 1)) size = 1;
  if (size > kMaxRun) size = kMaxRun;
  busy_ = true;
  return (new NextWorker(env, database_, this, static_cast<uint32_t>(size)))
      ->Start();
}

Napi::Value Iterator::Close(const Napi::CallbackInfo& info) {
  // abstract-level closes only when no read is in flight; should a read be
  // running anyway, it releases the iterator when it completes.
  if (busy_) {
    close_pending_ = true;
  } else {
    Detach();
  }
  return info.Env().Undefined();
}

void Iterator::Position() {
  if (seek_target_) {
    const std::string& target = *seek_target_;
    it_->Seek(target);
    if (reverse_) {
      // The last entry at or before target.
      if (!it_->Valid()) {
        if (it_->status().ok()) it_->SeekToLast();
      } else if (it_->key() > std::string_view(target)) {
        it_->Prev();
      }
    }
    seek_target_.reset();
  } else if (reverse_) {
    it_->SeekToLast();
  } else {
    it_->SeekToFirst();
  }
  positioned_ = true;
}

absl::Status Iterator::Fill(sift::DB* db, uint32_t size) {
  arena_.clear();
  ends_.clear();
  if (ended_) return absl::OkStatus();
  if (it_ == nullptr) {
    sift::ReadOptions ro;
    ro.snapshot = snapshot_.get();
    ro.fill_cache = fill_cache_;
    if (lower_) ro.iterate_lower_bound = *lower_;
    if (upper_) ro.iterate_upper_bound = *upper_;
    it_ = db->NewIterator(ro);
  }
  if (!positioned_) Position();
  for (uint32_t n = 0; n < size; n++) {
    if ((limit_ >= 0 && count_ >= limit_) || !it_->Valid()) {
      ended_ = true;
      break;
    }
    if (keys_) {
      arena_.append(it_->key());
      ends_.push_back(arena_.size());
    }
    if (values_) {
      arena_.append(it_->value());
      ends_.push_back(arena_.size());
    }
    count_++;
    if (reverse_) {
      it_->Prev();
    } else {
      it_->Next();
    }
  }
  return it_->status();
}

Napi::Value Iterator::Entries(Napi::Env env) const {
  const size_t per_entry = (keys_ ? 1 : 0) + (values_ ? 1 : 0);
  const size_t entries = per_entry == 0 ? 0 : ends_.size() / per_entry;
  Napi::Array out = Napi::Array::New(env, entries);
  std::string_view arena(arena_);
  size_t begin = 0, piece = 0;
  auto next_piece = [&](bool as_string) {
    size_t end = ends_[piece++];
    Napi::Value v = BytesToJs(env, arena.substr(begin, end - begin), as_string);
    begin = end;
    return v;
  };
  for (uint32_t i = 0; i < entries; i++) {
    if (keys_ && values_) {
      Napi::Array pair = Napi::Array::New(env, 2);
      pair.Set(0u, next_piece(keys_as_string_));
      pair.Set(1u, next_piece(values_as_string_));
      out.Set(i, pair);
    } else {
      out.Set(i, next_piece(keys_ ? keys_as_string_ : values_as_string_));
    }
  }
  return out;
}

}  // namespace sift_node
