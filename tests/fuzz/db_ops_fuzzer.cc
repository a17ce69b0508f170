// Fuzz target: a sequence of DB operations, checked against a std::map
// model. Each input byte (with the bytes after it as arguments) is one of:
// put, delete, batch, get, forward or backward scan, seek and step, take /
// read at / release a snapshot, flush, compact a range, close and reopen.
// The database lives in a MemEnv with the smallest write buffer and table
// sizes, so flushes and compactions happen within a few hundred operations.
// Properties: every read matches the model (at the snapshot, for snapshot
// reads), nothing ever fails, and a reopen keeps everything.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sift/db.h"
#include "sift/env.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using Model = std::map<std::string, std::string>;

std::string KeyOf(uint8_t b) {
  // 64 keys, some sharing long prefixes (prefix compression in blocks).
  std::string key = "key";
  if (b & 0x40) key.append(20, 'p');
  key.push_back(static_cast<char>('A' + (b & 0x3f) / 8));
  key.push_back(static_cast<char>('a' + (b & 7)));
  return key;
}

std::string ValueOf(uint64_t op, uint8_t len_byte) {
  std::string v = std::to_string(op) + ":";
  v.append(static_cast<size_t>(len_byte) * 4, static_cast<char>('a' + op % 26));
  return v;
}

void CheckScan(sift::DB* db, const sift::ReadOptions& ro, const Model& model,
               bool backward) {
  std::unique_ptr<sift::Iterator> it = db->NewIterator(ro);
  std::vector<std::pair<std::string, std::string>> got;
  if (backward) {
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      got.emplace_back(it->key(), it->value());
    }
    std::reverse(got.begin(), got.end());
  } else {
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      got.emplace_back(it->key(), it->value());
    }
  }
  FUZZ_CHECK(it->status().ok());
  const std::vector<std::pair<std::string, std::string>> want(model.begin(),
                                                              model.end());
  FUZZ_CHECK(got == want);
}

void CheckGet(sift::DB* db, const sift::ReadOptions& ro, const Model& model,
              const std::string& key) {
  std::string value;
  const absl::Status s = db->Get(ro, key, &value);
  auto it = model.find(key);
  if (it == model.end()) {
    FUZZ_CHECK(absl::IsNotFound(s));
  } else {
    FUZZ_CHECK(s.ok());
    FUZZ_CHECK(value == it->second);
  }
}

struct Snap {
  const sift::Snapshot* snapshot;
  Model model;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // keep each input fast
  sift::fuzz::FuzzInput in(data, size);
  std::unique_ptr<sift::Env> env = sift::NewMemEnv(sift::Env::Default());
  sift::Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.write_buffer_size = 16 << 10;  // the smallest allowed
  options.max_file_size = 16 << 10;
  options.block_size = 256;
  options.block_restart_interval = 4;
  options.compression =
      in.Byte() & 1 ? sift::Compression::kSnappy : sift::Compression::kNone;
  absl::StatusOr<std::unique_ptr<sift::DB>> opened =
      sift::DB::Open(options, "/fuzzdb");
  FUZZ_CHECK(opened.ok());
  std::unique_ptr<sift::DB> db = *std::move(opened);
  Model model;
  std::vector<Snap> snaps;
  const sift::ReadOptions latest;
  // The slow operations are capped per input, so that every input runs in
  // milliseconds whatever its bytes say.
  int flushes_left = 8;
  int compactions_left = 4;
  int reopens_left = 3;

