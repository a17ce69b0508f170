// VersionEdit encoding (doc/manifest_format.md): a sequence of fields, each a
// varint32 tag followed by the tag's payload. The format-version field comes
// first; the others may come in any order, the repeated ones any number of
// times.

#include "db/version_edit.h"

#include "absl/strings/str_cat.h"
#include "util/coding.h"

namespace sift {
namespace {

// Field tags. Values are part of the on-disk format: never reuse one.
enum Tag : uint32_t {
  kFormatVersionTag = 1,  // varint32 version
  kComparatorTag = 2,     // length-prefixed comparator name
  kLogNumberTag = 3,      // varint64
  // 4: the previous log number of format version 1, always 0; retired.
  kRetiredPrevLogNumberTag = 4,
  kNextFileNumberTag = 5,  // varint64
  kLastSequenceTag = 6,    // varint64
  kCompactPointerTag = 7,  // varint32 level, length-prefixed internal key
  kDeletedFileTag = 8,     // varint32 level, varint64 file number
  // varint32 level, varint64 number, varint64 size, length-prefixed smallest
  // and largest internal keys.
  kNewFileTag = 9,
  // Format version 3: as kNewFileTag, then varint64 global sequence number
  // (never 0). Written only for files that have one.
  kNewFileGlobalSeqnoTag = 10,
};

// The format version of an edit without files with a global sequence number
// (kFormatVersion otherwise).
constexpr uint32_t kBaseFormatVersion = 2;

void PutInternalKey(std::string* dst, const InternalKey& key) {
  PutLengthPrefixed(dst, key.Encode());
}

// Decodes the fields of one edit. Every failure is a DataLossError naming the
// field and the byte offset in the record.
class EditDecoder {
 public:
  explicit EditDecoder(std::string_view src) : src_(src), input_(src) {}

  absl::Status Decode(VersionEdit* edit) {
    uint32_t tag = 0;
    if (!GetVarint32(&input_, &tag) || tag != kFormatVersionTag) {
      return Error("format version (must be the first field)");
    }
    uint32_t version = 0;
    if (!GetVarint32(&input_, &version)) return Error("format version");
    if (version == 0 || version > VersionEdit::kFormatVersion) {
      return absl::DataLossError(absl::StrCat(
          "VersionEdit: unsupported format version ", version,
          " (this build reads up to ", VersionEdit::kFormatVersion, ")"));
    }

    bool seen[kNewFileGlobalSeqnoTag + 1] = {};
    seen[kFormatVersionTag] = true;
    while (!input_.empty()) {
      field_start_ = src_.size() - input_.size();
      if (!GetVarint32(&input_, &tag)) return Error("field tag");
      // Single-valued fields may appear once; a second copy means the record
      // is not what the writer produced.
      if (tag >= kFormatVersionTag && tag <= kLastSequenceTag) {
        if (seen[tag]) {
          return absl::DataLossError(absl::StrCat("VersionEdit: field ", tag,
                                                  " repeated at offset ",
                                                  field_start_));
        }
        seen[tag] = true;
      }
      uint64_t number = 0;
      switch (tag) {
        case kComparatorTag: {
          std::string_view name;
          if (!GetLengthPrefixed(&input_, &name)) return Error("comparator");
          edit->SetComparatorName(name);
          break;
        }
        case kLogNumberTag:
          if (!GetVarint64(&input_, &number)) return Error("log number");
          edit->SetLogNumber(number);
          break;
        case kRetiredPrevLogNumberTag:
          // Version 1 wrote it, always 0, and it meant nothing then.
          if (version >= 2) {
            return absl::DataLossError(absl::StrCat(
                "VersionEdit: field tag 4 (previous log number, retired in "
                "format version 2) at offset ",
                field_start_));
          }
          if (!GetVarint64(&input_, &number) || number != 0) {
            return Error("previous log number (format 1: only 0 is valid)");
          }
          break;
        case kNextFileNumberTag:
          if (!GetVarint64(&input_, &number)) return Error("next file number");
          edit->SetNextFile(number);
          break;
        case kLastSequenceTag:
          if (!GetVarint64(&input_, &number) || number > kMaxSequenceNumber) {
            return Error("last sequence");
          }
          edit->SetLastSequence(number);
          break;
        case kCompactPointerTag: {
          int level = 0;
          InternalKey key;
          if (!GetLevel(&level) || !GetInternalKey(&key)) {
            return Error("compact pointer");
          }
          edit->SetCompactPointer(level, key);
          break;
        }
        case kDeletedFileTag: {
          int level = 0;
          if (!GetLevel(&level) || !GetVarint64(&input_, &number)) {
            return Error("deleted file");
          }
          edit->RemoveFile(level, number);
          break;
        }
        case kNewFileTag:
        case kNewFileGlobalSeqnoTag: {
          const bool with_seqno = tag == kNewFileGlobalSeqnoTag;
          if (with_seqno && version < 3) {
            return absl::DataLossError(absl::StrCat(
                "VersionEdit: field tag 10 (file with a global sequence "
                "number) in a format version ",
                version, " edit at offset ", field_start_));
          }
          int level = 0;
          FileMetaData f;
          if (!GetLevel(&level) || !GetVarint64(&input_, &f.number) ||
              !GetVarint64(&input_, &f.file_size) ||
              !GetInternalKey(&f.smallest) || !GetInternalKey(&f.largest)) {
            return Error("new file");
          }
          if (with_seqno &&
              (!GetVarint64(&input_, &f.global_seqno) || f.global_seqno == 0 ||
               f.global_seqno > kMaxSequenceNumber)) {
            return Error("global sequence number of a new file");
          }
          edit->AddFile(level, f);
          break;
        }
        default:
          return absl::DataLossError(
              absl::StrCat("VersionEdit: unknown field tag ", tag,
                           " at offset ", field_start_));
      }
    }
    return absl::OkStatus();
  }

