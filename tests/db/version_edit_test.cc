#include "db/version_edit.h"

#include <string>

#include "gtest/gtest.h"
#include "util/coding.h"

namespace sift {
namespace {

std::string Encode(const VersionEdit& edit) {
  std::string encoded;
  edit.EncodeTo(&encoded);
  return encoded;
}

VersionEdit FullEdit() {
  VersionEdit edit;
  edit.SetComparatorName("sift.BytewiseComparator");
  edit.SetLogNumber(12);
  edit.SetNextFile(1ull << 40);
  edit.SetLastSequence(kMaxSequenceNumber);
  for (int i = 0; i < 4; ++i) {
    FileMetaData f;
    f.number = 1000 + i;
    f.file_size = (uint64_t{1} << 33) + i;
    f.smallest = InternalKey("a" + std::to_string(i), 100 + i, kTypeValue);
    f.largest = InternalKey("z" + std::to_string(i), 7, kTypeDeletion);
    edit.AddFile(i % config::kNumLevels, f);
    edit.RemoveFile(config::kNumLevels - 1 - i, 500 + i);
    edit.SetCompactPointer(
        i, InternalKey("cp" + std::to_string(i), i, kTypeValue));
  }
  return edit;
}

TEST(VersionEditTest, EmptyEditRoundTrip) {
  VersionEdit edit;
  const std::string encoded = Encode(edit);
  // Just the format version field.
  EXPECT_EQ(encoded, std::string("\x01\x02", 2));
  VersionEdit decoded;
  ASSERT_TRUE(decoded.DecodeFrom(encoded).ok());
  EXPECT_FALSE(decoded.comparator().has_value());
  EXPECT_FALSE(decoded.log_number().has_value());
  EXPECT_FALSE(decoded.next_file_number().has_value());
  EXPECT_FALSE(decoded.last_sequence().has_value());
  EXPECT_TRUE(decoded.new_files().empty());
  EXPECT_TRUE(decoded.deleted_files().empty());
  EXPECT_TRUE(decoded.compact_pointers().empty());
}

TEST(VersionEditTest, FullEditRoundTrip) {
  const VersionEdit edit = FullEdit();
  const std::string encoded = Encode(edit);
  VersionEdit decoded;
  ASSERT_TRUE(decoded.DecodeFrom(encoded).ok());
  EXPECT_EQ(Encode(decoded), encoded);

  EXPECT_EQ(decoded.comparator(), "sift.BytewiseComparator");
  EXPECT_EQ(decoded.log_number(), 12u);
  EXPECT_EQ(decoded.next_file_number(), 1ull << 40);
  EXPECT_EQ(decoded.last_sequence(), kMaxSequenceNumber);
  ASSERT_EQ(decoded.new_files().size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const auto& [level, f] = decoded.new_files()[i];
    EXPECT_EQ(level, i);
    EXPECT_EQ(f.number, 1000u + i);
    EXPECT_EQ(f.file_size, (uint64_t{1} << 33) + i);
    EXPECT_EQ(f.smallest.Encode(),
              edit.new_files()[i].second.smallest.Encode());
    EXPECT_EQ(f.largest.Encode(), edit.new_files()[i].second.largest.Encode());
  }
  EXPECT_EQ(decoded.deleted_files(), edit.deleted_files());
  ASSERT_EQ(decoded.compact_pointers().size(), 4u);
  EXPECT_EQ(decoded.compact_pointers()[2].first, 2);
  EXPECT_EQ(decoded.compact_pointers()[2].second.user_key(), "cp2");
}

TEST(VersionEditTest, DecodeReplacesAndClearResets) {
  VersionEdit edit = FullEdit();
  VersionEdit small;
  small.SetLogNumber(3);
  ASSERT_TRUE(edit.DecodeFrom(Encode(small)).ok());
  EXPECT_EQ(edit.log_number(), 3u);
  EXPECT_FALSE(edit.comparator().has_value());
  EXPECT_TRUE(edit.new_files().empty());

  edit = FullEdit();
  edit.Clear();
  EXPECT_EQ(Encode(edit), Encode(VersionEdit()));
}

TEST(VersionEditTest, EveryPrefixIsRejectedOrAWholeFieldSequence) {
  const std::string encoded = Encode(FullEdit());
  int accepted = 0;
  for (size_t len = 0; len <= encoded.size(); ++len) {
    const std::string_view prefix = std::string_view(encoded).substr(0, len);
    VersionEdit decoded;
    const absl::Status s = decoded.DecodeFrom(prefix);
    if (s.ok()) {
      // A cut between fields is a valid, shorter edit.
      EXPECT_EQ(Encode(decoded), prefix) << len;
      ++accepted;
    } else {
      EXPECT_TRUE(absl::IsDataLoss(s)) << len << ": " << s;
    }
  }
  // One cut per field end: the version, 4 scalars and 12 repeated fields.
  EXPECT_EQ(accepted, 1 + 4 + 12);
  // Nothing at all, or a cut inside the version field, is never an edit.
  VersionEdit decoded;
  EXPECT_TRUE(absl::IsDataLoss(decoded.DecodeFrom("")));
  EXPECT_TRUE(
      absl::IsDataLoss(decoded.DecodeFrom(std::string_view("\x01", 1))));
}

TEST(VersionEditTest, RejectsUnknownTagsVersionsAndLevels) {
  const std::string header("\x01\x02", 2);
  VersionEdit decoded;
  decoded.SetLogNumber(77);

  auto expect_rejected = [&](const std::string& bytes, std::string_view what) {
    const absl::Status s = decoded.DecodeFrom(bytes);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(std::string(s.message()).find(std::string(what)),
              std::string::npos)
        << s;
    // A failed decode leaves the edit as it was.
    EXPECT_EQ(decoded.log_number(), 77u);
  };

  expect_rejected(header + std::string("\x63\x01", 2), "unknown field tag 99");
  // Format version: missing, zero, and newer than this build.
  expect_rejected(std::string("\x03\x05", 2), "format version");
  expect_rejected(std::string("\x01\x00", 2), "unsupported format version 0");
  expect_rejected(std::string("\x01\x04", 2), "unsupported format version 4");
  // The previous log number, retired in version 2, is named there; version
  // 1 only ever wrote 0 into it.
  expect_rejected(header + std::string("\x04\x00", 2),
                  "field tag 4 (previous log number, retired");
  expect_rejected(std::string("\x01\x01\x04\x07", 4), "previous log number");

  // Level out of range in each field that carries one.
  std::string bad_level = header;
  PutVarint32(&bad_level, 8);  // deleted file
  PutVarint32(&bad_level, config::kNumLevels);
  PutVarint64(&bad_level, 5);
  expect_rejected(bad_level, "deleted file");

  VersionEdit with_file;
  FileMetaData f;
  f.number = 9;
  f.smallest = InternalKey("a", 1, kTypeValue);
  f.largest = InternalKey("b", 1, kTypeValue);
  with_file.AddFile(config::kNumLevels - 1, f);
  std::string file_bytes = Encode(with_file);
  ASSERT_TRUE(decoded.DecodeFrom(file_bytes).ok());
  decoded.SetLogNumber(77);
  file_bytes[3] = static_cast<char>(config::kNumLevels);  // the level byte
  expect_rejected(file_bytes, "new file");

  std::string bad_pointer = header;
  PutVarint32(&bad_pointer, 7);
  PutVarint32(&bad_pointer, 100);
  PutLengthPrefixed(&bad_pointer, InternalKey("k", 1, kTypeValue).Encode());
  expect_rejected(bad_pointer, "compact pointer");

  // A file boundary that is not an internal key.
  std::string bad_key = header;
  PutVarint32(&bad_key, 9);
  PutVarint32(&bad_key, 0);
  PutVarint64(&bad_key, 1);
  PutVarint64(&bad_key, 1);
  PutLengthPrefixed(&bad_key, "short");
  PutLengthPrefixed(&bad_key, InternalKey("k", 1, kTypeValue).Encode());
  expect_rejected(bad_key, "new file");

  // A length prefix running past the end.
  std::string long_name = header;
  PutVarint32(&long_name, 2);
  PutVarint32(&long_name, 1000);
  long_name += "abc";
  expect_rejected(long_name, "comparator");

  // A single-valued field twice.
  std::string twice = header;
  PutVarint32(&twice, 3);
  PutVarint64(&twice, 1);
  PutVarint32(&twice, 3);
  PutVarint64(&twice, 2);
  expect_rejected(twice, "repeated");
  expect_rejected(header + header, "repeated");

  // A sequence number too large for the 56-bit field.
  std::string big_seq = header;
  PutVarint32(&big_seq, 6);
  PutVarint64(&big_seq, kMaxSequenceNumber + 1);
  expect_rejected(big_seq, "last sequence");
}

// Version 1 edits (before the previous log number was retired) still read;
// they encode again as the current version, without that field.
TEST(VersionEditTest, ReadsFormatVersionOne) {
  const std::string v1(
      "\x01\x01"   // version 1
      "\x03\x0c"   // log number 12
      "\x04\x00"   // previous log number 0
      "\x05\x20",  // next file number 32
      8);
  VersionEdit decoded;
  ASSERT_TRUE(decoded.DecodeFrom(v1).ok());
  EXPECT_EQ(decoded.log_number(), 12u);
  EXPECT_EQ(decoded.next_file_number(), 32u);
  EXPECT_EQ(Encode(decoded), std::string("\x01\x02\x03\x0c\x05\x20", 6));
}

// The example in doc/manifest_format.md.
TEST(VersionEditTest, MatchesDocumentedExample) {
  VersionEdit edit;
  edit.SetLogNumber(12);
  FileMetaData f;
  f.number = 7;
  f.file_size = 4096;
  f.smallest = InternalKey("a", 5, kTypeValue);
  f.largest = InternalKey("b", 9, kTypeValue);
  edit.AddFile(0, f);
  const std::string expected(
      "\x01\x02"
      "\x03\x0c"
      "\x09\x00\x07\x80\x20"
      "\x09"
      "a\x01\x05\x00\x00\x00\x00\x00\x00"
      "\x09"
      "b\x01\x09\x00\x00\x00\x00\x00\x00",
      29);
  EXPECT_EQ(Encode(edit), expected);
}

TEST(VersionEditTest, DebugStringNamesEveryField) {
  const std::string s = FullEdit().DebugString();
  for (const char* want :
       {"comparator: sift.BytewiseComparator", "log number: 12",
        "next file number: 1099511627776", "last sequence: 72057594037927935",
        "new file: level 1 #1001", "deleted file: level 6 #500",
        "compact pointer: level 3 'cp3'", "'a2' @ 102 : value",
        "'z0' @ 7 : deletion"}) {
    EXPECT_NE(s.find(want), std::string::npos) << want << "\n" << s;
  }
}

}  // namespace
}  // namespace sift
