// Fuzz target: the block decoder (table/block.h) and stored-block decoding
// (table/format.h). The first input byte picks the mode:
//   bit 0 clear: the rest is a block's uncompressed contents;
//   bit 0 set:   the rest is a stored block (contents, type byte, checksum),
//                decoded (and decompressed) without checking the checksum.
// Property: decoding, scanning both ways and seeking never crash and never
// read out of bounds (the sanitizers check every byte touched); damage shows
// as an error status. Key order is the writer's promise and is not checked
// on read, so it is not a property here.

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "table/block.h"
#include "table/format.h"
#include "tests/fuzz/fuzz_util.h"
#include "util/comparator.h"

namespace {

void Exercise(sift::BlockContents contents) {
  static const std::string kName = "fuzz.sst";
  absl::StatusOr<std::unique_ptr<sift::Block>> block =
      sift::Block::Create(std::move(contents), 0, kName);
  if (!block.ok()) return;
  const sift::Comparator* cmp = sift::BytewiseComparator();
  std::unique_ptr<sift::BlockIterator> it = (*block)->NewIterator(cmp, &kName);

  std::string last;  // a key from the block, to seek to
  int n = 0;
  for (it->SeekToFirst(); it->Valid() && n < 100000; it->Next(), ++n) {
    sift::fuzz::Touch(it->key());
    sift::fuzz::Touch(it->value());
    last.assign(it->key().data(), it->key().size());
  }
  n = 0;
  for (it->SeekToLast(); it->Valid() && n < 1000; it->Prev(), ++n) {
    sift::fuzz::Touch(it->key());
  }
  for (const std::string& target :
       {std::string(), last, std::string("m"), std::string(64, '\xff')}) {
    it->Seek(target);
    if (it->Valid()) {
      sift::fuzz::Touch(it->value());
      it->Next();
      if (it->Valid()) it->Prev();
    }
  }
  (void)it->status();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sift::fuzz::FuzzInput in(data, size);
  const uint8_t mode = in.Byte();
  const std::string_view rest = in.Rest();
  if ((mode & 1) == 0) {
    sift::BlockContents contents;
    contents.data = std::make_unique<char[]>(rest.size());
    std::memcpy(contents.data.get(), rest.data(), rest.size());
    contents.size = rest.size();
    Exercise(std::move(contents));
    return 0;
  }
  if (rest.size() < sift::kBlockTrailerSize) return 0;
  sift::BlockHandle handle;
  handle.offset = 0;
  handle.size = rest.size() - sift::kBlockTrailerSize;
  absl::StatusOr<sift::BlockContents> contents = sift::DecodeStoredBlock(
      rest, handle, /*verify_checksum=*/false, "fuzz.sst");
  if (contents.ok()) Exercise(*std::move(contents));
  return 0;
}
