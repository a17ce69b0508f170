#ifndef SIFT_TABLE_COMPRESSION_GATE_H_
#define SIFT_TABLE_COMPRESSION_GATE_H_

// Whether a table writer should try to compress its next data block.
//
// A block is stored compressed only when Snappy saves at least 1/8 of it
// (CompressBlock), and data that does not shrink (values already compressed
// or encrypted, random bytes) pays the whole compression work for nothing,
// block after block. So a writer tries every block until kMissesToSkip
// attempts in a row have not paid, then skips the next kFirstSkip blocks
// and tries one again: a miss doubles the skip (up to kMaxSkip blocks), a
// block that pays ends the skipping. Data that compresses is tried on every
// block; a table of data that does not is tried on a few percent of its
// blocks, and data that starts to compress again is found within kMaxSkip
// blocks. Only the writer's work changes: every block says how it is stored.
//
// Thread safety: none; one per table being written.

#include <cstdint>

namespace sift {

class CompressionGate {
 public:
  static constexpr int kMissesToSkip = 4;
  static constexpr uint32_t kFirstSkip = 8;
  static constexpr uint32_t kMaxSkip = 128;

  // Whether to try compressing the next block. A false answer counts that
  // block as skipped.
  bool ShouldTry() {
    if (skip_left_ == 0) return true;
    --skip_left_;
    ++skipped_;
    return false;
  }

  // The outcome of a try that ShouldTry allowed: `paid` if the block was
  // stored compressed.
  void Record(bool paid) {
    if (paid) {
      misses_ = 0;
      skip_ = 0;
      return;
    }
    if (skip_ > 0) {
      // A re-probe that did not pay: skip twice as long.
      skip_ = skip_ * 2 > kMaxSkip ? kMaxSkip : skip_ * 2;
      skip_left_ = skip_;
    } else if (++misses_ >= kMissesToSkip) {
      skip_ = kFirstSkip;
      skip_left_ = skip_;
    }
  }

  // Blocks skipped so far.
  uint64_t skipped() const { return skipped_; }

 private:
  int misses_ = 0;          // tries in a row that did not pay, before skipping
  uint32_t skip_ = 0;       // the current skip length; 0 = not skipping
  uint32_t skip_left_ = 0;  // blocks still to skip
  uint64_t skipped_ = 0;
};

}  // namespace sift

#endif  // SIFT_TABLE_COMPRESSION_GATE_H_
