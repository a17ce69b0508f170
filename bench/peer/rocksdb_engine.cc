// RocksDB behind the peer interface, its FileSystem wrapped to count table
// reads (Read, and each request of MultiRead/ReadAsync).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/peer/engine.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"
#include "rocksdb/table_properties.h"

namespace sift::bench {
namespace {

absl::Status FromRocksDb(const rocksdb::Status& s) {
  if (s.ok()) return absl::OkStatus();
  if (s.IsNotFound()) return absl::NotFoundError(s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(s.ToString());
  return absl::InternalError(s.ToString());
}

class CountingFile final : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  CountingFile(std::unique_ptr<rocksdb::FSRandomAccessFile> target,
               ReadCounter* counter)
      : rocksdb::FSRandomAccessFileOwnerWrapper(std::move(target)),
        counter_(counter) {}
  rocksdb::IOStatus Read(uint64_t offset, size_t n,
                         const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    counter_->Count(n);
    return target()->Read(offset, n, options, result, scratch, dbg);
  }
  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num_reqs,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    for (size_t i = 0; i < num_reqs; ++i) counter_->Count(reqs[i].len);
    return target()->MultiRead(reqs, num_reqs, options, dbg);
  }
  rocksdb::IOStatus ReadAsync(
      rocksdb::FSReadRequest& req, const rocksdb::IOOptions& opts,
      std::function<void(const rocksdb::FSReadRequest&, void*)> cb,
      void* cb_arg, void** io_handle, rocksdb::IOHandleDeleter* del_fn,
      rocksdb::IODebugContext* dbg) override {
    counter_->Count(req.len);
    return target()->ReadAsync(req, opts, std::move(cb), cb_arg, io_handle,
                               del_fn, dbg);
  }

 private:
  ReadCounter* counter_;
};

// Counts bytes appended to tables (.sst) and write-ahead logs (.log).
class WriteCountingFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  WriteCountingFile(std::unique_ptr<rocksdb::FSWritableFile> target,
                    ReadCounter* counter)
      : rocksdb::FSWritableFileOwnerWrapper(std::move(target)),
        counter_(counter) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    counter_->CountWrite(data.size());
    return target()->Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    counter_->CountWrite(data.size());
    return target()->Append(data, options, info, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* dbg) override {
    counter_->CountWrite(data.size());
    return target()->PositionedAppend(data, offset, options, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override {
    counter_->CountWrite(data.size());
    return target()->PositionedAppend(data, offset, options, info, dbg);
  }

 private:
  ReadCounter* counter_;
};

bool IsTableOrLog(const std::string& f) {
  auto ends = [&](std::string_view suffix) {
    return f.size() >= suffix.size() &&
           f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".sst") || ends(".log");
}

class CountingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  CountingFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target,
                     ReadCounter* counter)
      : rocksdb::FileSystemWrapper(target), counter_(counter) {}
  const char* Name() const override { return "CountingFileSystem"; }
  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& f, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSRandomAccessFile> file;
    rocksdb::IOStatus s =
        target()->NewRandomAccessFile(f, file_opts, &file, dbg);
    if (s.ok()) result->reset(new CountingFile(std::move(file), counter_));
    return s;
  }
  rocksdb::IOStatus NewWritableFile(
      const std::string& f, const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->NewWritableFile(f, file_opts, result, dbg);
    if (s.ok() && IsTableOrLog(f)) {
      *result =
          std::make_unique<WriteCountingFile>(std::move(*result), counter_);
    }
    return s;
  }
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& f, const std::string& old_fname,
      const rocksdb::FileOptions& file_opts,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s =
        target()->ReuseWritableFile(f, old_fname, file_opts, result, dbg);
    if (s.ok() && IsTableOrLog(f)) {
      *result =
          std::make_unique<WriteCountingFile>(std::move(*result), counter_);
    }
    return s;
  }

 private:
  ReadCounter* counter_;
};

class RocksDbEngine final : public Engine {
 public:
  ~RocksDbEngine() override { db_.reset(); }
  const char* name() const override { return "rocksdb"; }

