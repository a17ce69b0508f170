// Fuzz target: the WAL reader (db/log_reader.h) and what recovery does with
// each record: parse it as a WriteBatch and insert it into a memtable. The
// first input byte picks the mode; the rest is a log file.
//   bit 0 set: verify record checksums (clear: skip them, so mutations reach
//              the framing and batch decoding behind them);
//   bits 1-7:  start reading at that many 256-byte steps into the file
//              (exercises resynchronizing in the middle of a log).
// Properties: no crash, no out-of-bounds read; every record returned fits in
// the file; damage is reported with a positive byte count; a batch either
// fails to parse or inserts exactly Count() entries.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "db/dbformat.h"
#include "db/log_reader.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "sift/write_batch.h"
#include "tests/fuzz/fuzz_util.h"
#include "util/comparator.h"

namespace {

class CountingReporter final : public sift::log::Reader::Reporter {
 public:
  void Corruption(size_t bytes, const absl::Status& status) override {
    FUZZ_CHECK(!status.ok());
    (void)bytes;
    ++reports;
  }
  int reports = 0;
};

class CountingHandler final : public sift::WriteBatch::Handler {
 public:
  void Put(std::string_view key, std::string_view value) override {
    sift::fuzz::Touch(key);
    sift::fuzz::Touch(value);
    ++n;
  }
  void Delete(std::string_view key) override {
    sift::fuzz::Touch(key);
    ++n;
  }
  uint32_t n = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sift::fuzz::FuzzInput in(data, size);
  const uint8_t mode = in.Byte();
  const std::string_view log = in.Rest();
  sift::fuzz::StringSequentialFile file(log);
  CountingReporter reporter;
  sift::log::Reader reader(&file, &reporter, (mode & 1) != 0,
                           static_cast<uint64_t>(mode >> 1) * 256);
  const sift::InternalKeyComparator icmp(sift::BytewiseComparator());
  sift::MemTable mem(icmp);
  std::string scratch;
  std::string_view record;
  uint64_t total = 0;
  // Recovery numbers entries from each batch's header; here every batch gets
  // fresh numbers instead, as the memtable requires (key, sequence) to be
  // unique and the input may repeat them.
  sift::SequenceNumber next_sequence = 1;
  while (reader.ReadRecord(&record, &scratch)) {
    total += record.size();
    FUZZ_CHECK(total <= log.size());
    FUZZ_CHECK(reader.LastRecordOffset() < log.size());
    sift::WriteBatch batch;
    if (!sift::WriteBatchInternal::SetContents(&batch, record).ok()) continue;
    CountingHandler handler;
    const bool parsed = batch.Iterate(&handler).ok();
    sift::WriteBatchInternal::SetSequence(&batch, next_sequence);
    next_sequence +=
        std::max(handler.n, sift::WriteBatchInternal::Count(&batch)) + 1;
    const uint64_t before = mem.NumEntries();
    const bool inserted =
        sift::WriteBatchInternal::InsertInto(&batch, &mem).ok();
    if (inserted) {
      // InsertInto checks the count too, so success means every update.
      FUZZ_CHECK(parsed);
      FUZZ_CHECK(handler.n == sift::WriteBatchInternal::Count(&batch));
      FUZZ_CHECK(mem.NumEntries() - before == handler.n);
    }
  }
  FUZZ_CHECK(reader.status().ok());
  std::unique_ptr<sift::Iterator> it = mem.NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) sift::fuzz::Touch(it->key());
  return 0;
}
