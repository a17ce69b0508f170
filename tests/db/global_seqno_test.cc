// The one place that rewrites the key trailers of an ingested table: keys
// read at the global sequence number, in order both ways, and Seek lands on
// the first rewritten key >= the target whatever the target's sequence.

#include "db/global_seqno.h"

#include <memory>
#include <string>

#include "db/dbformat.h"
#include "db/memtable.h"
#include "gtest/gtest.h"
#include "table/iterators.h"

namespace sift {
namespace {

// A memtable stands in for a table: the same internal-key iterator.
class GlobalSeqnoTest : public testing::Test {
 protected:
  GlobalSeqnoTest() : mem_(std::make_shared<MemTable>(icmp_)) {
    mem_->Add(0, kTypeValue, "a", "va");
    mem_->Add(0, kTypeDeletion, "b", "");
    mem_->Add(0, kTypeValue, "c", "vc");
  }

  std::unique_ptr<Iterator> NewIter(SequenceNumber seqno) {
    return NewGlobalSeqnoIterator(mem_->NewIterator(), seqno);
  }

  static std::string Key(std::string_view user_key, SequenceNumber s,
                         ValueType t) {
    return std::string(InternalKey(user_key, s, t).Encode());
  }

  const InternalKeyComparator icmp_{BytewiseComparator()};
  std::shared_ptr<MemTable> mem_;
};

TEST_F(GlobalSeqnoTest, RewritesEveryKeyBothWays) {
  auto it = NewIter(42);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Key("a", 42, kTypeValue));
  EXPECT_EQ(it->value(), "va");
  it->Next();
  EXPECT_EQ(it->key(), Key("b", 42, kTypeDeletion));
  it->Next();
  EXPECT_EQ(it->key(), Key("c", 42, kTypeValue));
  it->Next();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_EQ(it->key(), Key("c", 42, kTypeValue));
  it->Prev();
  EXPECT_EQ(it->key(), Key("b", 42, kTypeDeletion));
  EXPECT_TRUE(it->status().ok());
}

TEST_F(GlobalSeqnoTest, SeekHonorsTheTargetSequence) {
  auto it = NewIter(42);
  // At or above the global sequence: the entry of the same user key.
  it->Seek(Key("b", 42, kValueTypeForSeek));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Key("b", 42, kTypeDeletion));
  it->Seek(Key("b", 100, kValueTypeForSeek));
  EXPECT_EQ(it->key(), Key("b", 42, kTypeDeletion));
  // Below it: b@42 sorts before b@41, so the next user key.
  it->Seek(Key("b", 41, kValueTypeForSeek));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Key("c", 42, kTypeValue));
  it->Seek(Key("c", 0, kTypeDeletion));
  EXPECT_FALSE(it->Valid());
  it->Seek(Key("bb", 1, kTypeValue));
  EXPECT_EQ(it->key(), Key("c", 42, kTypeValue));
}

TEST_F(GlobalSeqnoTest, VisibilityOfAFile) {
  FileMetaData plain;
  EXPECT_TRUE(FileVisibleAt(plain, 0));
  FileMetaData ingested;
  ingested.global_seqno = 10;
  EXPECT_FALSE(FileVisibleAt(ingested, 9));
  EXPECT_TRUE(FileVisibleAt(ingested, 10));
  EXPECT_EQ(LookupSequence(LookupKey("k", 77)), 77u);
}

}  // namespace
}  // namespace sift
