#include "bench/kvbench/runner.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/kvbench/filter_theory.h"
#include "bench/kvbench/parallel.h"
#include "sift/env.h"
#include "sift/iterator.h"
#include "util/random.h"

namespace sift::bench {
namespace {

// Seeds of the per-thread generators of each kind of workload, so that
// readrandom and readmissing of the same run do not draw the same indexes.
constexpr uint64_t kOverwriteSeed = 1;
constexpr uint64_t kReadRandomSeed = 2;
constexpr uint64_t kReadMissingSeed = 3;
constexpr uint64_t kReadHotSeed = 4;
constexpr uint64_t kSeekSeed = 5;
constexpr uint64_t kMixSeed = 6;

// Report progress in batches so the shared counter is touched rarely.
constexpr uint64_t kProgressBatch = 1024;

absl::Status AsStatus(absl::Status s, std::string_view what) {
  if (s.ok()) return s;
  return absl::Status(s.code(),
                      absl::StrCat(std::string(what), ": ", s.message()));
}

}  // namespace

const char* FilterChoiceName(FilterChoice f) {
  switch (f) {
    case FilterChoice::kNone:
      return "none";
    case FilterChoice::kStandard:
      return "standard";
    case FilterChoice::kBlocked:
      return "blocked";
    case FilterChoice::kBinaryFuse:
      return "binary_fuse";
  }
  return "?";
}

FilterKind FilterKindOf(FilterChoice f) {
  switch (f) {
    case FilterChoice::kStandard:
      return FilterKind::kStandardBloom;
    case FilterChoice::kBinaryFuse:
      return FilterKind::kBinaryFuse;
    case FilterChoice::kNone:
    case FilterChoice::kBlocked:
      break;
  }
  return FilterKind::kBlockedBloom;
}

const char* FilterAllocationName(FilterAllocation a) {
  return a == FilterAllocation::kUniform ? "uniform" : "optimal";
}

Options BenchConfig::MakeOptions() const {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = write_buffer_size;
  o.max_file_size = max_file_size;
  o.block_restart_interval = block_restart_interval;
  o.compression = compression;
  o.block_cache_capacity = cache_size;
  o.use_direct_reads = use_direct_reads;
  o.max_open_files = max_open_files;
  o.range_filter_bits_per_key = range_filter_bits;
  o.filter_memory_limit = filter_memory_limit;
  if (prefix_len > 0) {
    o.prefix_extractor =
        NewFixedPrefixExtractor(static_cast<size_t>(prefix_len));
  }
  if (filter == FilterChoice::kNone || bits_per_key <= 0) {
    o.filter_bits_per_key = 0;
  } else {
    o.filter_bits_per_key = bits_per_key;
    o.filter_allocation = filter_allocation;
    o.filter_kind = FilterKindOf(filter);
  }
  return o;
}

const std::vector<std::string>& AllWorkloads() {
  static const std::vector<std::string>* const kAll =
      new std::vector<std::string>{"fillseq",
                                   "fillrandom",
                                   "overwrite",
                                   "readrandom",
                                   "readmissing",
                                   "readhot",
                                   "multireadrandom",
                                   "multireadmissing",
                                   "seekrandom",
                                   "scanrandom",
                                   "seekbounded",
                                   "readseq",
                                   "readreverse",
                                   "compact",
                                   "seekprefix",
                                   "seekprefixmissing",
                                   "seekempty",
                                   "ycsba",
                                   "ycsbb"};
  return *kAll;
}

bool IsScanWorkload(std::string_view name) {
  return name == "seekrandom" || name == "scanrandom" ||
         name == "seekbounded" || name == "readseq" || name == "readreverse" ||
         name == "seekprefix" || name == "seekprefixmissing" ||
         name == "seekempty";
}

bool IsMixWorkload(std::string_view name) {
  return name == "ycsba" || name == "ycsbb";
}

bool IsReadWorkload(std::string_view name) {
  return name == "readrandom" || name == "readmissing" || name == "readhot" ||
         name == "multireadrandom" || name == "multireadmissing";
}

absl::StatusOr<std::unique_ptr<Runner>> Runner::Open(
    const BenchConfig& config) {
  if (absl::Status s = KeySpace::Validate(config.num, config.key_size,
                                          config.binary_keys
                                              ? KeySpace::KeyFormat::kBinary
                                              : KeySpace::KeyFormat::kDecimal);
      !s.ok()) {
    return s;
  }
  if (config.value_size < 0) {
    return absl::InvalidArgumentError("--value_size must be >= 0");
  }
  std::string path = config.db;
  bool remove_after = false;
  if (path.empty()) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "kvbench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary directory: ", tmpl));
    }
    path = tmpl;
    remove_after = true;
  }
  std::unique_ptr<Runner> runner(new Runner(config, path, remove_after));
  runner->env_ = std::make_unique<IoCountingEnv>(Env::Default());
  Options options = config.MakeOptions();
  options.env = runner->env_.get();
  if (!config.use_existing_db) {
    if (absl::Status s = DestroyDB(path, options); !s.ok()) {
      return AsStatus(s, absl::StrCat("cannot clear ", path));
    }
  }
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, path);
  if (!db.ok()) return AsStatus(db.status(), absl::StrCat("open ", path));
  runner->db_ = *std::move(db);
  runner->loaded_ = config.use_existing_db;
  if (options.filter_bits_per_key > 0) {
    absl::StatusOr<FilterShape> shape =
        ShapeOfFilter(options.filter_kind, options.filter_bits_per_key);
    if (!shape.ok()) return shape.status();
    runner->theoretical_fpr_ = shape->theoretical_fpr;
  }
  return runner;
}

