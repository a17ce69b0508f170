#include "util/counting_env.h"

#include <utility>

namespace sift {
namespace {

void Bump(std::atomic<uint64_t>& c, uint64_t n) {
  c.fetch_add(n, std::memory_order_relaxed);
}

class CountingSequentialFile final : public SequentialFile {
 public:
  CountingSequentialFile(std::unique_ptr<SequentialFile> target,
                         CountingEnv::Counters* counters)
      : target_(std::move(target)), counters_(counters) {}

  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    absl::Status s = target_->Read(n, result, scratch);
    Bump(counters_->sequential_reads, 1);
    if (s.ok()) Bump(counters_->sequential_read_bytes, result->size());
    return s;
  }
  absl::Status Skip(uint64_t n) override { return target_->Skip(n); }

 private:
  const std::unique_ptr<SequentialFile> target_;
  CountingEnv::Counters* const counters_;
};

class CountingRandomAccessFile final : public RandomAccessFile {
 public:
  CountingRandomAccessFile(std::unique_ptr<RandomAccessFile> target,
                           CountingEnv::Counters* counters)
      : target_(std::move(target)), counters_(counters) {}

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    absl::Status s = target_->Read(offset, n, result, scratch);
    Bump(counters_->random_reads, 1);
    if (s.ok()) Bump(counters_->random_read_bytes, result->size());
    return s;
  }
  // A transparent wrapper: a mapped file stays one (and its readers still
  // parse blocks in place).
  bool StableReads() const override { return target_->StableReads(); }

 private:
  const std::unique_ptr<RandomAccessFile> target_;
  CountingEnv::Counters* const counters_;
};

class CountingWritableFile final : public WritableFile {
 public:
  CountingWritableFile(std::unique_ptr<WritableFile> target,
                       CountingEnv::Counters* counters)
      : target_(std::move(target)), counters_(counters) {}

  absl::Status Append(std::string_view data) override {
    Bump(counters_->writes, 1);
    Bump(counters_->write_bytes, data.size());
    return target_->Append(data);
  }
  absl::Status Flush() override { return target_->Flush(); }
  absl::Status Sync() override {
    Bump(counters_->syncs, 1);
    return target_->Sync();
  }
  absl::Status Close() override { return target_->Close(); }

 private:
  const std::unique_ptr<WritableFile> target_;
  CountingEnv::Counters* const counters_;
};

// Wrap a successfully opened file.
template <typename Wrapper, typename File>
absl::StatusOr<std::unique_ptr<File>> Wrap(
    absl::StatusOr<std::unique_ptr<File>> file,
    CountingEnv::Counters* counters) {
  if (!file.ok()) return file.status();
  return std::make_unique<Wrapper>(*std::move(file), counters);
}

}  // namespace

void CountingEnv::Reset() {
  for (std::atomic<uint64_t>* c :
       {&counters_.random_reads, &counters_.random_read_bytes,
        &counters_.sequential_reads, &counters_.sequential_read_bytes,
        &counters_.writes, &counters_.write_bytes, &counters_.syncs}) {
    c->store(0, std::memory_order_relaxed);
  }
}

absl::StatusOr<std::unique_ptr<SequentialFile>> CountingEnv::NewSequentialFile(
    const std::string& fname) {
  return Wrap<CountingSequentialFile>(target()->NewSequentialFile(fname),
                                      &counters_);
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
CountingEnv::NewRandomAccessFile(const std::string& fname) {
  return Wrap<CountingRandomAccessFile>(target()->NewRandomAccessFile(fname),
                                        &counters_);
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
CountingEnv::NewRandomAccessFile(const std::string& fname,
                                 RandomAccessMode mode) {
  return Wrap<CountingRandomAccessFile>(
      target()->NewRandomAccessFile(fname, mode), &counters_);
}

absl::StatusOr<std::unique_ptr<WritableFile>> CountingEnv::NewWritableFile(
    const std::string& fname) {
  return Wrap<CountingWritableFile>(target()->NewWritableFile(fname),
                                    &counters_);
}

absl::StatusOr<std::unique_ptr<WritableFile>> CountingEnv::NewAppendableFile(
    const std::string& fname) {
  return Wrap<CountingWritableFile>(target()->NewAppendableFile(fname),
                                    &counters_);
}

absl::StatusOr<std::unique_ptr<WritableFile>> CountingEnv::NewLogFile(
    const std::string& fname) {
  return Wrap<CountingWritableFile>(target()->NewLogFile(fname), &counters_);
}

absl::Status CountingEnv::SyncDir(const std::string& dir) {
  Bump(counters_.syncs, 1);
  return target()->SyncDir(dir);
}

}  // namespace sift
