#include "sift/write_batch.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"
#include "gtest/gtest.h"
#include "util/coding.h"

namespace sift {
namespace {

// Renders the updates of a batch as "Put(k, v)Delete(k)...".
class Recorder final : public WriteBatch::Handler {
 public:
  void Put(std::string_view key, std::string_view value) override {
    absl::StrAppend(&out, "Put(", std::string(key), ", ", std::string(value),
                    ")");
  }
  void Delete(std::string_view key) override {
    absl::StrAppend(&out, "Delete(", std::string(key), ")");
  }
  std::string out;
};

std::string Updates(const WriteBatch& b) {
  Recorder r;
  const absl::Status s = b.Iterate(&r);
  if (!s.ok()) return "ERROR: " + std::string(s.message());
  return r.out;
}

// Applies `b` to a fresh memtable and lists its entries with sequence numbers.
std::string Applied(const WriteBatch& b) {
  const InternalKeyComparator icmp(BytewiseComparator());
  MemTable mem(icmp);
  const absl::Status s = WriteBatchInternal::InsertInto(&b, &mem);
  std::string out;
  auto iter = mem.NewIterator();
  for (iter->SeekToFirst(); iter->Valid(); iter->Next()) {
    ParsedInternalKey parsed;
    EXPECT_TRUE(ParseInternalKey(iter->key(), &parsed));
    if (parsed.type == kTypeValue) {
      absl::StrAppend(&out, "Put(", std::string(parsed.user_key), ", ",
                      std::string(iter->value()), ")@", parsed.sequence);
    } else {
      absl::StrAppend(&out, "Delete(", std::string(parsed.user_key), ")@",
                      parsed.sequence);
    }
  }
  if (!s.ok()) absl::StrAppend(&out, "ERROR");
  EXPECT_EQ(mem.NumEntries() == 0, out.empty() || out == "ERROR");
  return out;
}

TEST(WriteBatchTest, Empty) {
  WriteBatch b;
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(Updates(b), "");
  EXPECT_EQ(Applied(b), "");
  EXPECT_EQ(b.ApproximateSize(), WriteBatchInternal::kHeaderSize);
}

TEST(WriteBatchTest, UpdatesInOrderWithSequences) {
  WriteBatch b;
  b.Put("foo", "bar");
  b.Delete("box");
  b.Put("baz", "boo");
  WriteBatchInternal::SetSequence(&b, 100);
  EXPECT_EQ(WriteBatchInternal::Sequence(&b), 100u);
  EXPECT_EQ(b.Count(), 3u);
  EXPECT_EQ(WriteBatchInternal::Count(&b), 3u);
  EXPECT_EQ(Updates(b), "Put(foo, bar)Delete(box)Put(baz, boo)");
  EXPECT_EQ(Applied(b), "Put(baz, boo)@102Delete(box)@101Put(foo, bar)@100");
}

TEST(WriteBatchTest, LaterPutOfSameKeyWins) {
  WriteBatch b;
  b.Put("k", "1");
  b.Put("k", "2");
  WriteBatchInternal::SetSequence(&b, 7);
  // The newer entry (seq 8) sorts first: it is what a read sees.
  EXPECT_EQ(Applied(b), "Put(k, 2)@8Put(k, 1)@7");
}

TEST(WriteBatchTest, SerializedForm) {
  WriteBatch b;
  WriteBatchInternal::SetSequence(&b, 0x0102030405060708ULL);
  b.Put("k", "vv");
  b.Delete("d");
  std::string expected;
  PutFixed64(&expected, 0x0102030405060708ULL);
  PutFixed32(&expected, 2);
  expected += std::string("\x01\x01k\x02vv", 6);
  expected += std::string(
      "\x00\x01"
      "d",
      3);
  EXPECT_EQ(WriteBatchInternal::Contents(&b), expected);
  EXPECT_EQ(WriteBatchInternal::ByteSize(&b), expected.size());
}

TEST(WriteBatchTest, ClearKeepsNothing) {
  WriteBatch b;
  b.Put("a", "b");
  WriteBatchInternal::SetSequence(&b, 9);
  b.Clear();
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(WriteBatchInternal::Sequence(&b), 0u);
  EXPECT_EQ(Updates(b), "");
  b.Delete("x");
  EXPECT_EQ(Updates(b), "Delete(x)");
}

TEST(WriteBatchTest, Append) {
  WriteBatch b1, b2;
  WriteBatchInternal::SetSequence(&b1, 200);
  WriteBatchInternal::SetSequence(&b2, 300);
  b1.Append(b2);
  EXPECT_EQ(Updates(b1), "");
  EXPECT_EQ(b1.Count(), 0u);
  b2.Put("a", "va");
  b1.Append(b2);
  EXPECT_EQ(Updates(b1), "Put(a, va)");
  EXPECT_EQ(b1.Count(), 1u);
  b2.Clear();
  b2.Put("b", "vb");
  b2.Delete("a");
  b1.Append(b2);
  EXPECT_EQ(b1.Count(), 3u);
  EXPECT_EQ(WriteBatchInternal::Sequence(&b1), 200u);
  EXPECT_EQ(Updates(b1), "Put(a, va)Put(b, vb)Delete(a)");
  EXPECT_EQ(Applied(b1), "Delete(a)@202Put(a, va)@200Put(b, vb)@201");

  WriteBatch b3;
  WriteBatchInternal::Append(&b3, &b1);
  EXPECT_EQ(Updates(b3), Updates(b1));
}

TEST(WriteBatchTest, EmptyAndLargeKeysAndValues) {
  WriteBatch b;
  const std::string big(200000, 'x');
  b.Put("", "");
  b.Put(big, big);
  b.Delete("");
  Recorder r;
  ASSERT_TRUE(b.Iterate(&r).ok());
  EXPECT_EQ(r.out, "Put(, )Put(" + big + ", " + big + ")Delete()");
}

TEST(WriteBatchTest, SetContentsRoundTrip) {
  WriteBatch b;
  b.Put("one", "1");
  b.Delete("two");
  WriteBatchInternal::SetSequence(&b, 55);
  WriteBatch copy;
  ASSERT_TRUE(
      WriteBatchInternal::SetContents(&copy, WriteBatchInternal::Contents(&b))
          .ok());
  EXPECT_EQ(WriteBatchInternal::Sequence(&copy), 55u);
  EXPECT_EQ(Updates(copy), Updates(b));

  const absl::Status s = WriteBatchInternal::SetContents(&copy, "short");
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  // A rejected SetContents leaves the batch as it was.
  EXPECT_EQ(Updates(copy), Updates(b));
}

TEST(WriteBatchTest, EveryTruncationIsDetected) {
  WriteBatch b;
  b.Put("key1", "value1");
  b.Delete("key2");
  b.Put("k3", std::string(200, 'v'));
  const std::string full(WriteBatchInternal::Contents(&b));
  for (size_t len = WriteBatchInternal::kHeaderSize; len < full.size(); ++len) {
    WriteBatch damaged;
    ASSERT_TRUE(WriteBatchInternal::SetContents(
                    &damaged, std::string_view(full).substr(0, len))
                    .ok());
    Recorder r;
    const absl::Status s = damaged.Iterate(&r);
    EXPECT_TRUE(absl::IsDataLoss(s)) << len << ": " << s;
    EXPECT_NE(s.message().find("malformed WriteBatch"), std::string::npos);
    // InsertInto applies nothing from a damaged batch.
    EXPECT_EQ(Applied(damaged), "ERROR") << len;
  }
}

TEST(WriteBatchTest, BadTagAndWrongCountAreDetected) {
  WriteBatch b;
  b.Put("a", "1");
  b.Put("b", "2");
  std::string rep(WriteBatchInternal::Contents(&b));

  std::string bad_tag = rep;
  bad_tag[WriteBatchInternal::kHeaderSize] = 0x7;
  WriteBatch damaged;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&damaged, bad_tag).ok());
  EXPECT_TRUE(
      absl::IsDataLoss(damaged.Iterate(&*std::make_unique<Recorder>())));

  for (uint32_t count : {0u, 1u, 3u, 0xffffffffu}) {
    std::string wrong = rep;
    EncodeFixed32(wrong.data() + 8, count);
    ASSERT_TRUE(WriteBatchInternal::SetContents(&damaged, wrong).ok());
    Recorder r;
    const absl::Status s = damaged.Iterate(&r);
    EXPECT_TRUE(absl::IsDataLoss(s)) << count;
    EXPECT_EQ(Applied(damaged), "ERROR") << count;
  }

  // A length prefix pointing past the end.
  std::string long_len = rep;
  long_len[WriteBatchInternal::kHeaderSize + 1] = 0x7f;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&damaged, long_len).ok());
  Recorder r;
  EXPECT_TRUE(absl::IsDataLoss(damaged.Iterate(&r)));
}

}  // namespace
}  // namespace sift
