#ifndef SIFT_BENCH_PEER_ENGINE_H_
#define SIFT_BENCH_PEER_ENGINE_H_

// peer_bench drives sift, LevelDB and RocksDB through this one small
// interface, with the same settings, and counts block reads and bytes written
// the same way for all three: each engine's file-system layer is wrapped so
// that every read of a random-access (table) file is counted, and every byte
// appended to a table or write-ahead log file.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace sift::bench {

// The settings every engine is opened with.
struct PeerSettings {
  uint64_t num = 1000000;
  uint64_t reads = 200000;
  int key_size = 16;
  int value_size = 100;
  size_t block_size = 4 << 10;
  size_t cache_size = 8 << 20;
  size_t write_buffer_size = 4 << 20;
  size_t max_file_size = 2 << 20;
  double bits_per_key = 10;
  // Block compression for every engine: "none" or "snappy".
  std::string compression = "none";
  // Scans per scan workload (seekrandom, scanrandom, seekbounded, the range
  // seeks below, ycsb_e).
  uint64_t scans = 100000;
  // 0: no prefix extractor. Else sift's Options::prefix_extractor and
  // RocksDB's are fixed prefixes of this many bytes, with whole keys kept in
  // the filters too (so Gets are filtered as without it), and the workloads
  // seekprefix and seekprefixmissing run. LevelDB has no prefix filters.
  // REQUIRES: 0 <= prefix_len < key_size
  int prefix_len = 0;
  // sift's Options::range_filter_bits_per_key (0: none). LevelDB and RocksDB
  // have no range filter.
  double range_bits_per_key = 0;
  // KeySpace's key format, "decimal" or "binary"; seekempty needs "binary"
  // (its empty ranges are the integers between two binary keys).
  std::string key_format = "decimal";
  // Absent integers per seekempty range.
  // REQUIRES: 1 <= range_len < 2^KeySpace::kBinaryShift
  uint64_t range_len = 32;
  // sift's filter layout, "blocked" or "binary_fuse" (allocated per level
  // either way); LevelDB and RocksDB keep their own Bloom filters.
  std::string sift_filter = "blocked";
  uint64_t seed = 301;
  int batch_size = 32;  // keys per MultiGet in the multiread workloads
  // readrandom and multireadrandom (and readmissing and multireadmissing)
  // alternate in this many slices of their reads.
  int read_slices = 10;
  // Table reads bypass the page cache: sift's Options::use_direct_reads,
  // RocksDB's use_direct_reads (its compaction inputs then read direct too,
  // with its own readahead). LevelDB has no direct I/O and reads buffered
  // (through memory maps) either way.
  bool direct_reads = false;
  // Which sequence of workloads each engine runs: "readamp" (a fill, then
  // the read and scan workloads on the settled tree) or "ycsb" (a load, then
  // mixed reads and updates on the same database with no pause; `reads`
  // operations per phase).
  std::string sequence = "readamp";
  // Threads of every phase of the "ycsb" sequence.
  int threads = 1;
};

// Reads of random-access files, split by who issued them: the benchmark's
// own threads (a Get's reads) or the engine's background threads (compaction).
//
// Thread safety: safe for concurrent use.
class ReadCounter {
 public:
  // Count one read of `bytes` bytes, issued by the calling thread.
  void Count(uint64_t bytes);
  uint64_t foreground_reads() const { return fg_reads_.load(); }
  uint64_t background_reads() const { return bg_reads_.load(); }
  uint64_t foreground_bytes() const { return fg_bytes_.load(); }

  // Mark the calling thread as a benchmark (foreground) thread.
  static void MarkForegroundThread();

  // Count `bytes` appended to a table or write-ahead log file (any thread).
  void CountWrite(uint64_t bytes) {
    written_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  uint64_t written_bytes() const { return written_bytes_.load(); }

 private:
  // The foreground counters on a cache line of their own: compactions count
  // their reads and writes from the background thread while the benchmark's
  // thread counts its own, and a shared line would move between the cores on
  // every read of either (for every engine alike, but skewing the rates).
  alignas(64) std::atomic<uint64_t> fg_reads_{0};
  std::atomic<uint64_t> fg_bytes_{0};
  alignas(64) std::atomic<uint64_t> bg_reads_{0};
  std::atomic<uint64_t> written_bytes_{0};
};

// One open database of one engine, in a directory of its own.
//
// Thread safety: as the engine's own DB (Put/Get safe from many threads).
class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  virtual absl::Status Put(std::string_view key, std::string_view value) = 0;
  // OK with *found false when the key is absent.
  virtual absl::Status Get(std::string_view key, std::string* value,
                           bool* found) = 0;
  // Look up keys[i] for every i: (*values)[i] and found[i] as Get gives
  // them. Default: a loop of Gets (LevelDB has no batched lookup); engines
  // with one override this.
  virtual absl::Status MultiGet(const std::vector<std::string_view>& keys,
                                std::vector<std::string>* values,
                                std::vector<bool>* found) {
    values->resize(keys.size());
    found->resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      bool hit = false;
      if (absl::Status s = Get(keys[i], &(*values)[i], &hit); !s.ok()) {
        return s;
      }
      (*found)[i] = hit;
    }
    return absl::OkStatus();
  }
  // What a scan walked: entries and their key + value bytes.
  struct ScanTotals {
    uint64_t entries = 0;
    uint64_t bytes = 0;
  };
  // One scan with an iterator of its own (as YCSB and LevelDB's db_bench
  // make one per operation): Seek(start), then Next until `n` entries were
  // visited, the end, or (when `upper` is not empty) the first key >=
  // `upper`. Engines with iteration bounds (sift, RocksDB) are given
  // `upper` as their bound; LevelDB compares each key, as its users must.
  virtual absl::Status Scan(std::string_view start, std::string_view upper,
                            uint64_t n, ScanTotals* out) = 0;
  // One scan of the range [lower, upper) with an iterator of its own:
  // Seek(lower), then Next until the first key >= `upper` or the end. sift
  // and RocksDB are given both bounds (and decide from them whether a prefix
  // or range filter may rule tables out); LevelDB compares each key.
  virtual absl::Status SeekRange(std::string_view lower, std::string_view upper,
                                 ScanTotals* out) = 0;
  // Every entry, in order or in reverse, with one iterator.
  virtual absl::Status ScanAll(bool reverse, ScanTotals* out) = 0;
  // Tables per level (the engine's num-files-at-level<N> property).
  virtual std::vector<int> Shape() = 0;
  // Engine-specific facts for the report (memory properties, own counters).
  virtual nlohmann::ordered_json Extra() = 0;
  ReadCounter& counter() { return counter_; }

 protected:
  ReadCounter counter_;
};

absl::StatusOr<std::unique_ptr<Engine>> OpenSift(const PeerSettings& s,
                                                 const std::string& dir);
absl::StatusOr<std::unique_ptr<Engine>> OpenLevelDb(const PeerSettings& s,
                                                    const std::string& dir);
absl::StatusOr<std::unique_ptr<Engine>> OpenRocksDb(const PeerSettings& s,
                                                    const std::string& dir);

}  // namespace sift::bench

#endif  // SIFT_BENCH_PEER_ENGINE_H_
