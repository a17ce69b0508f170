#ifndef SIFT_INCLUDE_SIFT_READ_STATS_H_
#define SIFT_INCLUDE_SIFT_READ_STATS_H_

#include <cstdint>

namespace sift {

// Counters of the read paths, cumulative since DB::Open (see
// DB::GetReadStats). A plain value: a snapshot of the counters when taken.
struct ReadStats {
  uint64_t gets = 0;              // calls to DB::Get
  uint64_t memtable_hits = 0;     // Gets answered by a memtable
  uint64_t tables_probed = 0;     // tables whose key range covered the key
  uint64_t filter_negatives = 0;  // tables skipped because the filter said no
  uint64_t filter_positives = 0;  // tables whose filter said "maybe"
  uint64_t filter_false_positives = 0;  // ... and did not hold the key
  uint64_t block_cache_hits = 0;        // blocks served from the block cache
  uint64_t block_reads = 0;             // blocks read from files
  uint64_t bytes_read = 0;              // bytes of those block reads
  // Tables a Get had to open because they were not open (the tree has more
  // tables than Options::max_open_files keeps open): each costs reading the
  // table's footer, index and filter from its file.
  uint64_t table_loads = 0;
  // Filter units read back from table files because the filter memory
  // budget (Options::filter_memory_limit) gave a table more of its filter
  // than it held; counted by the thread that loads them (the background
  // thread). 0 without a limit.
  uint64_t filter_unit_loads = 0;
  // Iterators (DB::NewIterator): Seek, SeekToFirst and SeekToLast calls, and
  // the data blocks iterators read from files and found in the block cache.
  // Counted when the iterator is destroyed. Kept apart from the Get counters
  // above, so that ReadAmplification stays a point-read figure.
  uint64_t seeks = 0;
  uint64_t iterator_block_reads = 0;
  uint64_t iterator_block_cache_hits = 0;
  // Prefix filters (Options::prefix_extractor): tables an iterator confined
  // to one prefix asked, and those it skipped because the filter said the
  // prefix is absent. Counted when the iterator is destroyed.
  uint64_t prefix_filter_probes = 0;
  uint64_t prefix_filter_negatives = 0;
  // Range filters (Options::range_filter_bits_per_key): tables a bounded
  // iterator asked whether its bounds may hold a key, and those it skipped
  // because the filter said no. Of the tables whose filter said "maybe",
  // those found to hold no key in the bounds are false positives; judged
  // only when the iterator's first positioning is Seek(lower bound), so
  // range_filter_false_positives / (range_filter_negatives +
  // range_filter_false_positives) is the measured FPR of such scans over
  // tables holding no key in range. Counted when the iterator is destroyed.
  uint64_t range_filter_probes = 0;
  uint64_t range_filter_negatives = 0;
  uint64_t range_filter_false_positives = 0;

  // false_positives / (negatives + false_positives): the filters' measured
  // false-positive rate over tables that did not hold the key. 0 if none.
  double MeasuredFpr() const {
    const uint64_t absent = filter_negatives + filter_false_positives;
    return absent == 0 ? 0.0
                       : static_cast<double>(filter_false_positives) /
                             static_cast<double>(absent);
  }
  // block_reads / gets: blocks read from files per point read. 0 if no Gets.
  double ReadAmplification() const {
    return gets == 0
               ? 0.0
               : static_cast<double>(block_reads) / static_cast<double>(gets);
  }

  ReadStats& operator+=(const ReadStats& o) {
    gets += o.gets;
    memtable_hits += o.memtable_hits;
    tables_probed += o.tables_probed;
    filter_negatives += o.filter_negatives;
    filter_positives += o.filter_positives;
    filter_false_positives += o.filter_false_positives;
    block_cache_hits += o.block_cache_hits;
    block_reads += o.block_reads;
    bytes_read += o.bytes_read;
    table_loads += o.table_loads;
    filter_unit_loads += o.filter_unit_loads;
    seeks += o.seeks;
    iterator_block_reads += o.iterator_block_reads;
    iterator_block_cache_hits += o.iterator_block_cache_hits;
    prefix_filter_probes += o.prefix_filter_probes;
    prefix_filter_negatives += o.prefix_filter_negatives;
    range_filter_probes += o.range_filter_probes;
    range_filter_negatives += o.range_filter_negatives;
    range_filter_false_positives += o.range_filter_false_positives;
    return *this;
  }
  // The counts since `o` was taken: the difference field by field.
  ReadStats& operator-=(const ReadStats& o) {
    gets -= o.gets;
    memtable_hits -= o.memtable_hits;
    tables_probed -= o.tables_probed;
    filter_negatives -= o.filter_negatives;
    filter_positives -= o.filter_positives;
    filter_false_positives -= o.filter_false_positives;
    block_cache_hits -= o.block_cache_hits;
    block_reads -= o.block_reads;
    bytes_read -= o.bytes_read;
    table_loads -= o.table_loads;
    filter_unit_loads -= o.filter_unit_loads;
    seeks -= o.seeks;
    iterator_block_reads -= o.iterator_block_reads;
    iterator_block_cache_hits -= o.iterator_block_cache_hits;
    prefix_filter_probes -= o.prefix_filter_probes;
    prefix_filter_negatives -= o.prefix_filter_negatives;
    range_filter_probes -= o.range_filter_probes;
    range_filter_negatives -= o.range_filter_negatives;
    range_filter_false_positives -= o.range_filter_false_positives;
    return *this;
  }
};

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_READ_STATS_H_
