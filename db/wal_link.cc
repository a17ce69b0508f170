#include "db/wal_link.h"

#include "absl/strings/str_cat.h"
#include "util/coding.h"

namespace sift {
namespace {

constexpr uint64_t kMagic = ~uint64_t{0};
constexpr size_t kMagicSize = 8;

}  // namespace

bool WalLink::IsLink(std::string_view record) {
  return record.size() >= kMagicSize && DecodeFixed64(record.data()) == kMagic;
}

void WalLink::EncodeTo(std::string* dst) const {
  PutFixed64(dst, kMagic);
  dst->push_back(static_cast<char>(kFormatVersion));
  PutVarint64(dst, previous_log_);
  PutVarint64(dst, previous_records_);
}

absl::Status WalLink::DecodeFrom(std::string_view record) {
  if (!IsLink(record)) {
    return absl::DataLossError("WAL link record: bad magic");
  }
  std::string_view input = record.substr(kMagicSize);
  if (input.empty()) return absl::DataLossError("WAL link record: no version");
  const uint8_t version = static_cast<uint8_t>(input[0]);
  if (version == 0 || version > kFormatVersion) {
    return absl::DataLossError(
        absl::StrCat("WAL link record: unsupported format version ", version,
                     " (this build reads up to ", kFormatVersion, ")"));
  }
  input.remove_prefix(1);
  uint64_t previous_log = 0;
  uint64_t previous_records = 0;
  if (!GetVarint64(&input, &previous_log)) {
    return absl::DataLossError("WAL link record: previous log number");
  }
  if (!GetVarint64(&input, &previous_records)) {
    return absl::DataLossError("WAL link record: previous record count");
  }
  if (!input.empty()) {
    return absl::DataLossError(absl::StrCat("WAL link record: ", input.size(),
                                            " bytes after the last field"));
  }
  previous_log_ = previous_log;
  previous_records_ = previous_records;
  return absl::OkStatus();
}

absl::Status WalLink::DecodeAt(std::string_view record, uint64_t offset) {
  if (offset != 0) {
    return absl::DataLossError("WAL link record after the start of the log");
  }
  return DecodeFrom(record);
}

WalLink::Check WalLink::CheckAgainst(const std::optional<ReadBack>& previous,
                                     uint64_t min_log_number) const {
  if (previous_log_ < min_log_number) return Check::kSatisfied;
  if (!previous || previous->number != previous_log_) {
    return Check::kPredecessorMissing;
  }
  return previous->records < previous_records_ ? Check::kPredecessorShort
                                               : Check::kSatisfied;
}

}  // namespace sift
