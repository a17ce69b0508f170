// Fuzz target: the MANIFEST record decoder (VersionEdit::DecodeFrom,
// db/version_edit.h). The input is one encoded edit.
// Properties: no crash, no out-of-bounds read; an edit that decodes
// re-encodes to bytes that decode to an edit encoding to the same bytes
// (EncodeTo . DecodeFrom is stable), and prints.

#include <cstdint>
#include <string>
#include <string_view>

#include "db/version_edit.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  sift::VersionEdit edit;
  if (!edit.DecodeFrom(input).ok()) return 0;
  std::string once;
  edit.EncodeTo(&once);
  sift::VersionEdit again;
  FUZZ_CHECK(again.DecodeFrom(once).ok());
  std::string twice;
  again.EncodeTo(&twice);
  FUZZ_CHECK(once == twice);
  sift::fuzz::Touch(edit.DebugString());
  return 0;
}
