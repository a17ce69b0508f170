#ifndef SIFT_BENCH_KVBENCH_RUNNER_H_
#define SIFT_BENCH_KVBENCH_RUNNER_H_

// kvbench's workloads against one sift::DB: the database is opened once per
// run and the workloads share it in the order given (db_bench style), so a
// fill followed by reads measures reads of what the fill wrote.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/kvbench/io_stats.h"
#include "bench/kvbench/keys.h"
#include "bench/kvbench/parallel.h"
#include "sift/db.h"
#include "sift/options.h"
#include "sift/read_stats.h"
#include "util/histogram.h"
#include "util/random.h"

namespace sift::bench {

// Filter setting of a run: kNone writes tables without a filter.
enum class FilterChoice { kNone, kStandard, kBlocked, kBinaryFuse };
const char* FilterChoiceName(FilterChoice f);
// The engine's kind for a choice other than kNone.
FilterKind FilterKindOf(FilterChoice f);
// "uniform" or "optimal".
const char* FilterAllocationName(FilterAllocation a);

// Everything a run is configured with (the command-line flags).
struct BenchConfig {
  uint64_t num = 1000000;   // keys in the key space, written by the fills
  uint64_t reads = 200000;  // operations of each read workload
  int key_size = 16;
  int value_size = 100;
  // Options::prefix_extractor = NewFixedPrefixExtractor(prefix_len); 0: none.
  // The seekprefix workloads need one shorter than key_size.
  int prefix_len = 0;
  // Options::range_filter_bits_per_key (0: none).
  double range_filter_bits = 0.0;
  // Options::filter_memory_limit (0: no limit).
  uint64_t filter_memory_limit = 0;
  // Keys as zero-padded decimal numbers, or as big-endian integers with
  // gaps (KeySpace::Format::kBinary; seekempty needs them).
  bool binary_keys = false;
  // Integers in each range of seekempty, 1 .. 2^16 - 1.
  uint64_t range_len = 32;
  // Values of random bytes (ValueSource), which compression cannot shrink.
  bool incompressible_values = false;
  double bits_per_key = 10.0;
  FilterChoice filter = FilterChoice::kBlocked;
  // How bits_per_key is shared among the tables (Options::filter_allocation).
  FilterAllocation filter_allocation = FilterAllocation::kOptimal;
  Compression compression = Compression::kNone;
  size_t cache_size = 8 << 20;
  size_t write_buffer_size = 4 << 20;
  size_t max_file_size = 2 << 20;
  // Options::block_restart_interval of the tables a fill writes.
  int block_restart_interval = Options().block_restart_interval;
  int threads = 1;
  int batch_size = 32;  // keys per MultiGet in the multiread workloads
  uint64_t seed = 301;
  std::string db;  // empty: a fresh temporary directory, removed afterwards
  bool use_existing_db = false;
  // After a fill, wait until background compaction has settled before the
  // next workload, so reads measure a stable tree (settle time is reported).
  bool settle = true;
  bool progress = false;  // progress bar on stderr
  // Options::use_direct_reads: table reads bypass the page cache, so block
  // reads are device reads.
  bool use_direct_reads = false;
  int max_open_files = 1000;  // Options::max_open_files

  Options MakeOptions() const;
};

// Names of the workloads, in the order of --help.
const std::vector<std::string>& AllWorkloads();
// Point reads via DB::Get (read*) or DB::MultiGet (multiread*).
bool IsReadWorkload(std::string_view name);
// YCSB's mixes of Gets and updates (Puts of keys already loaded), zipfian
// keys: ycsba 50% updates, ycsbb 5%. Run on the loaded database without
// settling first, they measure reads and writes while compaction runs.
bool IsMixWorkload(std::string_view name);
// The iterator workloads: seekrandom, scanrandom, seekbounded, readseq,
// readreverse.
bool IsScanWorkload(std::string_view name);

// The outcome of one workload.
struct WorkloadResult {
  std::string name;
  uint64_t ops = 0;
  uint64_t found = 0;    // reads and seeks: how many found their key
  uint64_t entries = 0;  // scans: entries visited
  uint64_t bytes = 0;    // key+value bytes written or read
  // Puts among the ops (fills, overwrite and the ycsb mixes), and the
  // longest single one: a write stall as its caller sees it.
  uint64_t writes = 0;
  double longest_write_us = 0;
  double seconds = 0;
  double settle_seconds = 0;  // waiting for compactions after a fill
  Histogram latency_us;
  bool point_reads = false;  // `stats` is meaningful
  ReadStats stats;           // GetReadStats() delta over the workload
  std::optional<double> theoretical_fpr;  // for the run's filter setting
  std::vector<int> files_per_level;       // shape after the workload
  // File I/O through the engine's Env over the workload (and the settling
  // after a fill), and the kernel's count of bytes this process read from
  // storage (/proc/self/io read_bytes, all threads; -1 if unknown).
  IoCounts io;
  int64_t device_read_bytes = -1;

