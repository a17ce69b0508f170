// Fuzz target: the table reader (table/table.h): footer, index, filter and
// properties decoding at Open, then data blocks through iterators and Get.
// The first input byte picks the mode; the rest is a table file.
//   bit 0 set: before opening, recompute the footer checksum and the trailer
//              checksums of the blocks the footer points at, so mutations
//              reach the decoders behind the checksums;
//   bit 1 set: read data blocks with verify_checksums=true (else false).
// Property: no crash and no out-of-bounds read, whatever the bytes; with
// checksums verified, every value read comes from the file intact or the
// read reports DataLoss.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sift/options.h"
#include "table/format.h"
#include "table/table.h"
#include "table/table_options.h"
#include "tests/fuzz/fuzz_util.h"
#include "util/coding.h"
#include "util/hash.h"

namespace {

// Recompute the checksum of the stored block at [offset, offset+size) plus
// its trailer, if it lies inside *file.
void FixBlockChecksum(std::string* file, uint64_t offset, uint64_t size) {
  if (offset > file->size() || size > file->size() - offset ||
      file->size() - offset - size < sift::kBlockTrailerSize) {
    return;
  }
  const uint32_t crc = sift::Checksum32(std::string_view(*file).substr(
      static_cast<size_t>(offset), static_cast<size_t>(size) + 1));
  std::string fixed;
  sift::PutFixed32(&fixed, crc);
  file->replace(static_cast<size_t>(offset + size + 1), 4, fixed);
}

void FixChecksums(std::string* file) {
  constexpr size_t kFooter = sift::Footer::kEncodedLength;
  if (file->size() < kFooter) return;
  const size_t footer = file->size() - kFooter;
  // Handles: filter, properties, index (fixed64 offset, fixed64 size each).
  for (int i = 0; i < 3; ++i) {
    const char* p = file->data() + footer + 16 * i;
    FixBlockChecksum(file, sift::DecodeFixed64(p), sift::DecodeFixed64(p + 8));
  }
  std::string crc;
  sift::PutFixed32(
      &crc, sift::Checksum32(std::string_view(*file).substr(footer, 52)));
  file->replace(footer + 52, 4, crc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sift::fuzz::FuzzInput in(data, size);
  const uint8_t mode = in.Byte();
  std::string file(in.Rest());
  if (mode & 1) FixChecksums(&file);

  sift::TableOptions options;
  auto source = std::make_unique<sift::fuzz::StringRandomAccessFile>(file);
  absl::StatusOr<std::unique_ptr<sift::Table>> table =
      sift::Table::Open(options, std::move(source), file.size(), "fuzz.sst");
  if (!table.ok()) return 0;

  sift::ReadOptions ro;
  ro.verify_checksums = (mode & 2) != 0;
  ro.fill_cache = false;
  std::vector<std::string> keys;
  {
    std::unique_ptr<sift::Iterator> it = (*table)->NewIterator(ro);
    int n = 0;
    for (it->SeekToFirst(); it->Valid() && n < 20000; it->Next(), ++n) {
      sift::fuzz::Touch(it->value());
      if (keys.size() < 64) keys.emplace_back(it->key());
    }
    n = 0;
    for (it->SeekToLast(); it->Valid() && n < 200; it->Prev(), ++n) {
      sift::fuzz::Touch(it->key());
    }
    (void)it->status();
  }
  keys.emplace_back("");
  keys.emplace_back("zzzz");
  sift::ReadStats stats;
  for (const std::string& key : keys) {
    (void)(*table)->Get(
        ro, key,
        [](std::string_view k, std::string_view v) {
          sift::fuzz::Touch(k);
          sift::fuzz::Touch(v);
          return true;
        },
        &stats);
    (void)(*table)->ApproximateOffsetOf(key);
  }
  (void)(*table)->FilterMemoryUsage();
  return 0;
}
