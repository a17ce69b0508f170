#include "tools/log_scan.h"

#include <memory>

#include "absl/strings/str_format.h"
#include "db/log_format.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift::tools {

namespace {

// Assembles records from fragments and records what is wrong.
class Scanner {
 public:
  Scanner(const std::function<void(uint64_t, std::string_view)>& on_record,
          LogScanResult* result)
      : on_record_(on_record), result_(result) {}

  // Parse the fragments of one block starting at file offset `block_start`.
  // `last_block`: the file ends with this block.
  void ScanBlock(std::string_view block, uint64_t block_start,
                 bool last_block) {
    size_t pos = 0;
    while (pos + log::kHeaderSize <= block.size()) {
      const char* header = block.data() + pos;
      const uint64_t offset = block_start + pos;
      const uint32_t length =
          static_cast<uint8_t>(header[4]) |
          (static_cast<uint32_t>(static_cast<uint8_t>(header[5])) << 8);
      const uint8_t type = static_cast<uint8_t>(header[6]);
      if (type == log::kZeroType && length == 0 && AllZero(block.substr(pos))) {
        return;  // preallocated space: nothing more in this block
      }
      if (type == log::kZeroType || type > log::kMaxRecordType) {
        // Not something the writer produces; the length cannot be trusted
        // either, so nothing more in this block can be parsed.
        Damage(offset,
               absl::StrFormat("unknown fragment type %d%s", type,
                               offset == 0 ? " (not a sift log?)" : ""));
        in_record_ = false;
        return;
      }
      if (pos + log::kHeaderSize + length > block.size()) {
        if (last_block) {
          Torn(offset, absl::StrFormat(
                           "record fragment of %d bytes cut short by the end "
                           "of the file (torn write)",
                           length));
        } else {
          Damage(offset, absl::StrFormat("fragment length %d runs past the "
                                         "end of its 32 KiB block",
                                         length));
        }
        return;
      }
      // The checksum covers the type byte and the payload, which follow each
      // other in the header and the file.
      const std::string_view covered(header + 6, 1 + length);
      const uint32_t expected = DecodeFixed32(header);
      if (Checksum32(covered) != expected) {
        Damage(offset,
               absl::StrFormat("checksum mismatch in fragment of %d bytes "
                               "(type %d)",
                               length, type));
        // A record that this fragment belonged to is lost with it.
        in_record_ = false;
        pos += log::kHeaderSize + length;
        continue;
      }
      ++result_->num_fragments;
      Fragment(offset, type,
               std::string_view(header + log::kHeaderSize, length));
      pos += log::kHeaderSize + length;
    }
    // The writer pads the last < 7 bytes of a block with zeros.
  }

  // The file ended: a record still being assembled was torn.
  void Finish() {
    if (in_record_) {
      Torn(record_offset_,
           "record started but its last fragment is missing: the file ends "
           "(torn write)");
      in_record_ = false;
    }
  }

 private:
  static bool AllZero(std::string_view bytes) {
    for (char c : bytes) {
      if (c != 0) return false;
    }
    return true;
  }

  void Fragment(uint64_t offset, uint8_t type, std::string_view payload) {
    switch (type) {
      case log::kFullType:
        DropPartial(offset);
        Emit(offset, payload);
        break;
      case log::kFirstType:
        DropPartial(offset);
        in_record_ = true;
        record_offset_ = offset;
        record_.assign(payload);
        break;
      case log::kMiddleType:
      case log::kLastType:
        if (!in_record_) {
          Damage(offset,
                 absl::StrFormat("%s fragment without a first "
                                 "fragment before it",
                                 type == log::kMiddleType ? "middle" : "last"));
          break;
        }
        record_.append(payload);
        if (type == log::kLastType) {
          in_record_ = false;
          Emit(record_offset_, record_);
        }
        break;
      default:  // excluded by ScanBlock
        break;
    }
  }

  // A new record starts at `offset` while another one was not finished.
  void DropPartial(uint64_t offset) {
    if (!in_record_) return;
    Damage(record_offset_,
           absl::StrFormat("record missing its last fragment (next record "
                           "starts at offset %d)",
                           offset));
    in_record_ = false;
  }

  void Emit(uint64_t offset, std::string_view record) {
    ++result_->num_records;
    on_record_(offset, record);
  }

  void Damage(uint64_t offset, std::string message) {
    result_->problems.push_back({offset, std::move(message), false});
  }
  void Torn(uint64_t offset, std::string message) {
    result_->problems.push_back({offset, std::move(message), true});
  }

  const std::function<void(uint64_t, std::string_view)>& on_record_;
  LogScanResult* const result_;
  bool in_record_ = false;
  uint64_t record_offset_ = 0;
  std::string record_;
};

}  // namespace

bool LogScanResult::damaged() const {
  for (const LogProblem& p : problems) {
    if (!p.torn_tail) return true;
  }
  return false;
}

absl::Status ScanLog(
    Env* env, const std::string& fname,
    const std::function<void(uint64_t offset, std::string_view record)>&
        on_record,
    LogScanResult* result) {
  *result = LogScanResult();
  absl::StatusOr<uint64_t> size = env->GetFileSize(fname);
  if (!size.ok()) return size.status();
  result->file_size = *size;
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();

  Scanner scanner(on_record, result);
  auto scratch = std::make_unique<char[]>(log::kBlockSize);
  uint64_t block_start = 0;
  while (block_start < *size) {
    // Fill one whole block (a read may return fewer bytes than asked).
    std::string block;
    while (block.size() < log::kBlockSize) {
      std::string_view got;
      absl::Status s =
          (*file)->Read(log::kBlockSize - block.size(), &got, scratch.get());
      if (!s.ok()) return s;
      if (got.empty()) break;
      block.append(got);
    }
    if (block.empty()) break;  // the file shrank under us
    const bool last = block_start + block.size() >= *size;
    scanner.ScanBlock(block, block_start, last);
    block_start += block.size();
    if (block.size() < log::kBlockSize) break;
  }
  scanner.Finish();
  return absl::OkStatus();
}

}  // namespace sift::tools
