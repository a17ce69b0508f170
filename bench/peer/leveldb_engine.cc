// LevelDB behind the peer interface, its Env wrapped to count table reads.
//
// LevelDB's POSIX Env memory-maps table files (up to 1000 of them on 64-bit
// machines) and then does not copy blocks into its block cache: every block a
// Get touches is a RandomAccessFile::Read served from the mapping. Wrapping
// Read still counts each block read, so the block-read column means the same
// for all engines; what differs is the cost of a read (a memory copy-free
// page-cache access for LevelDB, a pread for the others). LevelDB has no
// direct I/O: under peer_bench --direct_reads it still reads buffered.

#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "bench/peer/engine.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"

namespace sift::bench {
namespace {

absl::Status FromLevelDb(const leveldb::Status& s) {
  if (s.ok()) return absl::OkStatus();
  if (s.IsNotFound()) return absl::NotFoundError(s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(s.ToString());
  return absl::InternalError(s.ToString());
}

class CountingFile final : public leveldb::RandomAccessFile {
 public:
  CountingFile(leveldb::RandomAccessFile* target, ReadCounter* counter)
      : target_(target), counter_(counter) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    counter_->Count(n);
    return target_->Read(offset, n, result, scratch);
  }

 private:
  std::unique_ptr<leveldb::RandomAccessFile> target_;
  ReadCounter* counter_;
};

// Counts bytes appended to tables (.ldb, .sst) and write-ahead logs (.log).
class WriteCountingFile final : public leveldb::WritableFile {
 public:
  WriteCountingFile(leveldb::WritableFile* target, ReadCounter* counter)
      : target_(target), counter_(counter) {}
  leveldb::Status Append(const leveldb::Slice& data) override {
    counter_->CountWrite(data.size());
    return target_->Append(data);
  }
  leveldb::Status Close() override { return target_->Close(); }
  leveldb::Status Flush() override { return target_->Flush(); }
  leveldb::Status Sync() override { return target_->Sync(); }

 private:
  std::unique_ptr<leveldb::WritableFile> target_;
  ReadCounter* counter_;
};

bool IsTableOrLog(const std::string& f) {
  auto ends = [&](std::string_view suffix) {
    return f.size() >= suffix.size() &&
           f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".ldb") || ends(".sst") || ends(".log");
}

class CountingEnv final : public leveldb::EnvWrapper {
 public:
  CountingEnv(leveldb::Env* target, ReadCounter* counter)
      : leveldb::EnvWrapper(target), counter_(counter) {}
  leveldb::Status NewRandomAccessFile(
      const std::string& f, leveldb::RandomAccessFile** result) override {
    leveldb::RandomAccessFile* file = nullptr;
    leveldb::Status s = target()->NewRandomAccessFile(f, &file);
    *result = s.ok() ? new CountingFile(file, counter_) : nullptr;
    return s;
  }
  leveldb::Status NewWritableFile(const std::string& f,
                                  leveldb::WritableFile** result) override {
    return CountWrites(f, target()->NewWritableFile(f, result), result);
  }
  leveldb::Status NewAppendableFile(const std::string& f,
                                    leveldb::WritableFile** result) override {
    return CountWrites(f, target()->NewAppendableFile(f, result), result);
  }

 private:
  leveldb::Status CountWrites(const std::string& f, leveldb::Status s,
                              leveldb::WritableFile** result) {
    if (s.ok() && IsTableOrLog(f)) {
      *result = new WriteCountingFile(*result, counter_);
    }
    return s;
  }

  ReadCounter* counter_;
};

class LevelDbEngine final : public Engine {
 public:
  ~LevelDbEngine() override { db_.reset(); }
  const char* name() const override { return "leveldb"; }

