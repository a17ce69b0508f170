// Fuzz target: building binary fuse filters (filter/fuse_builder.cc) over
// fuzz-chosen key sets, in the 4-wise layout writers use (format version 2)
// and the 3-wise one of version 1. Input: one byte picking the fingerprint
// width (1..32) and the seed, then keys, each a length byte and that many
// bytes (repeats allowed, adjacent or not).
// Properties, for both versions: construction ends; the filter parses as
// that version; every added key matches (no false negatives); num_keys counts
// distinct keys; rebuilding from the same keys gives the same bytes; 2^-w is
// the theory the reader reports.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "filter/bloom_math.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "filter/fuse_math.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

std::string Build(uint32_t w, uint64_t seed, uint32_t version,
                  const std::vector<std::string_view>& keys) {
  std::unique_ptr<sift::FilterBuilder> builder =
      version == sift::kFuseFormatVersion
          ? sift::FilterBuilder::MakeForFpr(sift::FilterKind::kBinaryFuse, 1,
                                            sift::FuseFpr(w), seed)
          : sift::NewFuseFilterBuilder(w, seed, version);
  for (std::string_view key : keys) builder->AddKey(key);
  return builder->Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sift::fuzz::FuzzInput in(data, size);
  const uint8_t mode = in.Byte();
  const uint32_t w = 1 + mode % 32;
  const uint64_t seed = mode / 32;
  std::vector<std::string_view> keys;
  std::set<std::string_view> distinct;
  while (!in.empty() && keys.size() < 100000) {
    const std::string_view key = in.Bytes(in.Byte());
    keys.push_back(key);
    distinct.insert(key);
  }

  for (uint32_t version : {uint32_t{sift::kFuseFormatVersion},
                           uint32_t{sift::kFuseFormatVersionV1}}) {
    const std::string serialized = Build(w, seed, version, keys);
    absl::StatusOr<std::unique_ptr<sift::FilterReader>> reader =
        sift::FilterReader::Parse(serialized);
    FUZZ_CHECK(reader.ok());
    const sift::FilterInfo info = (*reader)->info();
    FUZZ_CHECK(info.known);
    FUZZ_CHECK(info.version == version);
    FUZZ_CHECK(info.num_probes == sift::FuseArityOfVersion(version));
    FUZZ_CHECK(info.fingerprint_bits == w);
    // Distinct keys with equal 64-bit hashes would count once; not expected
    // from inputs of this size.
    FUZZ_CHECK(info.num_keys == distinct.size());
    FUZZ_CHECK(sift::TheoreticalFpr(info) ==
               (distinct.empty() ? 0.0 : sift::FuseFpr(w)));
    for (std::string_view key : keys) FUZZ_CHECK((*reader)->KeyMayMatch(key));
    FUZZ_CHECK(Build(w, seed, version, keys) == serialized);
  }
  return 0;
}
