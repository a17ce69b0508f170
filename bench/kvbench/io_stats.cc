#include "bench/kvbench/io_stats.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

namespace sift::bench {
namespace {

uint64_t Load(const std::atomic<uint64_t>& c) {
  return c.load(std::memory_order_relaxed);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

class CountingWritableFile final : public WritableFile {
 public:
  CountingWritableFile(std::unique_ptr<WritableFile> target,
                       std::atomic<uint64_t>* bytes)
      : target_(std::move(target)), bytes_(bytes) {}
  absl::Status Append(std::string_view data) override {
    bytes_->fetch_add(data.size(), std::memory_order_relaxed);
    return target_->Append(data);
  }
  absl::Status Flush() override { return target_->Flush(); }
  absl::Status Sync() override { return target_->Sync(); }
  absl::Status Close() override { return target_->Close(); }

 private:
  std::unique_ptr<WritableFile> target_;
  std::atomic<uint64_t>* const bytes_;
};

class DirectReadCountingFile final : public RandomAccessFile {
 public:
  DirectReadCountingFile(std::unique_ptr<RandomAccessFile> target,
                         IoCountingEnv::Counters* counters)
      : target_(std::move(target)), counters_(counters) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    absl::Status s = target_->Read(offset, n, result, scratch);
    counters_->direct_reads.fetch_add(1, std::memory_order_relaxed);
    counters_->direct_read_bytes.fetch_add(result->size(),
                                           std::memory_order_relaxed);
    return s;
  }
  bool StableReads() const override { return target_->StableReads(); }

 private:
  std::unique_ptr<RandomAccessFile> target_;
  IoCountingEnv::Counters* const counters_;
};

}  // namespace

IoCounts IoCounts::operator-(const IoCounts& o) const {
  IoCounts d;
  d.table_bytes_written = table_bytes_written - o.table_bytes_written;
  d.log_bytes_written = log_bytes_written - o.log_bytes_written;
  d.other_bytes_written = other_bytes_written - o.other_bytes_written;
  d.direct_reads = direct_reads - o.direct_reads;
  d.direct_read_bytes = direct_read_bytes - o.direct_read_bytes;
  return d;
}

IoCounts IoCountingEnv::counts() const {
  IoCounts c;
  c.table_bytes_written = Load(counters_.table_bytes);
  c.log_bytes_written = Load(counters_.log_bytes);
  c.other_bytes_written = Load(counters_.other_bytes);
  c.direct_reads = Load(counters_.direct_reads);
  c.direct_read_bytes = Load(counters_.direct_read_bytes);
  return c;
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
IoCountingEnv::NewRandomAccessFile(const std::string& f) {
  return target()->NewRandomAccessFile(f);
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
IoCountingEnv::NewRandomAccessFile(const std::string& f,
                                   RandomAccessMode mode) {
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
      target()->NewRandomAccessFile(f, mode);
  if (!file.ok() || mode != RandomAccessMode::kDirect) return file;
  return std::make_unique<DirectReadCountingFile>(*std::move(file), &counters_);
}

absl::StatusOr<std::unique_ptr<WritableFile>> IoCountingEnv::NewWritableFile(
    const std::string& f) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      target()->NewWritableFile(f);
  if (!file.ok()) return file;
  return Wrap(f, *std::move(file));
}

absl::StatusOr<std::unique_ptr<WritableFile>> IoCountingEnv::NewAppendableFile(
    const std::string& f) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      target()->NewAppendableFile(f);
  if (!file.ok()) return file;
  return Wrap(f, *std::move(file));
}

absl::StatusOr<std::unique_ptr<WritableFile>> IoCountingEnv::NewLogFile(
    const std::string& f) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = target()->NewLogFile(f);
  if (!file.ok()) return file;
  return Wrap(f, *std::move(file));
}

std::unique_ptr<WritableFile> IoCountingEnv::Wrap(
    const std::string& f, std::unique_ptr<WritableFile> file) {
  std::atomic<uint64_t>* bytes = EndsWith(f, ".sst")   ? &counters_.table_bytes
                                 : EndsWith(f, ".log") ? &counters_.log_bytes
                                                       : &counters_.other_bytes;
  return std::make_unique<CountingWritableFile>(std::move(file), bytes);
}

int64_t ProcessDeviceReadBytes() {
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return -1;
  char line[128];
  int64_t value = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    long long v = 0;
    if (std::sscanf(line, "read_bytes: %lld", &v) == 1) {
      value = v;
      break;
    }
  }
  std::fclose(f);
  return value;
}

uint64_t PeakRssBytes() {
  struct rusage ru;
  std::memset(&ru, 0, sizeof(ru));
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux: KiB
}

}  // namespace sift::bench