 private:
  bool GetLevel(int* level) {
    uint32_t v = 0;
    if (!GetVarint32(&input_, &v) ||
        v >= static_cast<uint32_t>(config::kNumLevels)) {
      return false;
    }
    *level = static_cast<int>(v);
    return true;
  }

  bool GetInternalKey(InternalKey* key) {
    std::string_view encoded;
    return GetLengthPrefixed(&input_, &encoded) && key->DecodeFrom(encoded);
  }

  absl::Status Error(std::string_view field) const {
    return absl::DataLossError(
        absl::StrCat("VersionEdit: bad ", std::string(field), " at offset ",
                     field_start_, " of ", src_.size(), " bytes"));
  }

  const std::string_view src_;
  std::string_view input_;
  size_t field_start_ = 0;
};

}  // namespace

void VersionEdit::EncodeTo(std::string* dst) const {
  bool has_global_seqno = false;
  for (const auto& [level, f] : new_files_) {
    if (f.global_seqno != 0) has_global_seqno = true;
  }
  PutVarint32(dst, kFormatVersionTag);
  PutVarint32(dst, has_global_seqno ? kFormatVersion : kBaseFormatVersion);
  if (comparator_) {
    PutVarint32(dst, kComparatorTag);
    PutLengthPrefixed(dst, *comparator_);
  }
  if (log_number_) {
    PutVarint32(dst, kLogNumberTag);
    PutVarint64(dst, *log_number_);
  }
  if (next_file_number_) {
    PutVarint32(dst, kNextFileNumberTag);
    PutVarint64(dst, *next_file_number_);
  }
  if (last_sequence_) {
    PutVarint32(dst, kLastSequenceTag);
    PutVarint64(dst, *last_sequence_);
  }
  for (const auto& [level, key] : compact_pointers_) {
    PutVarint32(dst, kCompactPointerTag);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutInternalKey(dst, key);
  }
  for (const auto& [level, number] : deleted_files_) {
    PutVarint32(dst, kDeletedFileTag);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, number);
  }
  for (const auto& [level, f] : new_files_) {
    PutVarint32(dst,
                f.global_seqno != 0 ? kNewFileGlobalSeqnoTag : kNewFileTag);
    PutVarint32(dst, static_cast<uint32_t>(level));
    PutVarint64(dst, f.number);
    PutVarint64(dst, f.file_size);
    PutInternalKey(dst, f.smallest);
    PutInternalKey(dst, f.largest);
    if (f.global_seqno != 0) PutVarint64(dst, f.global_seqno);
  }
}

absl::Status VersionEdit::DecodeFrom(std::string_view src) {
  // Decode into a fresh edit so a failure leaves *this untouched.
  VersionEdit decoded;
  EditDecoder decoder(src);
  if (absl::Status s = decoder.Decode(&decoded); !s.ok()) return s;
  *this = std::move(decoded);
  return absl::OkStatus();
}

std::string VersionEdit::DebugString() const {
  std::string r = absl::StrCat("VersionEdit (format ", kFormatVersion, ") {\n");
  if (comparator_) {
    absl::StrAppend(&r, "  comparator: ", *comparator_, "\n");
  }
  if (log_number_) absl::StrAppend(&r, "  log number: ", *log_number_, "\n");
  if (next_file_number_) {
    absl::StrAppend(&r, "  next file number: ", *next_file_number_, "\n");
  }
  if (last_sequence_) {
    absl::StrAppend(&r, "  last sequence: ", *last_sequence_, "\n");
  }
  for (const auto& [level, key] : compact_pointers_) {
    absl::StrAppend(&r, "  compact pointer: level ", level, " ",
                    key.DebugString(), "\n");
  }
  for (const auto& [level, number] : deleted_files_) {
    absl::StrAppend(&r, "  deleted file: level ", level, " #", number, "\n");
  }
  for (const auto& [level, f] : new_files_) {
    absl::StrAppend(&r, "  new file: level ", level, " #", f.number, " ",
                    f.file_size, " bytes [", f.smallest.DebugString(), " .. ",
                    f.largest.DebugString(), "]");
    if (f.global_seqno != 0) {
      absl::StrAppend(&r, " global seqno ", f.global_seqno);
    }
    r.append("\n");
  }
  r.append("}\n");
  return r;
}

}  // namespace sift
