#ifndef SIFT_FILTER_FUSE_FILTER_H_
#define SIFT_FILTER_FUSE_FILTER_H_

// The binary fuse filter behind FilterKind::kBinaryFuse. FilterBuilder::Make
// and FilterReader::Parse dispatch here; everything else uses those.

#include <cstdint>
#include <memory>

#include "filter/filter.h"
#include "filter/filter_format.h"

namespace sift {

// Builders write format version 2 (4-wise). `format_version` 1 writes the
// 3-wise layout tables written before it still hold: tests and benchmarks use
// it to check and compare the reader's version-1 path; the engine does not.
// REQUIRES: format_version is 1 or 2.

// A builder writing w-bit fingerprints, keys hashed with `seed`.
// REQUIRES: 1 <= fingerprint_bits <= 32.
std::unique_ptr<FilterBuilder> NewFuseFilterBuilder(
    uint32_t fingerprint_bits, uint64_t seed,
    uint32_t format_version = kFuseFormatVersion);

// A builder spending `bits_per_key` bits per distinct key on average over
// tables: at Finish it takes the fingerprint width FingerprintBitsFor gives
// for the n distinct keys, rounding a fractional width up or down with a coin
// drawn from the keys' hashes.
std::unique_ptr<FilterBuilder> NewFuseFilterBuilderForBudget(
    double bits_per_key, uint64_t seed,
    uint32_t format_version = kFuseFormatVersion);

// A reader over decoded contents of kind kBinaryFuseTag (copied), either
// version: the probe for the version's arity is chosen here, once.
// REQUIRES: contents came from DecodeFilter and contents.info.known.
std::unique_ptr<FilterReader> NewFuseFilterReader(
    const FilterContents& contents);

}  // namespace sift

#endif  // SIFT_FILTER_FUSE_FILTER_H_
