#include "tools/sift_stress/stress_options.h"

#include "absl/strings/str_cat.h"

namespace sift::stress {
namespace {

const char* FilterKindName(FilterKind k) {
  switch (k) {
    case FilterKind::kStandardBloom:
      return "standard_bloom";
    case FilterKind::kBlockedBloom:
      return "blocked_bloom";
    case FilterKind::kBinaryFuse:
      return "binary_fuse";
  }
  return "?";
}

// Table layout and filters: what every table written in the round looks like.
void DrawTableOptions(Rng* rng, Options* o, std::string* text) {
  static const FilterKind kKinds[] = {FilterKind::kStandardBloom,
                                      FilterKind::kBlockedBloom,
                                      FilterKind::kBinaryFuse};
  static const FilterAllocation kAllocations[] = {FilterAllocation::kUniform,
                                                  FilterAllocation::kOptimal};
  // 0 writes tables without a filter; fractional and large values too.
  static const double kBitsPerKey[] = {0, 0, 1, 4.5, 8, 10, 10, 16, 33};
  static const size_t kBlockSizes[] = {256, 512, 1024, 4096, 4096, 16384};
  static const int kRestarts[] = {1, 2, 4, 16, 16, 64};
  static const Compression kCompressions[] = {Compression::kSnappy,
                                              Compression::kNone};
  o->filter_kind = rng->Pick(kKinds);
  o->filter_allocation = rng->Pick(kAllocations);
  o->filter_bits_per_key = rng->Pick(kBitsPerKey);
  o->block_size = rng->Pick(kBlockSizes);
  o->block_restart_interval = rng->Pick(kRestarts);
  o->compression = rng->Pick(kCompressions);
  absl::StrAppend(
      text, "filter=", FilterKindName(o->filter_kind), " allocation=",
      o->filter_allocation == FilterAllocation::kUniform ? "uniform"
                                                         : "optimal",
      " bits_per_key=", o->filter_bits_per_key, " block_size=", o->block_size,
      " restart_interval=", o->block_restart_interval, " compression=",
      o->compression == Compression::kSnappy ? "snappy" : "none");
}

// Sizes: small buffers and tables so that flushes and compactions run all
// the time; tiny caches and file limits so that eviction paths run too.
void DrawSizeOptions(Rng* rng, Options* o, std::string* text) {
  static const size_t kWriteBuffers[] = {16 << 10, 32 << 10, 64 << 10,
                                         256 << 10, 1 << 20};
  static const size_t kFileSizes[] = {16 << 10, 32 << 10, 128 << 10, 1 << 20};
  static const size_t kCaches[] = {0, 1 << 10, 64 << 10, 8 << 20};
  // 20 is the engine's minimum (db/options_check.cc): 10 table files.
  static const int kOpenFiles[] = {20, 21, 30, 100, 1000};
  o->write_buffer_size = rng->Pick(kWriteBuffers);
  o->max_file_size = rng->Pick(kFileSizes);
  o->block_cache_capacity = rng->Pick(kCaches);
  o->max_open_files = rng->Pick(kOpenFiles);
  absl::StrAppend(text, " write_buffer=", o->write_buffer_size,
                  " max_file_size=", o->max_file_size,
                  " block_cache=", o->block_cache_capacity,
                  " max_open_files=", o->max_open_files);
}

// How tables are read and how damage is treated.
void DrawReadOptions(Rng* rng, const Capabilities& caps, Options* o,
                     std::string* text) {
  o->allow_mmap_reads = rng->OneIn(2);
  // Direct reads override mmap; drawn only where O_DIRECT works (tmpfs
  // refuses it, and the engine then fails table opens by design).
  o->use_direct_reads = caps.direct_reads && rng->OneIn(4);
  o->paranoid_checks = rng->OneIn(2);
  absl::StrAppend(text, " mmap_reads=", o->allow_mmap_reads,
                  " direct_reads=", o->use_direct_reads,
                  " paranoid_checks=", o->paranoid_checks);
}

// Options of the wave that adds prefix extractors, range filters and a
// filter memory limit, drawn after everything else, so that the earlier
// draws, and so the seeds of rounds already reported, keep their meaning.
void DrawWaveOptions(Rng* rng, Options* o, std::string* text) {
  // Keys are "k%07u": fixed lengths give prefixes of 1 to 10^6 keys (9: no
  // key is in the domain); a delimiter gives prefixes of varying length
  // ('1': "k0001", "k001", ...; keys without a '1' are outside the domain).
  switch (rng->Uniform(6)) {
    case 0:
    case 1:
      absl::StrAppend(text, " prefix_extractor=none");
      break;
    case 2:
    case 3: {
      static const size_t kLengths[] = {1, 4, 5, 6, 8, 9};
      const size_t length = rng->Pick(kLengths);
      o->prefix_extractor = NewFixedPrefixExtractor(length);
      absl::StrAppend(text, " prefix_extractor=fixed:", length);
      break;
    }
    default: {
      static const char kDelimiters[] = {'0', '1', '5'};
      const char delimiter = rng->Pick(kDelimiters);
      o->prefix_extractor = NewDelimitedPrefixExtractor(delimiter);
      absl::StrAppend(
          text, " prefix_extractor=delimited:", std::string(1, delimiter));
      break;
    }
  }
  o->whole_key_filtering = o->prefix_extractor == nullptr || !rng->OneIn(4);
  absl::StrAppend(text, " whole_key_filtering=", o->whole_key_filtering);
  // Range filters: none half the time; 2 (the floor: every range of a few
  // keys "maybe") to 24 bits per key otherwise.
  static const double kRangeBits[] = {0, 0, 0, 2, 8, 16, 24};
  o->range_filter_bits_per_key = rng->Pick(kRangeBits);
  absl::StrAppend(text, " range_filter_bits=", o->range_filter_bits_per_key);
  // Filter memory: no limit half the time; else 4 KiB (units dropped nearly
  // everywhere, and loaded and dropped as the tree changes), 64 KiB, 16 MiB
  // (nothing dropped, tables written in units).
  static const uint64_t kFilterLimits[] = {0,       0,        0,
                                           4 << 10, 64 << 10, 16 << 20};
  o->filter_memory_limit = rng->Pick(kFilterLimits);
  absl::StrAppend(text, " filter_memory_limit=", o->filter_memory_limit);
}

}  // namespace

DrawnOptions DrawOptions(Rng* rng, const Capabilities& caps) {
  DrawnOptions d;
  DrawTableOptions(rng, &d.options, &d.text);
  DrawSizeOptions(rng, &d.options, &d.text);
  DrawReadOptions(rng, caps, &d.options, &d.text);
  static const int kSyncPercents[] = {0, 5, 25, 100};
  d.sync_percent = rng->Pick(kSyncPercents);
  absl::StrAppend(&d.text, " sync_percent=", d.sync_percent);
  DrawWaveOptions(rng, &d.options, &d.text);
  return d;
}

}  // namespace sift::stress
