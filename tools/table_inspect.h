#ifndef SIFT_TOOLS_TABLE_INSPECT_H_
#define SIFT_TOOLS_TABLE_INSPECT_H_

// Reads a table file block by block (doc/table_format.md) the way an
// inspector wants: every block's place, compression and checksum verdict,
// the footer, properties and index as stored, and every inconsistency found
// on the way, each naming the file and the offset. Nothing here trusts the
// file: damage is reported, never asserted on.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "sift/env.h"
#include "table/format.h"
#include "table/table_properties.h"
#include "tools/problem.h"
#include "util/comparator.h"

namespace sift::tools {

// One stored block and what reading it found.
struct BlockReport {
  enum class Kind { kData, kFilter, kProperties, kIndex };
  Kind kind = Kind::kData;
  BlockHandle handle;
  int compression = -1;      // trailer type byte; -1 if it could not be read
  bool checksum_ok = false;  // the trailer checksum matched
  absl::Status status;       // OK, or what is wrong with the block
  uint64_t uncompressed_size = 0;
  uint64_t num_entries = 0;  // data and index blocks, when parsed
};
const char* BlockKindName(BlockReport::Kind kind);
const char* CompressionName(int type);

struct IndexEntry {
  std::string key;  // separator: >= every key of its block, < the next's
  BlockHandle handle;
};

// What reading a whole table found.
struct TableReport {
  std::string file;
  uint64_t file_size = 0;
  Footer footer;
  TableProperties properties;
  absl::Status properties_status;
  // Keys are internal keys (a table of a database) rather than plain keys.
  bool internal_keys = false;
  // The comparator named by the properties is one we know, so key order can
  // be checked.
  bool order_known = false;
  std::vector<IndexEntry> index;
  // Every block read, in file order: data blocks, then filter, properties,
  // index (only those that exist).
  std::vector<BlockReport> blocks;
  // The point filter and the range filter of the filter block (each empty
  // if the table has none or the block is damaged; SplitFilterBlock).
  std::string filter_contents;
  std::string range_filter_contents;
  uint64_t entries_read = 0;  // entries of data blocks read
  // Everything wrong, by offset in the file.
  std::vector<Problem> problems;

  // The comparator the keys are ordered by, from the properties.
  const Comparator* comparator() const;
};

struct InspectOptions {
  // Read and check every data block (checksums, entries, key order, index
  // consistency). False: the footer, meta blocks and index only.
  bool read_data_blocks = true;
  // Called for each entry of each data block read, in order.
  std::function<void(std::string_view key, std::string_view value)> on_entry;
};

// Inspect table `fname`. Returns an error (naming the file) when the file
// cannot be read or is not a table at all (too short, bad footer); damage
// past the footer goes to report->problems, and whatever could be read is
// still reported.
absl::Status InspectTable(Env* env, const std::string& fname,
                          const InspectOptions& options, TableReport* report);

}  // namespace sift::tools

#endif  // SIFT_TOOLS_TABLE_INSPECT_H_