  absl::Status Put(std::string_view key, std::string_view value) override {
    return FromLevelDb(db_->Put(leveldb::WriteOptions(),
                                leveldb::Slice(key.data(), key.size()),
                                leveldb::Slice(value.data(), value.size())));
  }
  absl::Status Get(std::string_view key, std::string* value,
                   bool* found) override {
    leveldb::Status s = db_->Get(leveldb::ReadOptions(),
                                 leveldb::Slice(key.data(), key.size()), value);
    *found = s.ok();
    return s.IsNotFound() ? absl::OkStatus() : FromLevelDb(s);
  }
  absl::Status Scan(std::string_view start, std::string_view upper, uint64_t n,
                    ScanTotals* out) override {
    std::unique_ptr<leveldb::Iterator> it(
        db_->NewIterator(leveldb::ReadOptions()));
    const leveldb::Slice limit(upper.data(), upper.size());
    uint64_t i = 0;
    for (it->Seek(leveldb::Slice(start.data(), start.size()));
         i < n && it->Valid(); it->Next(), ++i) {
      if (!upper.empty() && it->key().compare(limit) >= 0) break;
      out->bytes += it->key().size() + it->value().size();
    }
    out->entries += i;
    return FromLevelDb(it->status());
  }
  absl::Status SeekRange(std::string_view lower, std::string_view upper,
                         ScanTotals* out) override {
    std::unique_ptr<leveldb::Iterator> it(
        db_->NewIterator(leveldb::ReadOptions()));
    const leveldb::Slice limit(upper.data(), upper.size());
    uint64_t i = 0;
    for (it->Seek(leveldb::Slice(lower.data(), lower.size()));
         it->Valid() && it->key().compare(limit) < 0; it->Next(), ++i) {
      out->bytes += it->key().size() + it->value().size();
    }
    out->entries += i;
    return FromLevelDb(it->status());
  }
  absl::Status ScanAll(bool reverse, ScanTotals* out) override {
    std::unique_ptr<leveldb::Iterator> it(
        db_->NewIterator(leveldb::ReadOptions()));
    uint64_t i = 0;
    if (reverse) {
      for (it->SeekToLast(); it->Valid(); it->Prev(), ++i) {
        out->bytes += it->key().size() + it->value().size();
      }
    } else {
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
        out->bytes += it->key().size() + it->value().size();
      }
    }
    out->entries += i;
    return FromLevelDb(it->status());
  }
  std::vector<int> Shape() override {
    std::vector<int> shape;
    for (int level = 0; level < 7; ++level) {
      std::string v;
      if (!db_->GetProperty(absl::StrCat("leveldb.num-files-at-level", level),
                            &v)) {
        break;
      }
      shape.push_back(std::atoi(v.c_str()));
    }
    return shape;
  }
  nlohmann::ordered_json Extra() override {
    nlohmann::ordered_json j;
    std::string v;
    if (db_->GetProperty("leveldb.approximate-memory-usage", &v)) {
      j["leveldb.approximate-memory-usage"] =
          std::strtoull(v.c_str(), nullptr, 10);
    }
    return j;
  }

  static absl::StatusOr<std::unique_ptr<Engine>> Open(const PeerSettings& s,
                                                      const std::string& dir) {
    auto engine = std::unique_ptr<LevelDbEngine>(new LevelDbEngine());
    engine->env_ = std::make_unique<CountingEnv>(leveldb::Env::Default(),
                                                 &engine->counter_);
    engine->cache_.reset(leveldb::NewLRUCache(s.cache_size));
    engine->filter_.reset(
        leveldb::NewBloomFilterPolicy(static_cast<int>(s.bits_per_key + 0.5)));
    leveldb::Options o;
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.env = engine->env_.get();
    o.write_buffer_size = s.write_buffer_size;
    o.max_file_size = s.max_file_size;
    o.block_size = s.block_size;
    o.compression = s.compression == "snappy" ? leveldb::kSnappyCompression
                                              : leveldb::kNoCompression;
    o.block_cache = engine->cache_.get();
    o.filter_policy = engine->filter_.get();
    leveldb::DB* db = nullptr;
    leveldb::Status st = leveldb::DB::Open(o, dir, &db);
    if (!st.ok()) return FromLevelDb(st);
    engine->db_.reset(db);
    return engine;
  }

 private:
  LevelDbEngine() = default;
  // Declared before db_ so they are destroyed after it.
  std::unique_ptr<CountingEnv> env_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> OpenLevelDb(const PeerSettings& s,
                                                    const std::string& dir) {
  return LevelDbEngine::Open(s, dir);
}

}  // namespace sift::bench
