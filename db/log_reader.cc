#include "db/log_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "db/log_format.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift::log {
namespace {

// ReadPhysicalRecord's results besides the RecordTypes of log_format.h.
enum : int {
  // End of the log: the end of the file, a fragment cut short by it,
  // preallocated space up to it, or a failed read.
  kEof = kMaxRecordType + 1,
  // A fragment that was skipped: damaged (and reported), block padding, or
  // before the initial offset.
  kSkipped = kMaxRecordType + 2,
};

// A fragment with a known type whose checksum matches starts `bytes`.
bool IsIntactFragment(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) return false;
  const char* h = bytes.data();
  const size_t len = static_cast<uint8_t>(h[4]) |
                     (static_cast<size_t>(static_cast<uint8_t>(h[5])) << 8);
  const auto type = static_cast<uint8_t>(h[6]);
  if (type == kZeroType || type > kMaxRecordType) return false;
  if (kHeaderSize + len > bytes.size()) return false;
  return Checksum32(std::string_view(h + 6, 1 + len)) == DecodeFixed32(h);
}

bool AllZero(std::string_view bytes) {
  for (const char c : bytes) {
    if (c != 0) return false;
  }
  return true;
}

}  // namespace

void Reader::Reporter::Corruption(size_t /*bytes*/,
                                  const absl::Status& /*status*/) {}

void Reader::Reporter::Report(const Problem& problem) {
  if (problem.kind != Problem::Kind::kDamage) return;
  Corruption(static_cast<size_t>(problem.bytes),
             absl::DataLossError(absl::StrCat(
                 "log record at offset ", problem.offset, ": ", problem.reason,
                 " (", problem.bytes, " bytes dropped)")));
}

struct Reader::Rep {
  Rep(SequentialFile* f, Reporter* r, bool checksums, uint64_t offset)
      : file(f),
        reporter(r),
        verify_checksums(checksums),
        backing(new char[kBlockSize]),
        initial_offset(offset),
        resyncing(offset > 0) {}

  // Next fragment into *fragment; returns its RecordType, kEof or kSkipped.
  int ReadPhysicalRecord(std::string_view* fragment);
  // Position the file at the block holding initial_offset.
  bool SkipToInitialBlock();
  // Read the next block into `buffer`. False after a failed read (`status`
  // set and reported, `buffer` empty).
  bool ReadBlock();
  // After a ZERO header: read on while whole blocks are zeros. True if the
  // file ends (or a read fails; `status` says so) first; false with the first
  // block that holds anything else in `buffer`, to be read as usual.
  bool OnlyZerosToEnd();
  // Tell the reporter about `bytes` at file offset `offset` dropped for
  // `reason`, unless they start before initial_offset (not asked for).
  void ReportDrop(uint64_t offset, uint64_t bytes, std::string_view reason) {
    Report(Problem::Kind::kDamage, offset, bytes, reason);
  }
  void ReportTorn(uint64_t offset, uint64_t bytes, std::string_view reason) {
    Report(Problem::Kind::kTornTail, offset, bytes, reason);
  }
  void Report(Problem::Kind kind, uint64_t offset, uint64_t bytes,
              std::string_view reason);
  // `buffer` starts with a header whose length runs past the end of the file.
  // Returns buffer.size() if the fragment is complete apart from its length
  // field (its checksum matches over everything up to the end of the file),
  // or the position of the first intact fragment after the header; npos if
  // neither exists, i.e. the fragment was torn by a crash.
  size_t FindIntactAfterBadLength() const;
  // File offset of the first unread byte of the current block.
  uint64_t BufferOffset() const { return end_of_buffer_offset - buffer.size(); }

  SequentialFile* const file;
  Reporter* const reporter;
  const bool verify_checksums;
  const std::unique_ptr<char[]> backing;  // one block read from the file
  std::string_view buffer;                // unread part of `backing`
  bool started = false;                   // SkipToInitialBlock has run
  bool eof = false;  // the last read returned less than a block
  // File offset just past the end of `buffer`.
  uint64_t end_of_buffer_offset = 0;
  uint64_t last_record_offset = 0;
  const uint64_t initial_offset;
  // Reading started in the middle of the log: skip MIDDLE and LAST fragments
  // of a record whose start came before initial_offset.
  bool resyncing;
  absl::Status status;
};

void Reader::Rep::Report(Problem::Kind kind, uint64_t offset, uint64_t bytes,
                         std::string_view reason) {
  if (reporter == nullptr || offset < initial_offset) return;
  reporter->Report(Problem{kind, offset, bytes, std::string(reason)});
}