  absl::Status Put(std::string_view key, std::string_view value) override {
    return FromRocksDb(db_->Put(rocksdb::WriteOptions(),
                                rocksdb::Slice(key.data(), key.size()),
                                rocksdb::Slice(value.data(), value.size())));
  }
  absl::Status Get(std::string_view key, std::string* value,
                   bool* found) override {
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(),
                                 rocksdb::Slice(key.data(), key.size()), value);
    *found = s.ok();
    return s.IsNotFound() ? absl::OkStatus() : FromRocksDb(s);
  }
  // The batched MultiGet (sorted per table, filter lines prefetched).
  absl::Status MultiGet(const std::vector<std::string_view>& keys,
                        std::vector<std::string>* values,
                        std::vector<bool>* found) override {
    const size_t n = keys.size();
    std::vector<rocksdb::Slice> slices;
    slices.reserve(n);
    for (std::string_view k : keys) slices.emplace_back(k.data(), k.size());
    std::vector<rocksdb::PinnableSlice> pinned(n);
    std::vector<rocksdb::Status> statuses(n);
    db_->MultiGet(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), n,
                  slices.data(), pinned.data(), statuses.data());
    values->resize(n);
    found->resize(n);
    for (size_t i = 0; i < n; ++i) {
      (*found)[i] = statuses[i].ok();
      if (statuses[i].ok()) {
        (*values)[i].assign(pinned[i].data(), pinned[i].size());
      } else if (!statuses[i].IsNotFound()) {
        return FromRocksDb(statuses[i]);
      }
    }
    return absl::OkStatus();
  }
  absl::Status Scan(std::string_view start, std::string_view upper, uint64_t n,
                    ScanTotals* out) override {
    rocksdb::ReadOptions ro;
    // These scans cross prefixes: a prefix extractor must not confine them.
    ro.total_order_seek = true;
    const rocksdb::Slice limit(upper.data(), upper.size());
    if (!upper.empty()) ro.iterate_upper_bound = &limit;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
    uint64_t i = 0;
    for (it->Seek(rocksdb::Slice(start.data(), start.size()));
         i < n && it->Valid(); it->Next(), ++i) {
      out->bytes += it->key().size() + it->value().size();
    }
    out->entries += i;
    return FromRocksDb(it->status());
  }
  // With a prefix extractor, auto_prefix_mode uses the prefix Bloom filters
  // exactly when [lower, upper) lies within one prefix (or is one prefix's
  // whole range) and seeks in total order otherwise, as sift decides.
  absl::Status SeekRange(std::string_view lower, std::string_view upper,
                         ScanTotals* out) override {
    rocksdb::ReadOptions ro;
    const rocksdb::Slice lower_bound(lower.data(), lower.size());
    const rocksdb::Slice upper_bound(upper.data(), upper.size());
    ro.iterate_lower_bound = &lower_bound;
    ro.iterate_upper_bound = &upper_bound;
    ro.auto_prefix_mode = prefix_filters_;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
    uint64_t i = 0;
    for (it->Seek(lower_bound); it->Valid(); it->Next(), ++i) {
      out->bytes += it->key().size() + it->value().size();
    }
    out->entries += i;
    return FromRocksDb(it->status());
  }
  absl::Status ScanAll(bool reverse, ScanTotals* out) override {
    rocksdb::ReadOptions ro;
    ro.total_order_seek = true;  // as in Scan: every prefix
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
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
    return FromRocksDb(it->status());
  }
  std::vector<int> Shape() override {
    std::vector<int> shape;
    for (int level = 0; level < 7; ++level) {
      std::string v;
      if (!db_->GetProperty(absl::StrCat("rocksdb.num-files-at-level", level),
                            &v)) {
        break;
      }
      shape.push_back(std::atoi(v.c_str()));
    }
    return shape;
  }
  nlohmann::ordered_json Extra() override {
    nlohmann::ordered_json j;
    for (const char* p :
         {"rocksdb.estimate-table-readers-mem",
          "rocksdb.cur-size-all-mem-tables", "rocksdb.block-cache-usage"}) {
      std::string v;
      if (db_->GetProperty(p, &v)) {
        j[p] = std::strtoull(v.c_str(), nullptr, 10);
      }
    }
    // The filter blocks of the live tables (the filter share of
    // estimate-table-readers-mem, which adds the indexes): with
    // cache_index_and_filter_blocks false, as here, each open table holds
    // its filter in memory outside the block cache.
    rocksdb::TablePropertiesCollection tables;
    if (db_->GetPropertiesOfAllTables(&tables).ok()) {
      uint64_t filter_bytes = 0;
      for (const auto& table : tables) {
        filter_bytes += table.second->filter_size;
      }
      j["table_filter_bytes"] = filter_bytes;
    }
    return j;
  }

  static absl::StatusOr<std::unique_ptr<Engine>> Open(const PeerSettings& s,
                                                      const std::string& dir) {
    auto engine = std::unique_ptr<RocksDbEngine>(new RocksDbEngine());
    auto fs = std::make_shared<CountingFileSystem>(
        rocksdb::FileSystem::Default(), &engine->counter_);
    engine->env_ = rocksdb::NewCompositeEnv(fs);
    rocksdb::BlockBasedTableOptions t;
    t.block_size = s.block_size;
    t.block_cache = rocksdb::NewLRUCache(s.cache_size);
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(s.bits_per_key));
    rocksdb::Options o;
    if (s.prefix_len > 0) {
      // t.whole_key_filtering stays true: the filters hold whole keys and
      // prefixes, as sift's do.
      o.prefix_extractor.reset(
          rocksdb::NewFixedPrefixTransform(static_cast<size_t>(s.prefix_len)));
      engine->prefix_filters_ = true;
    }
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.env = engine->env_.get();
    o.write_buffer_size = s.write_buffer_size;
    o.target_file_size_base = s.max_file_size;
    o.compression = s.compression == "snappy" ? rocksdb::kSnappyCompression
                                              : rocksdb::kNoCompression;
    o.max_open_files = 1000;
    // Direct reads of tables (Get and compaction inputs; RocksDB reads
    // compaction inputs ahead on its own when direct). Flush and compaction
    // writes stay buffered, as sift's.
    o.use_direct_reads = s.direct_reads;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    rocksdb::DB* db = nullptr;
    rocksdb::Status st = rocksdb::DB::Open(o, dir, &db);
    if (!st.ok()) return FromRocksDb(st);
    engine->db_.reset(db);
    return engine;
  }

 private:
  RocksDbEngine() = default;
  std::unique_ptr<rocksdb::Env> env_;  // outlives db_
  std::unique_ptr<rocksdb::DB> db_;
  bool prefix_filters_ = false;  // a prefix extractor is configured
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> OpenRocksDb(const PeerSettings& s,
                                                    const std::string& dir) {
  return RocksDbEngine::Open(s, dir);
}

}  // namespace sift::bench