Runner::Runner(const BenchConfig& config, std::string path, bool remove_after)
    : config_(config),
      path_(std::move(path)),
      remove_after_(remove_after),
      keys_(config.num, config.key_size,
            config.binary_keys ? KeySpace::KeyFormat::kBinary
                               : KeySpace::KeyFormat::kDecimal),
      values_(config.value_size, config.seed, !config.incompressible_values) {}

Runner::~Runner() {
  db_.reset();
  if (remove_after_) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

std::vector<int> Runner::Shape() {
  std::vector<int> shape;
  for (int level = 0;; ++level) {
    std::optional<std::string> v =
        db_->GetProperty(absl::StrCat("sift.num-files-at-level", level));
    if (!v.has_value()) break;
    shape.push_back(std::atoi(v->c_str()));
  }
  // Drop empty deepest levels: "3 5 40" reads better than "3 5 40 0 0 0 0".
  while (shape.size() > 1 && shape.back() == 0) shape.pop_back();
  return shape;
}

double Runner::Settle() {
  const uint64_t start = NowNanos();
  constexpr int kStablePolls = 10;  // 1 s without a change in shape
  constexpr double kMaxSeconds = 120;
  std::vector<int> last = Shape();
  int stable = 0;
  while (stable < kStablePolls &&
         double(NowNanos() - start) / 1e9 < kMaxSeconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<int> now = Shape();
    stable = now == last ? stable + 1 : 0;
    last = std::move(now);
  }
  return double(NowNanos() - start) / 1e9;
}

absl::StatusOr<WorkloadResult> Runner::Run(
    std::string_view name, std::optional<WorkloadResult>* load) {
  if (load != nullptr) load->reset();
  const bool needs_data = IsReadWorkload(name) || IsScanWorkload(name) ||
                          IsMixWorkload(name) || name == "overwrite";
  if (needs_data && !loaded_) {
    absl::StatusOr<WorkloadResult> fill = Run("fillrandom", nullptr);
    if (!fill.ok()) return fill.status();
    if (load != nullptr) *load = *std::move(fill);
  }

  WorkloadResult r;
  r.name = std::string(name);
  const ReadStats before = db_->GetReadStats();
  const IoCounts io_before = env_->counts();
  const int64_t device_before = ProcessDeviceReadBytes();
  absl::Status s;
  if (name == "fillseq" || name == "fillrandom") {
    s = Fill(name == "fillrandom", &r);
  } else if (name == "overwrite") {
    s = Overwrite(&r);
  } else if (IsReadWorkload(name)) {
    s = PointReads(name, &r);
  } else if (IsMixWorkload(name)) {
    s = Mix(name == "ycsba" ? 50 : 5, &r);
  } else if (name == "seekrandom") {
    s = Scans(/*max_entries=*/0, /*bounded=*/false, &r);
  } else if (name == "scanrandom") {
    s = Scans(/*max_entries=*/100, /*bounded=*/false, &r);
  } else if (name == "seekbounded") {
    s = Scans(/*max_entries=*/100, /*bounded=*/true, &r);
  } else if (name == "seekempty") {
    s = EmptySeeks(&r);
  } else if (name == "seekprefix" || name == "seekprefixmissing") {
    s = PrefixSeeks(name == "seekprefixmissing", &r);
  } else if (name == "readseq" || name == "readreverse") {
    s = ReadSeq(name == "readreverse", &r);
  } else if (name == "compact") {
    s = Compact(&r);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown workload '", std::string(name), "'"));
  }
  if (!s.ok()) return AsStatus(s, r.name);
  if (r.point_reads || IsScanWorkload(name)) {
    r.stats = db_->GetReadStats();
    r.stats -= before;
    r.theoretical_fpr = theoretical_fpr_;
  }
  if (absl::Status v = CheckFound(r); !v.ok()) return v;
  if (config_.settle &&
      (name == "fillseq" || name == "fillrandom" || name == "overwrite")) {
    r.settle_seconds = Settle();
  }
  if (name == "fillseq" || name == "fillrandom" || name == "overwrite") {
    user_bytes_written_ += r.bytes;
    r.writes = r.ops;
    r.longest_write_us = r.latency_us.Max();
  } else if (IsMixWorkload(name)) {
    user_bytes_written_ +=
        r.writes * uint64_t(config_.key_size + config_.value_size);
  }
  r.io = env_->counts() - io_before;
  const int64_t device_after = ProcessDeviceReadBytes();
  if (device_before >= 0 && device_after >= 0) {
    r.device_read_bytes = device_after - device_before;
  }
  r.files_per_level = Shape();
  return r;
}

double RunSummary::WriteAmplification() const {
  if (user_bytes_written == 0) return 0;
  return double(io.table_bytes_written + io.log_bytes_written) /
         double(user_bytes_written);
}

double RunSummary::SpaceAmplification() const {
  if (live_user_bytes == 0) return 0;
  return double(live_table_bytes) / double(live_user_bytes);
}

RunSummary Runner::Summary() {
  RunSummary sum;
  sum.user_bytes_written = user_bytes_written_;
  sum.io = env_->counts();
  if (absl::StatusOr<std::vector<std::string>> names = env_->GetChildren(path_);
      names.ok()) {
    for (const std::string& n : *names) {
      if (n.size() < 4 || n.compare(n.size() - 4, 4, ".sst") != 0) continue;
      absl::StatusOr<uint64_t> size = env_->GetFileSize(path_ + "/" + n);
      if (size.ok()) sum.live_table_bytes += *size;
    }
  }
  // Every fill writes the whole key space, and nothing is deleted.
  if (loaded_) {
    sum.live_user_bytes =
        config_.num * uint64_t(config_.key_size + config_.value_size);
  }
  auto number = [&](std::string_view property) -> uint64_t {
    std::optional<std::string> v = db_->GetProperty(property);
    return v.has_value() ? std::strtoull(v->c_str(), nullptr, 10) : 0;
  };
  sum.filter_bytes = number("sift.filter-memory-bytes");
  sum.index_bytes = number("sift.index-memory-bytes");
  sum.peak_rss_bytes = PeakRssBytes();
  return sum;
}

absl::Status Runner::CheckFound(const WorkloadResult& r) const {
  // Every key of the key space was written by this run and none is ever
  // deleted, so a read that misses a present key (or finds an absent one) is
  // a wrong answer, not a number to report.
  if (config_.use_existing_db) return absl::OkStatus();
  const bool want_all = r.name == "readrandom" || r.name == "readhot" ||
                        r.name == "multireadrandom" || r.name == "seekrandom" ||
                        r.name == "scanrandom" || r.name == "seekbounded" ||
                        r.name == "seekprefix";
  // The mixes update keys already loaded: every Get finds its key.
  const bool mix = IsMixWorkload(r.name);
  if ((want_all && r.found != r.ops) || (mix && r.found != r.ops - r.writes) ||
      ((r.name == "readmissing" || r.name == "multireadmissing" ||
        r.name == "seekprefixmissing" || r.name == "seekempty") &&
       r.found != 0) ||
      ((r.name == "readseq" || r.name == "readreverse") &&
       r.found != config_.num)) {
    return absl::InternalError(
        absl::StrCat(r.name, " found ", r.found, " keys in ", r.ops,
                     " operations: the database returned wrong answers"));
  }
  return absl::OkStatus();
}

absl::Status Runner::Fill(bool random, WorkloadResult* r) {
  const RandomOrder order(config_.num, config_.seed);
  const uint64_t value_base = write_counter_;
  write_counter_ += config_.num;
  Progress progress(r->name, config_.num, config_.progress);
  ParallelResult pr;
  const WriteOptions wo;
  absl::Status s = RunParallel(
      config_.threads, config_.num, &progress,
      [&](int, uint64_t begin, uint64_t end, Histogram* lat,
          Progress* prog) -> absl::Status {
        std::string key(config_.key_size, '\0');
        for (uint64_t i = begin; i < end; ++i) {
          keys_.Present(random ? order.At(i) : i, key.data());
          const std::string_view value = values_.Get(value_base + i);
          const uint64_t t0 = NowNanos();
          absl::Status ps = db_->Put(wo, key, value);
          lat->Add(double(NowNanos() - t0) / 1e3);
          if (!ps.ok()) return ps;
          if ((i - begin + 1) % kProgressBatch == 0) prog->Add(kProgressBatch);
        }
        return absl::OkStatus();
      },
      &pr);
  if (!s.ok()) return s;
  loaded_ = true;
  r->ops = config_.num;
  r->bytes = config_.num * (config_.key_size + config_.value_size);
  r->seconds = pr.seconds;
  r->latency_us = std::move(pr.latency_us);
  return absl::OkStatus();
}

absl::Status Runner::Overwrite(WorkloadResult* r) {
  const uint64_t value_base = write_counter_;
  write_counter_ += config_.num;
  Progress progress(r->name, config_.num, config_.progress);
  ParallelResult pr;
  const WriteOptions wo;
  absl::Status s = RunParallel(
      config_.threads, config_.num, &progress,
      [&](int thread, uint64_t begin, uint64_t end, Histogram* lat,
          Progress* prog) -> absl::Status {
        Random rnd(config_.seed * 1000003 + kOverwriteSeed * 101 + thread);
        std::string key(config_.key_size, '\0');
        for (uint64_t i = begin; i < end; ++i) {
          keys_.Present(rnd.Uniform(config_.num), key.data());
          const std::string_view value = values_.Get(value_base + i);
          const uint64_t t0 = NowNanos();
          absl::Status ps = db_->Put(wo, key, value);
          lat->Add(double(NowNanos() - t0) / 1e3);
          if (!ps.ok()) return ps;
          if ((i - begin + 1) % kProgressBatch == 0) prog->Add(kProgressBatch);
        }
        return absl::OkStatus();
      },
      &pr);
  if (!s.ok()) return s;
  r->ops = config_.num;
  r->bytes = config_.num * (config_.key_size + config_.value_size);
  r->seconds = pr.seconds;
  r->latency_us = std::move(pr.latency_us);
  return absl::OkStatus();
}

absl::Status Runner::PointReads(std::string_view name, WorkloadResult* r) {
  // multiread*: the same keys as read*, looked up config_.batch_size at a
  // time with MultiGet; latency is per key (batch time / batch size).
  const bool multi = name.starts_with("multi");
  if (multi) name.remove_prefix(5);
  const bool missing = name == "readmissing";
  const bool hot = name == "readhot";
  std::optional<ZipfianGenerator> zipf;
  if (hot) zipf.emplace(config_.num, 0.99);
  const uint64_t kind_seed = missing ? kReadMissingSeed
                             : hot   ? kReadHotSeed
                                     : kReadRandomSeed;
  std::atomic<uint64_t> found{0}, bytes{0};
  Progress progress(r->name, config_.reads, config_.progress);
  ParallelResult pr;
  const ReadOptions ro;
  absl::Status s = RunParallel(
      config_.threads, config_.reads, &progress,
      [&](int thread, uint64_t begin, uint64_t end, Histogram* lat,
          Progress* prog) -> absl::Status {
        Random rnd(config_.seed * 1000003 + kind_seed * 101 + thread);
        std::string key(config_.key_size, '\0');
        std::string value;
        uint64_t my_found = 0, my_bytes = 0;
        if (multi) {
          return MultiReads(rnd, begin, end, missing, lat, prog, &found,
                            &bytes);
        }
        for (uint64_t i = begin; i < end; ++i) {
          if (hot) {
            keys_.Present(zipf->Next(rnd.NextDouble()), key.data());
          } else if (missing) {
            keys_.Missing(rnd.Uniform(config_.num), key.data());
          } else {
            keys_.Present(rnd.Uniform(config_.num), key.data());
          }
          const uint64_t t0 = NowNanos();
          absl::Status gs = db_->Get(ro, key, &value);
          lat->Add(double(NowNanos() - t0) / 1e3);
          if (gs.ok()) {
            ++my_found;
            my_bytes += key.size() + value.size();
          } else if (!absl::IsNotFound(gs)) {
            return gs;
          }
          if ((i - begin + 1) % kProgressBatch == 0) prog->Add(kProgressBatch);
        }
        found += my_found;
        bytes += my_bytes;
        return absl::OkStatus();
      },
      &pr);
  if (!s.ok()) return s;
  r->ops = config_.reads;
  r->found = found;
  r->bytes = bytes;
  r->seconds = pr.seconds;
  r->latency_us = std::move(pr.latency_us);
  r->point_reads = true;
  return absl::OkStatus();
}

absl::Status Runner::Mix(int update_percent, WorkloadResult* r) {
  // Keys zipfian over the loaded key space (YCSB's request distribution, the
  // generator readhot uses); each update writes a value no earlier workload
  // wrote.
  const ZipfianGenerator zipf(config_.num, 0.99);
  const uint64_t value_base = write_counter_;
  write_counter_ += config_.reads;
  std::atomic<uint64_t> found{0}, writes{0}, bytes{0};
  std::vector<double> longest_write(static_cast<size_t>(config_.threads), 0);
  Progress progress(r->name, config_.reads, config_.progress);
  ParallelResult pr;
  const ReadOptions ro;
  const WriteOptions wo;
  absl::Status s = RunParallel(
      config_.threads, config_.reads, &progress,
      [&](int thread, uint64_t begin, uint64_t end, Histogram* lat,
          Progress* prog) -> absl::Status {
        Random rnd(config_.seed * 1000003 + kMixSeed * 101 + thread);
        std::string key(config_.key_size, '\0');
        std::string value;
        uint64_t my_found = 0, my_writes = 0, my_bytes = 0;
        double my_longest = 0;
        for (uint64_t i = begin; i < end; ++i) {
          keys_.Present(zipf.Next(rnd.NextDouble()), key.data());
          const bool update =
              rnd.Uniform(100) < static_cast<uint64_t>(update_percent);
          const uint64_t t0 = NowNanos();
          absl::Status os;
          if (update) {
            const std::string_view v = values_.Get(value_base + i);
            os = db_->Put(wo, key, v);
            const double us = double(NowNanos() - t0) / 1e3;
            lat->Add(us);
            my_longest = std::max(my_longest, us);
            if (!os.ok()) return os;
            ++my_writes;
            my_bytes += key.size() + v.size();
          } else {
            os = db_->Get(ro, key, &value);
            lat->Add(double(NowNanos() - t0) / 1e3);
            if (os.ok()) {
              ++my_found;
              my_bytes += key.size() + value.size();
            } else if (!absl::IsNotFound(os)) {
              return os;
            }
          }
          if ((i - begin + 1) % kProgressBatch == 0) prog->Add(kProgressBatch);
        }
        found += my_found;
        writes += my_writes;
        bytes += my_bytes;
        longest_write[static_cast<size_t>(thread)] = my_longest;
        return absl::OkStatus();
      },
      &pr);
  if (!s.ok()) return s;
  r->ops = config_.reads;
  r->found = found;
  r->writes = writes;
  r->bytes = bytes;
  r->longest_write_us =
      *std::max_element(longest_write.begin(), longest_write.end());
  r->seconds = pr.seconds;
  r->latency_us = std::move(pr.latency_us);
  r->point_reads = true;
  return absl::OkStatus();
}

absl::Status Runner::MultiReads(Random& rnd, uint64_t begin, uint64_t end,
                                bool missing, Histogram* lat, Progress* prog,
                                std::atomic<uint64_t>* found,
                                std::atomic<uint64_t>* bytes) {
  const ReadOptions ro;
  const size_t batch = static_cast<size_t>(config_.batch_size);
  std::vector<std::string> keys(batch, std::string(config_.key_size, '\0'));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  uint64_t my_found = 0, my_bytes = 0, since_progress = 0;
  for (uint64_t i = begin; i < end;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(batch, end - i));
    for (size_t j = 0; j < n; ++j) {
      if (missing) {
        keys_.Missing(rnd.Uniform(config_.num), keys[j].data());
      } else {
        keys_.Present(rnd.Uniform(config_.num), keys[j].data());
      }
    }
    const uint64_t t0 = NowNanos();
    const std::vector<absl::Status> statuses =
        db_->MultiGet(ro, absl::MakeConstSpan(views.data(), n), &values);
    lat->Add(double(NowNanos() - t0) / 1e3 / double(n));
    for (size_t j = 0; j < n; ++j) {
      if (statuses[j].ok()) {
        ++my_found;
        my_bytes += keys[j].size() + values[j].size();
      } else if (!absl::IsNotFound(statuses[j])) {
        return statuses[j];
      }
    }
    i += n;
    since_progress += n;
    if (since_progress >= kProgressBatch) {
      prog->Add(since_progress);
      since_progress = 0;
    }
  }
  *found += my_found;
  *bytes += my_bytes;
  return absl::OkStatus();
}

