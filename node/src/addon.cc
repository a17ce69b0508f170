// The sift-level addon: the classes index.js builds SiftLevel on.
#include <napi.h>

#include "database.h"
#include "iterator.h"

namespace sift_node {
namespace {

Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  exports.Set("Database", Database::Init(env));
  exports.Set("Iterator", Iterator::Init(env));
  exports.Set("Snapshot", SnapshotHandle::Init(env));
  exports.Set("Batch", BatchHandle::Init(env));
  return exports;
}

}  // namespace
}  // namespace sift_node

// NODE_API_MODULE wants an unqualified function name.
static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  return sift_node::InitModule(env, exports);
}

NODE_API_MODULE(sift_level, Init)
