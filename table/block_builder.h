#ifndef SIFT_TABLE_BLOCK_BUILDER_H_
#define SIFT_TABLE_BLOCK_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sift {

// Builds the contents of one block (doc/table_format.md, "Blocks"): entries
// prefix-compressed against the key before them, with a restart point (an
// entry storing its whole key) every `restart_interval` entries, followed by
// the restart offsets and their count.
//
// Thread safety: not safe for concurrent use.
class BlockBuilder {
 public:
  // REQUIRES: restart_interval >= 1.
  explicit BlockBuilder(int restart_interval);
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // REQUIRES: Finish not called since the last Reset; key is after the
  // previous key in the order the block will be read with.
  void Add(std::string_view key, std::string_view value);

  // Append the restart array. The view stays valid until Reset or the
  // builder is destroyed.
  std::string_view Finish();

  // Start an empty block.
  void Reset();

  // Size of the block if Finish were called now.
  size_t CurrentSizeEstimate() const;
  bool empty() const { return num_entries_ == 0; }
  uint32_t num_entries() const { return num_entries_; }

 private:
  const int restart_interval_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;  // offsets of the restart entries
  int counter_ = 0;                 // entries since the last restart
  uint32_t num_entries_ = 0;
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace sift

#endif  // SIFT_TABLE_BLOCK_BUILDER_H_