absl::Status Runner::RunScans(
    uint64_t stream, WorkloadResult* r,
    const std::function<void(Random& rnd, ScanPlan* plan)>& next_scan) {
  std::atomic<uint64_t> found{0}, entries{0}, bytes{0};
  Progress progress(r->name, config_.reads, config_.progress);
  ParallelResult pr;
  absl::Status s = RunParallel(
      config_.threads, config_.reads, &progress,
      [&](int thread, uint64_t begin, uint64_t end, Histogram* lat,
          Progress* prog) -> absl::Status {
        Random rnd(config_.seed * 1000003 + kSeekSeed * stream + thread);
        ScanPlan plan;  // its buffers are reused from scan to scan
        uint64_t my_found = 0, my_entries = 0, my_bytes = 0;
        for (uint64_t i = begin; i < end; ++i) {
          plan.options = ReadOptions();
          next_scan(rnd, &plan);
          const uint64_t t0 = NowNanos();
          // An iterator per scan, as YCSB and most applications make them.
          std::unique_ptr<Iterator> it = db_->NewIterator(plan.options);
          it->Seek(plan.seek);
          if (plan.found_if_at_seek_key && it->Valid() &&
              it->key() == plan.seek) {
            ++my_found;
          }
          uint64_t j = 0;
          for (; j < plan.max_entries && it->Valid(); it->Next(), ++j) {
            my_bytes += it->key().size() + it->value().size();
          }
          if (absl::Status st = it->status(); !st.ok()) return st;
          it.reset();
          lat->Add(double(NowNanos() - t0) / 1e3);
          if (!plan.found_if_at_seek_key && j > 0) ++my_found;
          my_entries += j;
          if ((i - begin + 1) % kProgressBatch == 0) prog->Add(kProgressBatch);
        }
        found += my_found;
        entries += my_entries;
        bytes += my_bytes;
        return absl::OkStatus();
      },
      &pr);
  if (!s.ok()) return s;
  r->ops = config_.reads;
  r->found = found;
  r->entries = entries;
  r->bytes = bytes;
  r->seconds = pr.seconds;
  r->latency_us = std::move(pr.latency_us);
  return absl::OkStatus();
}