size_t Reader::Rep::FindIntactAfterBadLength() const {
  // The checksum covers type + payload, not the length: a fragment whose
  // length byte alone was damaged still matches over the bytes to the end.
  if (Checksum32(buffer.substr(6)) == DecodeFixed32(buffer.data())) {
    return buffer.size();
  }
  for (size_t q = kHeaderSize; q + kHeaderSize <= buffer.size(); ++q) {
    if (IsIntactFragment(buffer.substr(q))) return q;
  }
  return std::string_view::npos;
}

bool Reader::Rep::ReadBlock() {
  absl::Status s = file->Read(kBlockSize, &buffer, backing.get());
  if (!s.ok()) {
    buffer = {};
    status = s;
    if (reporter != nullptr) reporter->Corruption(kBlockSize, s);
    return false;
  }
  end_of_buffer_offset += buffer.size();
  if (buffer.size() < kBlockSize) eof = true;
  return true;
}

bool Reader::Rep::OnlyZerosToEnd() {
  while (!eof) {
    if (!ReadBlock()) return true;
    if (!AllZero(buffer)) return false;
    buffer = {};
  }
  return true;
}

bool Reader::Rep::SkipToInitialBlock() {
  const uint64_t offset_in_block = initial_offset % kBlockSize;
  uint64_t block_start = initial_offset - offset_in_block;
  // An offset inside a block's zero-padded tail means the next block.
  if (offset_in_block > kBlockSize - kHeaderSize) block_start += kBlockSize;
  end_of_buffer_offset = block_start;
  if (block_start > 0) {
    if (absl::Status s = file->Skip(block_start); !s.ok()) {
      status = s;
      if (reporter != nullptr) reporter->Corruption(block_start, s);
      return false;
    }
  }
  return true;
}

int Reader::Rep::ReadPhysicalRecord(std::string_view* fragment) {
  while (true) {
    if (buffer.size() < kHeaderSize) {
      // Whatever is left is a block's zero tail or, at the end of the file, a
      // header cut short by a crash: neither is damage.
      if (eof && !buffer.empty()) {
        ReportTorn(BufferOffset(), buffer.size(),
                   absl::StrCat("record header cut short by the end of the "
                                "file after ",
                                buffer.size(), " of ", kHeaderSize,
                                " bytes (torn write)"));
      }
      buffer = {};
      if (eof || !status.ok() || !ReadBlock()) return kEof;
      continue;
    }

    const char* header = buffer.data();
    const uint32_t length =
        static_cast<uint8_t>(header[4]) |
        (static_cast<uint32_t>(static_cast<uint8_t>(header[5])) << 8);
    const auto type = static_cast<uint8_t>(header[6]);
    if (kHeaderSize + length > buffer.size()) {
      const uint64_t offset = BufferOffset();
      const size_t dropped = buffer.size();
      // In the last block of the file this is usually a fragment the crash
      // cut short. But a damaged length byte looks the same, and taking it for
      // a torn tail would silently drop every record after it. A crash leaves
      // nothing intact behind the torn fragment, so look for something intact.
      // A torn write still has a whole header with a known type: an unknown
      // one is damage (or not a log at all).
      const bool known_type = type != kZeroType && type <= kMaxRecordType;
      if (eof && !known_type) {
        buffer = {};
        ReportDrop(offset, dropped,
                   absl::StrCat("unknown fragment type ",
                                static_cast<int>(type), " with length ", length,
                                offset == 0 ? " (not a sift log?)" : ""));
        return kSkipped;
      }
      if (eof) {
        const size_t intact = verify_checksums ? FindIntactAfterBadLength()
                                               : std::string_view::npos;
        if (intact == std::string_view::npos) {
          buffer = {};
          ReportTorn(offset, dropped,
                     absl::StrCat("record fragment of ", length,
                                  " bytes cut short by the end of the file "
                                  "(torn write)"));
          return kEof;
        }
        ReportDrop(offset, intact, "bad record length");
        buffer.remove_prefix(intact);
        return kSkipped;
      }
      buffer = {};
      ReportDrop(offset, dropped,
                 absl::StrCat("record length ", length,
                              " runs past the end of its 32 KiB block"));
      return kSkipped;
    }

    if (type == kZeroType && length == 0) {
      // Preallocated, never written space: nothing more in this block. With
      // nothing but such space after it, the log ends here: a log written
      // through a mapping (Env::NewLogFile) ends so after a crash, the
      // fragment being written (if any) with a zero header, since its header
      // is stored last. A record open at this point is then a torn tail.
      buffer = {};
      return OnlyZerosToEnd() ? kEof : kSkipped;
    }

    if (verify_checksums) {
      const uint32_t expected = DecodeFixed32(header);
      const uint32_t actual =
          Checksum32(std::string_view(header + 6, 1 + length));
      if (actual != expected) {
        // The length may be the damaged field: resume behind the fragment
        // only if an intact fragment starts there, else nothing else in this
        // block can be trusted and the rest of it is dropped.
        const uint64_t offset = BufferOffset();
        const size_t next = kHeaderSize + length;
        const size_t dropped =
            IsIntactFragment(buffer.substr(next)) ? next : buffer.size();
        buffer.remove_prefix(dropped);
        ReportDrop(offset, dropped,
                   absl::StrCat("checksum mismatch in fragment of ", length,
                                " bytes (type ", static_cast<int>(type), ")"));
        return kSkipped;
      }
    }

    buffer.remove_prefix(kHeaderSize + length);
    // Fragments that start before initial_offset were not asked for.
    if (BufferOffset() - kHeaderSize - length < initial_offset) {
      return kSkipped;
    }
    *fragment = std::string_view(header + kHeaderSize, length);
    return type;
  }
}

