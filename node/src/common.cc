#include "common.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "database.h"

namespace sift_node {

SnapshotRef TakeSnapshot(sift::DB* db) {
  // The deleter may run on a pool thread; ReleaseSnapshot is thread-safe.
  return SnapshotRef(db->GetSnapshot(),
                     [db](const sift::Snapshot* s) { db->ReleaseSnapshot(s); });
}

bool ViewBytes(const Napi::Value& value, std::string_view* out) {
  if (value.IsTypedArray() || value.IsDataView()) {
    napi_value v = value;
    void* data = nullptr;
    size_t length = 0;
    if (value.IsTypedArray()) {
      napi_typedarray_type type;
      size_t elements = 0;
      if (napi_get_typedarray_info(value.Env(), v, &type, &elements, &data,
                                   nullptr, nullptr) != napi_ok) {
        return false;
      }
      Napi::TypedArray array = value.As<Napi::TypedArray>();
      length = array.ByteLength();
    } else if (napi_get_dataview_info(value.Env(), v, &length, &data, nullptr,
                                      nullptr) != napi_ok) {
      return false;
    }
    *out = std::string_view(static_cast<const char*>(data), length);
    return true;
  }
  return false;
}

bool ReadBytes(const Napi::Value& value, std::string* out) {
  if (value.IsString()) {
    napi_env env = value.Env();
    // Most keys and values are short: one call into a stack buffer, and a
    // second (measuring first) only for strings that may not fit. napi
    // writes a terminating NUL, so a result shorter than the buffer minus
    // one is the whole string.
    char small[256];
    size_t length = 0;
    if (napi_get_value_string_utf8(env, value, small, sizeof(small), &length) !=
        napi_ok) {
      return false;
    }
    if (length + 1 < sizeof(small)) {
      out->assign(small, length);
      return true;
    }
    napi_get_value_string_utf8(env, value, nullptr, 0, &length);
    out->resize(length + 1);
    napi_get_value_string_utf8(env, value, out->data(), length + 1, &length);
    out->resize(length);
    return true;
  }
  std::string_view view;
  if (!ViewBytes(value, &view)) return false;
  out->assign(view);
  return true;
}

// Eight bytes at a time.
bool IsAscii(std::string_view bytes) {
  size_t i = 0;
  uint64_t bits = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    bits |= word;
  }
  for (; i < bytes.size(); i++) bits |= static_cast<uint8_t>(bytes[i]);
  return (bits & 0x8080808080808080ull) == 0;
}

Napi::Value BytesToJs(Napi::Env env, std::string_view bytes, bool as_string) {
  if (!as_string)
    return Napi::Buffer<char>::Copy(env, bytes.data(), bytes.size());
  // ASCII reads the same as Latin-1, which V8 copies as it is; UTF-8 it
  // decodes and checks byte by byte.
  if (IsAscii(bytes)) {
    napi_value out;
    if (napi_create_string_latin1(env, bytes.data(), bytes.size(), &out) ==
        napi_ok) {
      return Napi::Value(env, out);
    }
  }
  return Napi::String::New(env, bytes.data(), bytes.size());
}

Napi::Error CodedError(Napi::Env env, const char* code, std::string_view msg) {
  Napi::Error error = Napi::Error::New(env, std::string(msg));
  error.Set("code", Napi::String::New(env, code));
  return error;
}

Napi::Error StatusToError(Napi::Env env, const absl::Status& status) {
  const char* code;
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      code = "LEVEL_NOT_FOUND";
      break;
    case absl::StatusCode::kDataLoss:
      code = "LEVEL_CORRUPTION";
      break;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kPermissionDenied:
      code = "LEVEL_IO_ERROR";
      break;
    case absl::StatusCode::kFailedPrecondition:
      // The only FailedPrecondition of Open: the LOCK is held.
      code = "LEVEL_LOCKED";
      break;
    case absl::StatusCode::kInvalidArgument:
      code = "SIFT_INVALID_ARGUMENT";
      break;
    default:
      code = "SIFT_ERROR";
      break;
  }
  Napi::Error error = CodedError(env, code, std::string(status.message()));
  error.Set("status",
            Napi::String::New(env, absl::StatusCodeToString(status.code())));
  return error;
}

Napi::Value Rejected(Napi::Env env, const Napi::Error& error) {
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  deferred.Reject(error.Value());
  return deferred.Promise();
}

DbWorker::DbWorker(Napi::Env env, Database* db, const char* name)
    : Napi::AsyncWorker(env, name),
      db_(db),
      sift_db_(db->db()),
      db_ref_(Napi::Persistent(db->Value())),
      deferred_(Napi::Promise::Deferred::New(env)) {}

DbWorker::DbWorker(Napi::Env env, Database* db, const char* name,
                   Napi::Promise::Deferred deferred)
    : Napi::AsyncWorker(env, name),
      db_(db),
      sift_db_(db->db()),
      db_ref_(Napi::Persistent(db->Value())),
      deferred_(deferred) {}

DbWorker::~DbWorker() = default;

Napi::Promise DbWorker::Start() {
  db_->WorkStarted();
  Queue();
  return deferred_.Promise();
}

void DbWorker::OnOK() {
  Napi::Env env = Env();
  BeforeSettle();
  if (status_.ok()) {
    deferred_.Resolve(Result(env));
  } else {
    deferred_.Reject(StatusToError(env, status_).Value());
  }
  db_->WorkDone();
}

void DbWorker::OnError(const Napi::Error& error) {
  if (status_.ok()) status_ = absl::InternalError("work was not run");
  BeforeSettle();
  deferred_.Reject(error.Value());
  db_->WorkDone();
}

}  // namespace sift_node