absl::Status Runner::Scans(uint64_t max_entries, bool bounded,
                           WorkloadResult* r) {
  return RunScans(101, r, [&](Random& rnd, ScanPlan* plan) {
    const uint64_t k = rnd.Uniform(config_.num);
    plan->key.resize(config_.key_size);
    keys_.Present(k, plan->key.data());
    plan->seek = plan->key;
    // Entries per scan: the Seek's and one Next (seekrandom), or uniform in
    // 1..max_entries (the YCSB E shape).
    plan->max_entries = max_entries == 0 ? 2 : 1 + rnd.Uniform(max_entries);
    plan->found_if_at_seek_key = true;
    if (bounded) {
      // Both bounds, as a range query gives them (and as a range filter
      // needs them to be asked).
      plan->upper.resize(config_.key_size);
      keys_.Present(std::min(k + 100, config_.num), plan->upper.data());
      plan->options.iterate_lower_bound = plan->key;
      plan->options.iterate_upper_bound = plan->upper;
    }
  });
}

absl::Status Runner::PrefixSeeks(bool missing, WorkloadResult* r) {
  if (config_.prefix_len <= 0 || config_.prefix_len >= config_.key_size) {
    return absl::InvalidArgumentError(
        "the seekprefix workloads need 0 < --prefix_len < --key_size");
  }
  const size_t prefix_len = static_cast<size_t>(config_.prefix_len);
  return RunScans(103, r, [&](Random& rnd, ScanPlan* plan) {
    plan->key.resize(config_.key_size);
    keys_.Present(rnd.Uniform(config_.num), plan->key.data());
    plan->key.resize(prefix_len);  // the lower bound: the whole prefix
    if (missing) plan->key.back() = ':';
    // The prefix's successor: its digits or ':' are never 0xff.
    plan->upper = plan->key;
    plan->upper.back() = static_cast<char>(plan->upper.back() + 1);
    plan->options.iterate_lower_bound = plan->key;
    plan->options.iterate_upper_bound = plan->upper;
    plan->seek = plan->key;
    plan->max_entries = ~uint64_t{0};
    plan->found_if_at_seek_key = false;
  });
}