  double OpsPerSecond() const { return seconds > 0 ? ops / seconds : 0; }
  double PerGet(uint64_t counter) const {
    return stats.gets == 0 ? 0.0 : double(counter) / double(stats.gets);
  }
  double CacheHitRate() const {
    const uint64_t lookups = stats.block_cache_hits + stats.block_reads;
    return lookups == 0 ? 0.0 : double(stats.block_cache_hits) / lookups;
  }
};

// Amplification and memory of a run's database, at the end of the run.
struct RunSummary {
  uint64_t user_bytes_written = 0;  // key + value bytes of every Put
  IoCounts io;                      // since the database was opened
  uint64_t live_table_bytes = 0;    // sizes of the table files now
  uint64_t live_user_bytes = 0;     // key + value bytes of the live keys
  uint64_t filter_bytes = 0;        // filters of the open tables
  uint64_t index_bytes = 0;         // indexes of the open tables
  uint64_t peak_rss_bytes = 0;
  // (table + log bytes written) / user bytes written; 0 if nothing written.
  double WriteAmplification() const;
  // live table bytes / live user bytes; 0 if nothing is live.
  double SpaceAmplification() const;
};

// Owns the database (and the temporary directory) of one run.
//
// Thread safety: Run is not safe for concurrent use; it runs a workload on
// config.threads threads of its own.
class Runner {
 public:
  static absl::StatusOr<std::unique_ptr<Runner>> Open(
      const BenchConfig& config);
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;
  // Closes the database and removes the temporary directory, if one was made.
  ~Runner();

  // Run one workload by name. A read workload on a database nothing was
  // loaded into first loads it (fillrandom, returned in *load if not null).
  absl::StatusOr<WorkloadResult> Run(std::string_view name,
                                     std::optional<WorkloadResult>* load);

  // Tables per level (sift.num-files-at-level<N>).
  std::vector<int> Shape();
  // A DB property (DB::GetProperty).
  std::optional<std::string> Property(std::string_view name) {
    return db_->GetProperty(name);
  }
  const std::string& path() const { return path_; }
  // Amplification and memory now (see RunSummary).
  RunSummary Summary();
  // Theoretical FPR for the configured filter (nullopt without a filter).
  std::optional<double> TheoreticalFpr() const { return theoretical_fpr_; }

 private:
  Runner(const BenchConfig& config, std::string path, bool remove_after);

  absl::Status Fill(bool random, WorkloadResult* r);
  absl::Status Overwrite(WorkloadResult* r);
  absl::Status PointReads(std::string_view name, WorkloadResult* r);
  // ycsba / ycsbb: config_.reads operations, each an update with
  // probability `update_percent` / 100, else a Get.
  absl::Status Mix(int update_percent, WorkloadResult* r);
  // One thread's share [begin, end) of a multiread workload: keys drawn from
  // `rnd` as PointReads draws them, looked up batch_size at a time.
  absl::Status MultiReads(Random& rnd, uint64_t begin, uint64_t end,
                          bool missing, Histogram* lat, Progress* prog,
                          std::atomic<uint64_t>* found,
                          std::atomic<uint64_t>* bytes);
  // seekrandom (max_entries 0: Seek and one Next), scanrandom (Seek and
  // 1..max_entries entries) and seekbounded (the same, with an upper bound
  // 100 keys after the start): reads scans, each with its own iterator.
  absl::Status Scans(uint64_t max_entries, bool bounded, WorkloadResult* r);
  // seekprefix / seekprefixmissing: reads bounded scans of one whole prefix
  // (the first prefix_len bytes), present (a present key's prefix) or
  // absent (the first prefix_len-1 bytes of a present key and ':', which
  // sorts after every digit: inside the key range, holding no key).
  absl::Status PrefixSeeks(bool missing, WorkloadResult* r);
  // seekempty: bounded scans over range_len consecutive absent integers
  // just after a random present key (binary keys).
  absl::Status EmptySeeks(WorkloadResult* r);
  // One scan of a scan workload: an iterator made with `options`, a Seek to
  // `seek`, then up to max_entries entries. Found: the Seek landed on `seek`
  // itself (found_if_at_seek_key), or else the scan read any entry. The
  // strings are the buffers the views in `options` and `seek` point into.
  struct ScanPlan {
    ReadOptions options;
    std::string_view seek;
    uint64_t max_entries = 0;
    bool found_if_at_seek_key = true;
    std::string key, upper;
  };
  // Runs config_.reads scans on config_.threads threads, each planned by
  // `next_scan` from its thread's generator (seeded from `stream`), and
  // times each scan (the planning not included).
  absl::Status RunScans(
      uint64_t stream, WorkloadResult* r,
      const std::function<void(Random& rnd, ScanPlan* plan)>& next_scan);
  // readseq, or readreverse: one walk over every entry.
  absl::Status ReadSeq(bool reverse, WorkloadResult* r);
  absl::Status Compact(WorkloadResult* r);
  // An error if a read workload's answers were wrong (see runner.cc).
  absl::Status CheckFound(const WorkloadResult& r) const;
  // Poll the tree's shape until it stops changing; returns seconds waited.
  double Settle();

  const BenchConfig config_;
  const std::string path_;
  const bool remove_after_;
  const KeySpace keys_;
  const ValueSource values_;
  std::optional<double> theoretical_fpr_;
  // Declared before db_: the database's files go through it.
  std::unique_ptr<IoCountingEnv> env_;
  std::unique_ptr<DB> db_;
  uint64_t user_bytes_written_ = 0;
  bool loaded_ = false;
  uint64_t write_counter_ = 0;  // distinct values across workloads
};

}  // namespace sift::bench

#endif  // SIFT_BENCH_KVBENCH_RUNNER_H_
