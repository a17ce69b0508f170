// sift behind the peer interface, its Env wrapped to count table reads.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/peer/engine.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/iterator.h"
#include "sift/prefix_extractor.h"

namespace sift::bench {
namespace {

class CountingFile final : public RandomAccessFile {
 public:
  CountingFile(std::unique_ptr<RandomAccessFile> target, ReadCounter* counter)
      : target_(std::move(target)), counter_(counter) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    counter_->Count(n);
    return target_->Read(offset, n, result, scratch);
  }
  bool StableReads() const override { return target_->StableReads(); }

 private:
  std::unique_ptr<RandomAccessFile> target_;
  ReadCounter* counter_;
};

// Counts bytes appended to tables (.sst) and write-ahead logs (.log).
class WriteCountingFile final : public WritableFile {
 public:
  WriteCountingFile(std::unique_ptr<WritableFile> target, ReadCounter* counter)
      : target_(std::move(target)), counter_(counter) {}
  absl::Status Append(std::string_view data) override {
    counter_->CountWrite(data.size());
    return target_->Append(data);
  }
  absl::Status Flush() override { return target_->Flush(); }
  absl::Status Sync() override { return target_->Sync(); }
  absl::Status Close() override { return target_->Close(); }

 private:
  std::unique_ptr<WritableFile> target_;
  ReadCounter* counter_;
};

bool IsTableOrLog(const std::string& f) {
  auto ends = [&](std::string_view suffix) {
    return f.size() >= suffix.size() &&
           f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".sst") || ends(".log");
}

class CountingEnv final : public EnvWrapper {
 public:
  CountingEnv(Env* target, ReadCounter* counter)
      : EnvWrapper(target), counter_(counter) {}
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f) override {
    return NewRandomAccessFile(f, RandomAccessMode::kBuffered);
  }
  // Tables open in the mode the DB asks for (memory maps by default), each
  // read still counted.
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f, RandomAccessMode mode) override {
    absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
        target()->NewRandomAccessFile(f, mode);
    if (!file.ok()) return file.status();
    return std::make_unique<CountingFile>(*std::move(file), counter_);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    return CountWrites(f, target()->NewWritableFile(f));
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& f) override {
    return CountWrites(f, target()->NewAppendableFile(f));
  }
  // The target's log files (mapped, on POSIX), as the DB gets them unwrapped.
  absl::StatusOr<std::unique_ptr<WritableFile>> NewLogFile(
      const std::string& f) override {
    return CountWrites(f, target()->NewLogFile(f));
  }

 private:
  absl::StatusOr<std::unique_ptr<WritableFile>> CountWrites(
      const std::string& f,
      absl::StatusOr<std::unique_ptr<WritableFile>> file) {
    if (!file.ok() || !IsTableOrLog(f)) return file;
    return std::make_unique<WriteCountingFile>(*std::move(file), counter_);
  }

  ReadCounter* counter_;
};

class SiftEngine final : public Engine {
 public:
  ~SiftEngine() override { db_.reset(); }
  const char* name() const override { return "sift"; }