  for (uint64_t op = 0; !in.empty(); ++op) {
    const uint8_t what = in.Byte() % 14;
    switch (what) {
      case 0:
      case 1: {  // put
        const std::string key = KeyOf(in.Byte());
        const std::string value = ValueOf(op, in.Byte());
        FUZZ_CHECK(db->Put(sift::WriteOptions(), key, value).ok());
        model[key] = value;
        break;
      }
      case 2: {  // delete
        const std::string key = KeyOf(in.Byte());
        FUZZ_CHECK(db->Delete(sift::WriteOptions(), key).ok());
        model.erase(key);
        break;
      }
      case 3: {  // batch
        sift::WriteBatch batch;
        const int n = 1 + in.Byte() % 8;
        Model after = model;
        for (int i = 0; i < n; ++i) {
          const uint8_t b = in.Byte();
          const std::string key = KeyOf(b);
          if (b & 0x80) {
            batch.Delete(key);
            after.erase(key);
          } else {
            const std::string value = ValueOf(op * 8 + i, in.Byte());
            batch.Put(key, value);
            after[key] = value;
          }
        }
        sift::WriteOptions wo;
        wo.sync = (n & 1) != 0;
        FUZZ_CHECK(db->Write(wo, &batch).ok());
        model = std::move(after);
        break;
      }
      case 4:
        CheckGet(db.get(), latest, model, KeyOf(in.Byte()));
        break;
      case 5:
        CheckScan(db.get(), latest, model, /*backward=*/false);
        break;
      case 6:
        CheckScan(db.get(), latest, model, /*backward=*/true);
        break;
      case 7: {  // seek, then a few steps either way
        const std::string target = KeyOf(in.Byte());
        std::unique_ptr<sift::Iterator> it = db->NewIterator(latest);
        it->Seek(target);
        auto m = model.lower_bound(target);
        const uint8_t steps = in.Byte();
        for (int i = 0; i < (steps & 7); ++i) {
          FUZZ_CHECK(it->Valid() == (m != model.end()));
          if (m == model.end()) break;
          FUZZ_CHECK(it->key() == m->first && it->value() == m->second);
          if ((steps >> (3 + i % 5)) & 1 && m != model.begin()) {
            it->Prev();
            --m;
          } else {
            it->Next();
            ++m;
          }
        }
        FUZZ_CHECK(it->status().ok());
        break;
      }
      case 8:  // take a snapshot
        if (snaps.size() < 4) snaps.push_back({db->GetSnapshot(), model});
        break;
      case 9: {  // read at a snapshot
        if (snaps.empty()) break;
        const Snap& s = snaps[in.Byte() % snaps.size()];
        sift::ReadOptions ro;
        ro.snapshot = s.snapshot;
        CheckGet(db.get(), ro, s.model, KeyOf(in.Byte()));
        CheckScan(db.get(), ro, s.model, in.Byte() & 1);
        break;
      }
      case 10: {  // release a snapshot
        if (snaps.empty()) break;
        const size_t i = in.Byte() % snaps.size();
        db->ReleaseSnapshot(snaps[i].snapshot);
        snaps.erase(snaps.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
      case 11:
        if (flushes_left-- <= 0) break;
        FUZZ_CHECK(db->Flush().ok());
        break;
      case 12: {  // compact a range (or everything)
        const uint8_t b = in.Byte();
        if (compactions_left-- <= 0) break;
        if (b & 0x80) {
          FUZZ_CHECK(db->CompactRange(nullptr, nullptr).ok());
        } else {
          std::string lo = KeyOf(b);
          std::string hi = KeyOf(in.Byte());
          if (hi < lo) std::swap(lo, hi);
          FUZZ_CHECK(db->CompactRange(&lo, &hi).ok());
        }
        break;
      }
      case 13: {  // close and reopen: snapshots end with the DB object
        if (reopens_left-- <= 0) break;
        for (const Snap& s : snaps) db->ReleaseSnapshot(s.snapshot);
        snaps.clear();
        db.reset();
        opened = sift::DB::Open(options, "/fuzzdb");
        FUZZ_CHECK(opened.ok());
        db = *std::move(opened);
        break;
      }
    }
  }
  CheckScan(db.get(), latest, model, /*backward=*/false);
  for (const Snap& s : snaps) db->ReleaseSnapshot(s.snapshot);
  return 0;
}
