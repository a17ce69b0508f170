#include "tools/log_scan.h"

#include <algorithm>
#include <memory>

#include "db/log_reader.h"

namespace sift::tools {

namespace {

class ProblemCollector final : public log::Reader::Reporter {
 public:
  explicit ProblemCollector(std::vector<LogProblem>* out) : out_(out) {}

  void Report(const log::Problem& p) override {
    out_->push_back(
        {p.offset, p.reason, p.kind == log::Problem::Kind::kTornTail});
  }
  // Read errors also come here; ScanLog returns them from reader.status().
  void Corruption(size_t /*bytes*/, const absl::Status& /*status*/) override {}

 private:
  std::vector<LogProblem>* const out_;
};

}  // namespace

bool LogScanResult::damaged() const {
  return std::any_of(problems.begin(), problems.end(),
                     [](const LogProblem& p) { return !p.torn_tail; });
}

absl::Status ScanLog(
    Env* env, const std::string& fname,
    const std::function<void(uint64_t offset, std::string_view record)>&
        on_record,
    LogScanResult* result) {
  *result = LogScanResult();
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (!size.ok()) return size.status();
  result->file_size = *size;
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();

  ProblemCollector collector(&result->problems);
  log::Reader reader(file->get(), &collector, /*verify_checksums=*/true);
  std::string_view record;
  std::string scratch;
  while (reader.ReadRecord(&record, &scratch)) {
    ++result->num_records;
    on_record(reader.LastRecordOffset(), record);
  }
  // The reader reports a record's problems when it finds them, which for a
  // record damaged in a later fragment is after the fragment's own.
  std::stable_sort(result->problems.begin(), result->problems.end(),
                   [](const LogProblem& a, const LogProblem& b) {
                     return a.offset < b.offset;
                   });
  return reader.status();
}

}  // namespace sift::tools
