#ifndef SIFT_FILTER_FUSE_FILTER_H_
#define SIFT_FILTER_FUSE_FILTER_H_

// The binary fuse filter behind FilterKind::kBinaryFuse. FilterBuilder::Make
// and FilterReader::Parse dispatch here; everything else uses those.

#include <cstdint>
#include <memory>

#include "filter/filter.h"
#include "filter/filter_format.h"

namespace sift {

// A builder writing w-bit fingerprints, keys hashed with `seed`.
// REQUIRES: 1 <= fingerprint_bits <= 32.
std::unique_ptr<FilterBuilder> NewFuseFilterBuilder(uint32_t fingerprint_bits,
                                                    uint64_t seed);

// A builder spending `bits_per_key` bits per distinct key on average over
// tables: at Finish it takes the fingerprint width FingerprintBitsFor gives
// for the n distinct keys, rounding a fractional width up or down with a coin
// drawn from the keys' hashes.
std::unique_ptr<FilterBuilder> NewFuseFilterBuilderForBudget(
    double bits_per_key, uint64_t seed);

// A reader over decoded contents of kind kBinaryFuseTag (copied).
// REQUIRES: contents came from DecodeFilter and contents.info.known.
std::unique_ptr<FilterReader> NewFuseFilterReader(
    const FilterContents& contents);

}  // namespace sift

#endif  // SIFT_FILTER_FUSE_FILTER_H_