Reader::Reader(SequentialFile* file, Reporter* reporter, bool verify_checksums,
               uint64_t initial_offset)
    : rep_(std::make_unique<Rep>(file, reporter, verify_checksums,
                                 initial_offset)) {}

Reader::~Reader() = default;

uint64_t Reader::LastRecordOffset() const { return rep_->last_record_offset; }

absl::Status Reader::status() const { return rep_->status; }

bool Reader::ReadRecord(std::string_view* record, std::string* scratch) {
  Rep& r = *rep_;
  if (!r.started) {
    r.started = true;
    if (r.initial_offset > 0 && !r.SkipToInitialBlock()) return false;
  }

  scratch->clear();
  *record = {};
  bool in_fragmented_record = false;
  uint64_t record_start = 0;  // offset of the record being assembled

  while (true) {
    std::string_view fragment;
    const int type = r.ReadPhysicalRecord(&fragment);
    // Offset of the fragment just returned (meaningless for kEof/kSkipped).
    const uint64_t fragment_offset =
        r.BufferOffset() - kHeaderSize - fragment.size();

    if (r.resyncing) {
      if (type == kMiddleType) continue;
      if (type == kLastType) {
        r.resyncing = false;
        continue;
      }
      if (type != kSkipped) r.resyncing = false;
    }

    switch (type) {
      case kFullType:
        if (in_fragmented_record && !scratch->empty()) {
          r.ReportDrop(record_start, scratch->size(),
                       "partial record without end");
        }
        scratch->clear();
        *record = fragment;
        r.last_record_offset = fragment_offset;
        return true;

      case kFirstType:
        if (in_fragmented_record && !scratch->empty()) {
          r.ReportDrop(record_start, scratch->size(),
                       "partial record without end");
        }
        record_start = fragment_offset;
        scratch->assign(fragment.data(), fragment.size());
        in_fragmented_record = true;
        break;

      case kMiddleType:
        if (!in_fragmented_record) {
          r.ReportDrop(fragment_offset, fragment.size(),
                       "missing start of fragmented record");
        } else {
          scratch->append(fragment.data(), fragment.size());
        }
        break;

      case kLastType:
        if (!in_fragmented_record) {
          r.ReportDrop(fragment_offset, fragment.size(),
                       "missing start of fragmented record");
          break;
        }
        scratch->append(fragment.data(), fragment.size());
        *record = *scratch;
        r.last_record_offset = record_start;
        return true;

      case kEof:
        // A record whose LAST fragment never made it to the file is the write
        // a crash interrupted: end of log, not damage.
        if (in_fragmented_record && r.eof && r.status.ok()) {
          r.ReportTorn(record_start, r.end_of_buffer_offset - record_start,
                       "record's last fragment is missing: the file ends "
                       "(torn write)");
        }
        scratch->clear();
        return false;

      case kSkipped:
        if (in_fragmented_record) {
          // The damaged fragment belonged to the record being assembled.
          r.ReportDrop(record_start, scratch->size(),
                       "error in middle of record");
          in_fragmented_record = false;
          scratch->clear();
        }
        break;

      default:
        r.ReportDrop(
            in_fragmented_record ? record_start : fragment_offset,
            fragment.size() + (in_fragmented_record ? scratch->size() : 0),
            absl::StrCat("unknown record type ", type));
        in_fragmented_record = false;
        scratch->clear();
        break;
    }
  }
}

}  // namespace sift::log