  absl::Status Put(std::string_view key, std::string_view value) override {
    return db_->Put(WriteOptions(), key, value);
  }
  absl::Status Get(std::string_view key, std::string* value,
                   bool* found) override {
    absl::Status s = db_->Get(ReadOptions(), key, value);
    *found = s.ok();
    return absl::IsNotFound(s) ? absl::OkStatus() : s;
  }
  absl::Status MultiGet(const std::vector<std::string_view>& keys,
                        std::vector<std::string>* values,
                        std::vector<bool>* found) override {
    const std::vector<absl::Status> statuses =
        db_->MultiGet(ReadOptions(), keys, values);
    found->resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      (*found)[i] = statuses[i].ok();
      if (!statuses[i].ok() && !absl::IsNotFound(statuses[i])) {
        return statuses[i];
      }
    }
    return absl::OkStatus();
  }
  absl::Status Scan(std::string_view start, std::string_view upper, uint64_t n,
                    ScanTotals* out) override {
    ReadOptions ro;
    if (!upper.empty()) ro.iterate_upper_bound = upper;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    uint64_t i = 0;
    for (it->Seek(start); i < n && it->Valid(); it->Next(), ++i) {
      out->bytes += it->key().size() + it->value().size();
    }
    out->entries += i;
    return it->status();
  }
  absl::Status SeekRange(std::string_view lower, std::string_view upper,
                         ScanTotals* out) override {
    ReadOptions ro;
    ro.iterate_lower_bound = lower;
    ro.iterate_upper_bound = upper;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    uint64_t i = 0;
    for (it->Seek(lower); it->Valid(); it->Next(), ++i) {
      out->bytes += it->key().size() + it->value().size();
    }
    out->entries += i;
    return it->status();
  }
  absl::Status ScanAll(bool reverse, ScanTotals* out) override {
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
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
    return it->status();
  }
  std::vector<int> Shape() override {
    std::vector<int> shape;
    for (int level = 0;; ++level) {
      std::optional<std::string> v =
          db_->GetProperty(absl::StrCat("sift.num-files-at-level", level));
      if (!v.has_value()) break;
      shape.push_back(std::atoi(v->c_str()));
    }
    return shape;
  }
  nlohmann::ordered_json Extra() override {
    nlohmann::ordered_json j;
    for (const char* p :
         {"sift.filter-memory-bytes", "sift.approximate-memory-usage"}) {
      if (std::optional<std::string> v = db_->GetProperty(p)) {
        j[p] = std::strtoull(v->c_str(), nullptr, 10);
      }
    }
    const ReadStats rs = db_->GetReadStats();
    j["read_stats"] = {
        {"gets", rs.gets},
        {"tables_probed", rs.tables_probed},
        {"filter_negatives", rs.filter_negatives},
        {"filter_false_positives", rs.filter_false_positives},
        {"block_cache_hits", rs.block_cache_hits},
        {"block_reads", rs.block_reads},
        {"prefix_filter_probes", rs.prefix_filter_probes},
        {"prefix_filter_negatives", rs.prefix_filter_negatives},
        {"range_filter_probes", rs.range_filter_probes},
        {"range_filter_negatives", rs.range_filter_negatives},
        {"range_filter_false_positives", rs.range_filter_false_positives}};
    // What writers waited for since open, one line per cause (count, total
    // and longest stall): what explains a long Put in the report.
    if (std::optional<std::string> v = db_->GetProperty("sift.write-stalls")) {
      std::vector<std::string> lines =
          absl::StrSplit(*v, '\n', absl::SkipEmpty());
      j["write_stalls"] = lines;
    }
    return j;
  }

  static absl::StatusOr<std::unique_ptr<Engine>> Open(const PeerSettings& s,
                                                      const std::string& dir) {
    auto engine = std::unique_ptr<SiftEngine>(new SiftEngine());
    engine->env_ =
        std::make_unique<CountingEnv>(Env::Default(), &engine->counter_);
    Options o;
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.env = engine->env_.get();
    o.write_buffer_size = s.write_buffer_size;
    o.max_file_size = s.max_file_size;
    o.block_size = s.block_size;
    o.compression =
        s.compression == "snappy" ? Compression::kSnappy : Compression::kNone;
    o.block_cache_capacity = s.cache_size;
    o.filter_bits_per_key = s.bits_per_key;
    o.filter_kind = s.sift_filter == "binary_fuse" ? FilterKind::kBinaryFuse
                                                   : FilterKind::kBlockedBloom;
    o.use_direct_reads = s.direct_reads;
    if (s.prefix_len > 0) {
      o.prefix_extractor =
          NewFixedPrefixExtractor(static_cast<size_t>(s.prefix_len));
    }
    o.range_filter_bits_per_key = s.range_bits_per_key;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, dir);
    if (!db.ok()) return db.status();
    engine->db_ = *std::move(db);
    return engine;
  }

 private:
  SiftEngine() = default;
  std::unique_ptr<CountingEnv> env_;  // outlives db_
  std::unique_ptr<DB> db_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> OpenSift(const PeerSettings& s,
                                                 const std::string& dir) {
  return SiftEngine::Open(s, dir);
}

}  // namespace sift::bench