absl::Status Runner::EmptySeeks(WorkloadResult* r) {
  if (!keys_.binary() || config_.range_len < 1 ||
      config_.range_len >= (uint64_t{1} << KeySpace::kBinaryShift)) {
    return absl::InvalidArgumentError(
        "seekempty needs --key_format binary and 1 <= --range_len < 65536");
  }
  return RunScans(107, r, [&](Random& rnd, ScanPlan* plan) {
    plan->key.resize(config_.key_size);
    plan->upper.resize(config_.key_size);
    keys_.EmptyRange(rnd.Uniform(config_.num), config_.range_len,
                     plan->key.data(), plan->upper.data());
    plan->options.iterate_lower_bound = plan->key;
    plan->options.iterate_upper_bound = plan->upper;
    plan->seek = plan->key;
    plan->max_entries = ~uint64_t{0};
    plan->found_if_at_seek_key = false;
  });
}

absl::Status Runner::ReadSeq(bool reverse, WorkloadResult* r) {
  // One walk over the whole database, timed per step.
  Progress progress(r->name, config_.num, config_.progress);
  const uint64_t start = NowNanos();
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  uint64_t n = 0, bytes = 0;
  uint64_t t0 = NowNanos();
  for (reverse ? it->SeekToLast() : it->SeekToFirst(); it->Valid();
       reverse ? it->Prev() : it->Next()) {
    const uint64_t t1 = NowNanos();
    r->latency_us.Add(double(t1 - t0) / 1e3);
    t0 = t1;
    bytes += it->key().size() + it->value().size();
    if (++n % kProgressBatch == 0) progress.Add(kProgressBatch);
  }
  if (absl::Status s = it->status(); !s.ok()) return s;
  r->seconds = double(NowNanos() - start) / 1e9;
  r->ops = n;
  r->found = n;
  r->entries = n;
  r->bytes = bytes;
  return absl::OkStatus();
}

absl::Status Runner::Compact(WorkloadResult* r) {
  const uint64_t start = NowNanos();
  absl::Status s = db_->CompactRange(nullptr, nullptr);
  r->seconds = double(NowNanos() - start) / 1e9;
  r->latency_us.Add(r->seconds * 1e6);
  r->ops = 1;
  return s;
}

}  // namespace sift::bench
