#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/log_format.h"
#include "db/log_reader.h"
#include "db/log_writer.h"
#include "gtest/gtest.h"
#include "tests/testutil/testutil.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/random.h"

namespace sift::log {
namespace {

bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }

// A log file held in a string: the tests damage its bytes directly.
class StringDest final : public WritableFile {
 public:
  explicit StringDest(std::string* contents) : contents_(contents) {}
  absl::Status Append(std::string_view data) override {
    contents_->append(data.data(), data.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  std::string* contents_;
};

class StringSource final : public SequentialFile {
 public:
  explicit StringSource(std::string_view contents) : contents_(contents) {}
  // Fail every read once `fail_at` bytes have been returned.
  void FailAt(size_t fail_at) { fail_at_ = fail_at; }
  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    if (pos_ >= fail_at_) return absl::UnavailableError("injected read error");
    n = std::min(n, contents_.size() - pos_);
    std::memcpy(scratch, contents_.data() + pos_, n);
    *result = std::string_view(scratch, n);
    pos_ += n;
    return absl::OkStatus();
  }
  absl::Status Skip(uint64_t n) override {
    pos_ = std::min<uint64_t>(pos_ + n, contents_.size());
    return absl::OkStatus();
  }

 private:
  std::string_view contents_;
  size_t pos_ = 0;
  size_t fail_at_ = std::string::npos;
};

class CountingReporter final : public Reader::Reporter {
 public:
  void Corruption(size_t bytes, const absl::Status& status) override {
    dropped += bytes;
    ++reports;
    if (first.ok()) first = status;
    last = status;
  }
  size_t dropped = 0;
  int reports = 0;
  absl::Status first;
  absl::Status last;
};

// A record of `n` bytes whose content depends on `seed`, so a misplaced or
// mixed-up record is noticed.
std::string BigString(std::string_view seed, size_t n) {
  if (seed.empty()) seed = ".";
  std::string result;
  while (result.size() < n) result.append(seed.data(), seed.size());
  result.resize(n);
  return result;
}

class LogTest : public testing::Test {
 protected:
  LogTest() : dest_(&contents_), writer_(std::make_unique<Writer>(&dest_)) {}

  void Write(std::string_view record) {
    ASSERT_TRUE(writer_->AddRecord(record).ok());
    ends_.push_back(contents_.size());
  }

  // Reads the whole log (or contents_ cut to `size`) from `initial_offset`.
  std::vector<std::string> ReadAll(size_t size = std::string::npos,
                                   uint64_t initial_offset = 0,
                                   bool verify_checksums = true) {
    StringSource source(std::string_view(contents_).substr(0, size));
    Reader reader(&source, &reporter_, verify_checksums, initial_offset);
    std::vector<std::string> records;
    std::string scratch;
    std::string_view record;
    while (reader.ReadRecord(&record, &scratch)) {
      records.emplace_back(record);
      offsets_.push_back(reader.LastRecordOffset());
    }
    EXPECT_TRUE(reader.status().ok()) << reader.status();
    return records;
  }

  void FlipByte(size_t offset) { contents_[offset] ^= 0x5a; }

  // Rewrites the header checksum of the fragment at `offset` to match its
  // (possibly edited) type and payload.
  void FixChecksum(size_t offset) {
    const size_t length = static_cast<uint8_t>(contents_[offset + 4]) |
                          (static_cast<uint8_t>(contents_[offset + 5]) << 8);
    EncodeFixed32(
        contents_.data() + offset,
        Checksum32(std::string_view(contents_).substr(offset + 6, 1 + length)));
  }

  std::string contents_;
  StringDest dest_;
  std::unique_ptr<Writer> writer_;
  std::vector<size_t> ends_;       // file size after each record
  std::vector<uint64_t> offsets_;  // LastRecordOffset after each read
  CountingReporter reporter_;
};

TEST_F(LogTest, EmptyLog) {
  EXPECT_TRUE(ReadAll().empty());
  EXPECT_EQ(reporter_.reports, 0);
}

TEST_F(LogTest, SmallAndEmptyRecords) {
  const std::vector<std::string> records = {"foo", "", "bar", "", "xxxx", ""};
  for (const auto& r : records) Write(r);
  EXPECT_EQ(ReadAll(), records);
  EXPECT_EQ(reporter_.reports, 0);
  // An empty record is a bare header.
  EXPECT_EQ(ends_[1] - ends_[0], kHeaderSize);
}

TEST_F(LogTest, FragmentLayoutAndChecksum) {
  Write("hello");
  ASSERT_EQ(contents_.size(), kHeaderSize + 5);
  EXPECT_EQ(static_cast<uint8_t>(contents_[4]), 5);
  EXPECT_EQ(static_cast<uint8_t>(contents_[5]), 0);
  EXPECT_EQ(static_cast<uint8_t>(contents_[6]), kFullType);
  EXPECT_EQ(contents_.substr(kHeaderSize), "hello");
  // The checksum covers the type byte and the payload, which are contiguous.
  EXPECT_EQ(DecodeFixed32(contents_.data()),
            Checksum32(std::string_view(contents_).substr(6)));
}

TEST_F(LogTest, RecordsAroundBlockBoundaries) {
  std::vector<std::string> records;
  const size_t one_block = kBlockSize - kHeaderSize;
  for (size_t n : {one_block - 1, one_block, one_block + 1, size_t{1},
                   2 * kBlockSize, 2 * kBlockSize - 2 * kHeaderSize, size_t{0},
                   3 * kBlockSize + 17, one_block - 5}) {
    records.push_back(BigString(absl::StrCat(n, "."), n));
    Write(records.back());
  }
  EXPECT_EQ(ReadAll(), records);
  EXPECT_EQ(reporter_.reports, 0);
  // Fragments never straddle a block boundary, so a boundary always falls
  // on a header or inside zero padding; check via the block sizes used.
  EXPECT_GT(contents_.size(), 7 * kBlockSize);
}

TEST_F(LogTest, BlockTailsShorterThanAHeaderArePadded) {
  for (size_t tail = 0; tail < kHeaderSize; ++tail) {
    contents_.clear();
    ends_.clear();
    writer_ = std::make_unique<Writer>(&dest_);
    const std::string first(kBlockSize - kHeaderSize - tail, 'a');
    Write(first);
    Write("next");
    ASSERT_EQ(ends_[0], kBlockSize - tail);
    // The tail is zeros, and the next record starts at the next block.
    EXPECT_EQ(contents_.substr(kBlockSize - tail, tail),
              std::string(tail, '\0'));
    EXPECT_EQ(contents_.size(), kBlockSize + kHeaderSize + 4);
    EXPECT_EQ(ReadAll(), (std::vector<std::string>{first, "next"}));
  }
  EXPECT_EQ(reporter_.reports, 0);
}

TEST_F(LogTest, ManyRandomRecords) {
  Random rnd(301);
  std::vector<std::string> records;
  for (int i = 0; i < 2000; ++i) {
    records.push_back(test::RandomString(&rnd, rnd.Skewed(17)));
    Write(records.back());
  }
  EXPECT_EQ(ReadAll(), records);
  EXPECT_EQ(reporter_.reports, 0);
}

TEST_F(LogTest, LargeRecord) {
  const std::string big = BigString("large record ", 1 << 20);
  Write("before");
  Write(big);
  Write("after");
  EXPECT_EQ(ReadAll(), (std::vector<std::string>{"before", big, "after"}));
  EXPECT_EQ(reporter_.reports, 0);
}

TEST_F(LogTest, LastRecordOffset) {
  Write("a");
  Write(BigString("b", 2 * kBlockSize));
  Write("c");
  ASSERT_EQ(ReadAll().size(), 3u);
  EXPECT_EQ(offsets_, (std::vector<uint64_t>{0, ends_[0], ends_[1]}));
}

TEST_F(LogTest, AppendingWriterContinuesTheBlockLayout) {
  std::vector<std::string> records;
  Random rnd(7);
  for (int round = 0; round < 5; ++round) {
    // A new Writer over the same file, as after reopening a log.
    writer_ = std::make_unique<Writer>(&dest_, contents_.size());
    for (int i = 0; i < 20; ++i) {
      records.push_back(test::RandomString(&rnd, rnd.Uniform(5000)));
      Write(records.back());
    }
  }
  EXPECT_EQ(ReadAll(), records);
  EXPECT_EQ(reporter_.reports, 0);
}

// The log a crash leaves behind: every possible cut inside the last block
// yields exactly the records that were complete, and no reports.
TEST_F(LogTest, TruncatedLastBlockIsACleanEnd) {
  std::vector<std::string> records;
  Random rnd(99);
  // Fill most of block 0, then a record spanning blocks 0, 1 and 2 (FIRST,
  // MIDDLE, LAST), then small and empty records ending in block 2.
  while (contents_.size() < kBlockSize - 4000) {
    records.push_back(test::RandomString(&rnd, 100 + rnd.Uniform(2000)));
    Write(records.back());
  }
  records.push_back(BigString("spanning", kBlockSize + 8000));
  Write(records.back());
  ASSERT_GT(contents_.size(), 2 * kBlockSize);
  while (contents_.size() < 2 * kBlockSize + 12000) {
    records.push_back(test::RandomString(&rnd, rnd.Uniform(300)));
    Write(records.back());
  }
  Write("");
  records.push_back("");

  const size_t last_block_start = 2 * kBlockSize;
  // Sanitizer builds are ~10x slower: test every 7th cut there.
  const size_t step = Sanitized() ? 7 : 1;
  for (size_t cut = last_block_start; cut <= contents_.size(); cut += step) {
    size_t complete = 0;
    while (complete < ends_.size() && ends_[complete] <= cut) ++complete;
    const std::vector<std::string> got = ReadAll(cut);
    ASSERT_EQ(got.size(), complete) << "cut at " << cut;
    for (size_t i = 0; i < complete; ++i) {
      ASSERT_EQ(got[i], records[i]) << "cut at " << cut << " record " << i;
    }
    ASSERT_EQ(reporter_.reports, 0)
        << "cut at " << cut << ": " << reporter_.last;
  }
}

TEST_F(LogTest, FragmentedRecordCutAtABlockBoundaryIsACleanEnd) {
  Write("whole");
  Write(BigString("torn", 3 * kBlockSize));
  // Cut after the FIRST fragment, and after the MIDDLE one.
  for (size_t cut : {kBlockSize, 2 * kBlockSize, 3 * kBlockSize}) {
    EXPECT_EQ(ReadAll(cut), std::vector<std::string>{"whole"}) << cut;
  }
  EXPECT_EQ(reporter_.reports, 0);
}

TEST_F(LogTest, FlippedByteInTheMiddleIsReportedAndLaterRecordsRead) {
  std::vector<std::string> records;
  for (int i = 0; i < 200; ++i) {
    records.push_back(BigString(absl::StrCat("record", i, "-"), 1000));
    Write(records.back());
  }
  ASSERT_GT(contents_.size(), 5 * kBlockSize);
  // A payload byte of a record in block 1.
  size_t victim = 0;
  while (ends_[victim] < kBlockSize + 100) ++victim;
  FlipByte(ends_[victim] + kHeaderSize + 10);

  const std::vector<std::string> got = ReadAll();
  // The damaged fragment's block is dropped; if the block's last record
  // continues into block 2, its orphaned tail is reported as well.
  EXPECT_GE(reporter_.reports, 1);
  EXPECT_LE(reporter_.reports, 2);
  EXPECT_TRUE(absl::IsDataLoss(reporter_.first)) << reporter_.first;
  EXPECT_NE(reporter_.first.message().find(
                absl::StrCat("offset ", ends_[victim], ": checksum mismatch")),
            std::string::npos)
      << reporter_.first;
  // Everything before the damaged record and everything from block 2 on is
  // read, in order.
  EXPECT_GE(reporter_.dropped, 1000u);
  EXPECT_LT(reporter_.dropped, 2 * kBlockSize);
  ASSERT_GT(got.size(), 150u);
  ASSERT_LT(got.size(), records.size());
  size_t next = 0;
  for (const auto& r : got) {
    while (next < records.size() && records[next] != r) ++next;
    ASSERT_LT(next, records.size()) << "record read out of order";
    ++next;
  }
  EXPECT_EQ(got.back(), records.back());
  EXPECT_EQ(
      std::vector<std::string>(got.begin(), got.begin() + victim + 1),
      std::vector<std::string>(records.begin(), records.begin() + victim + 1));
}

TEST_F(LogTest, UnverifiedChecksumsReturnDamagedBytes) {
  Write("foo");
  Write("bar");
  FlipByte(kHeaderSize + 1);
  std::vector<std::string> got = ReadAll(std::string::npos, 0, false);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0], "foo");
  EXPECT_EQ(got[1], "bar");
  EXPECT_EQ(reporter_.reports, 0);
}

TEST_F(LogTest, BadLengthInTheMiddleIsReported) {
  Write("first");
  Write(BigString("x", kBlockSize));  // pushes the log into block 1
  Write("in block 1");
  // A length of 0xffff in the first record's header (block 0, not the last).
  contents_[4] = '\xff';
  contents_[5] = '\xff';
  const std::vector<std::string> got = ReadAll();
  EXPECT_EQ(got, std::vector<std::string>{"in block 1"});
  EXPECT_GE(reporter_.reports, 1);
  EXPECT_TRUE(absl::IsDataLoss(reporter_.last));
}

TEST_F(LogTest, MissingStartOfFragmentedRecordIsReported) {
  Write(BigString("spans", kBlockSize + 100));
  Write("after");
  FlipByte(kHeaderSize + 3);  // damages the FIRST fragment in block 0
  EXPECT_EQ(ReadAll(), std::vector<std::string>{"after"});
  // One report for the dropped FIRST fragment, one for the orphaned LAST.
  EXPECT_EQ(reporter_.reports, 2);
  EXPECT_NE(reporter_.last.message().find("missing start"), std::string::npos)
      << reporter_.last;
}

TEST_F(LogTest, UnknownRecordTypeIsReported) {
  Write("foo");
  Write("bar");
  contents_[6] = 9;  // not a record type
  FixChecksum(0);
  EXPECT_EQ(ReadAll(), std::vector<std::string>{"bar"});
  EXPECT_EQ(reporter_.reports, 1);
  EXPECT_NE(reporter_.last.message().find("unknown record type"),
            std::string::npos);
}

TEST_F(LogTest, UnexpectedFirstFragmentDropsPartialRecord) {
  Write(BigString("one", kBlockSize + 10));
  Write("two");
  // Turn the LAST fragment of record one (at the start of block 1) into a
  // FIRST: the record never ends, and is reported once "two" shows up.
  ASSERT_EQ(static_cast<uint8_t>(contents_[kBlockSize + 6]), kLastType);
  contents_[kBlockSize + 6] = kFirstType;
  FixChecksum(kBlockSize);
  EXPECT_EQ(ReadAll(), std::vector<std::string>{"two"});
  EXPECT_GE(reporter_.reports, 1);
}

TEST_F(LogTest, ZeroFilledSpaceIsSkipped) {
  Write("a");
  // Preallocated, unwritten space: the rest of block 0 and all of block 1.
  contents_.resize(2 * kBlockSize, '\0');
  writer_ = std::make_unique<Writer>(&dest_, contents_.size());
  Write("b");
  contents_.append(500, '\0');  // and a zero tail at the end
  EXPECT_EQ(ReadAll(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(reporter_.reports, 0);
}

TEST_F(LogTest, ReadErrorStopsAndIsReported) {
  for (int i = 0; i < 10; ++i) Write(BigString("r", 10000));
  StringSource source(contents_);
  source.FailAt(kBlockSize);
  Reader reader(&source, &reporter_, true);
  std::string scratch;
  std::string_view record;
  int n = 0;
  while (reader.ReadRecord(&record, &scratch)) ++n;
  EXPECT_EQ(n, 3);  // the records wholly inside block 0
  EXPECT_TRUE(absl::IsUnavailable(reader.status())) << reader.status();
  EXPECT_EQ(reporter_.reports, 1);
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch));
}

TEST_F(LogTest, InitialOffsetStartsAtTheNextRecord) {
  std::vector<std::string> records;
  const std::vector<size_t> sizes = {
      10, kBlockSize - 100, 200, 2 * kBlockSize, 0, 5000, 3};
  for (size_t i = 0; i < sizes.size(); ++i) {
    records.push_back(BigString(absl::StrCat(i), sizes[i]));
    Write(records.back());
  }
  std::vector<uint64_t> starts = {0};
  for (size_t i = 0; i + 1 < ends_.size(); ++i) starts.push_back(ends_[i]);

  for (size_t i = 0; i < records.size(); ++i) {
    // Exactly at a record: that record first.
    offsets_.clear();
    std::vector<std::string> got = ReadAll(std::string::npos, starts[i]);
    EXPECT_EQ(got, std::vector<std::string>(records.begin() + i, records.end()))
        << i;
    ASSERT_FALSE(offsets_.empty());
    EXPECT_EQ(offsets_[0], starts[i]);
    // Just past its start: the next record first.
    got = ReadAll(std::string::npos, starts[i] + 1);
    EXPECT_EQ(got,
              std::vector<std::string>(records.begin() + i + 1, records.end()))
        << i;
  }
  // Past the end: nothing.
  EXPECT_TRUE(ReadAll(std::string::npos, contents_.size() + 10).empty());
  EXPECT_EQ(reporter_.reports, 0);
}

// Collects every problem, torn tails included (the diagnostic view).
class ProblemReporter final : public Reader::Reporter {
 public:
  void Report(const Problem& p) override { problems.push_back(p); }
  std::vector<Problem> problems;
};

std::vector<Problem> ProblemsOf(std::string_view contents,
                                std::vector<std::string>* records = nullptr) {
  StringSource source(contents);
  ProblemReporter reporter;
  Reader reader(&source, &reporter, /*verify_checksums=*/true);
  std::string scratch;
  std::string_view record;
  while (reader.ReadRecord(&record, &scratch)) {
    if (records != nullptr) records->emplace_back(record);
  }
  EXPECT_TRUE(reader.status().ok()) << reader.status();
  return reporter.problems;
}

// A log cut anywhere inside its last record, in the 7-byte header or after
// it, has the same torn tail at the record's offset; nothing is damage.
TEST_F(LogTest, TornTailIsReportedWhereverTheCutFalls) {
  Write("first");
  Write("second");
  Write(BigString("last", 100));
  const size_t start = ends_[1];
  for (size_t cut = start + 1; cut < contents_.size(); ++cut) {
    std::vector<std::string> records;
    const std::vector<Problem> problems =
        ProblemsOf(std::string_view(contents_).substr(0, cut), &records);
    ASSERT_EQ(records, (std::vector<std::string>{"first", "second"}))
        << "cut at " << cut;
    ASSERT_EQ(problems.size(), 1u) << "cut at " << cut;
    EXPECT_EQ(problems[0].kind, Problem::Kind::kTornTail) << "cut at " << cut;
    EXPECT_EQ(problems[0].offset, start) << "cut at " << cut;
    EXPECT_EQ(problems[0].bytes, cut - start) << "cut at " << cut;
  }
  // Cut exactly between records: a clean end, no problem at all.
  EXPECT_TRUE(ProblemsOf(std::string_view(contents_).substr(0, start)).empty());
  EXPECT_TRUE(ProblemsOf(contents_).empty());
}

// A record whose FIRST fragment is complete but whose LAST never made it:
// a torn tail at the record's start, not damage.
TEST_F(LogTest, FragmentedRecordCutShortIsATornTail) {
  Write("whole");
  Write(BigString("torn", kBlockSize + 100));
  const std::vector<Problem> problems =
      ProblemsOf(std::string_view(contents_).substr(0, kBlockSize));
  ASSERT_FALSE(problems.empty());
  for (const Problem& p : problems) {
    EXPECT_EQ(p.kind, Problem::Kind::kTornTail) << p.reason;
  }
  EXPECT_EQ(problems.back().offset, ends_[0]);
}

// What a crash leaves in a log written through a mapping of preallocated
// space (Env::NewLogFile): the fragment being copied has a zero header (the
// header is stored last), maybe some of its payload, and zeros follow to the
// end of the file. That is the end of the log: a record it left open is a
// torn tail, and nothing is damage.
TEST_F(LogTest, ZeroHeaderWithOnlyZerosAfterItEndsTheLog) {
  Write("whole");
  Write(BigString("torn", 2 * kBlockSize + 100));  // FIRST, MIDDLE, LAST
  const size_t middle = kBlockSize;    // the MIDDLE fragment's header
  const size_t last = 2 * kBlockSize;  // the LAST fragment's header
  for (const size_t header : {middle, last}) {
    for (const size_t payload_written : {size_t{0}, size_t{50}}) {
      // The file up to the fragment's header, a zero header, some of the
      // payload, zeros to the end of a preallocated window.
      std::string crashed = contents_.substr(0, header);
      crashed.append(kHeaderSize, '\0');
      crashed += contents_.substr(header + kHeaderSize, payload_written);
      crashed.resize(header + 3 * kBlockSize, '\0');
      std::vector<std::string> records;
      const std::vector<Problem> problems = ProblemsOf(crashed, &records);
      EXPECT_EQ(records, std::vector<std::string>{"whole"});
      ASSERT_EQ(problems.size(), 1u) << header << " " << payload_written;
      EXPECT_EQ(problems[0].kind, Problem::Kind::kTornTail)
          << problems[0].reason;
      EXPECT_EQ(problems[0].offset, ends_[0]);
    }
  }
  // A whole record followed by a zero header and zeros: a clean end.
  std::string clean = contents_.substr(0, ends_[0]);
  clean.resize(ends_[0] + 2 * kBlockSize, '\0');
  std::vector<std::string> records;
  EXPECT_TRUE(ProblemsOf(clean, &records).empty());
  EXPECT_EQ(records, std::vector<std::string>{"whole"});
}

// Zeros inside a record are still damage when something follows them: the
// zero blocks are skipped, the open record is reported dropped, and the
// record after them is read.
TEST_F(LogTest, ZeroHeaderInsideARecordWithDataAfterIsDamage) {
  Write("whole");
  Write(BigString("zeroed", kBlockSize + 100));  // FIRST, LAST at block 1
  std::memset(contents_.data() + kBlockSize, 0, kBlockSize);  // block 1
  contents_.resize(3 * kBlockSize, '\0');                     // block 2 zero
  writer_ = std::make_unique<Writer>(&dest_, contents_.size());
  Write("after");
  std::vector<std::string> records;
  const std::vector<Problem> problems = ProblemsOf(contents_, &records);
  EXPECT_EQ(records, (std::vector<std::string>{"whole", "after"}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, Problem::Kind::kDamage) << problems[0].reason;
  EXPECT_EQ(problems[0].offset, ends_[0]);
}

// The diagnostic view sees damage at its offset, and reading goes on behind
// a damaged fragment whose length still leads to an intact one.
TEST_F(LogTest, DamageIsReportedAtItsOffsetAndReadingResumes) {
  for (int i = 0; i < 5; ++i) Write(BigString(absl::StrCat("r", i), 200));
  FlipByte(ends_[1] + kHeaderSize + 20);  // payload of record 2
  std::vector<std::string> records;
  const std::vector<Problem> problems = ProblemsOf(contents_, &records);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, Problem::Kind::kDamage);
  EXPECT_EQ(problems[0].offset, ends_[1]);
  EXPECT_EQ(problems[0].bytes, ends_[2] - ends_[1]);
  EXPECT_NE(problems[0].reason.find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(records.size(), 4u);
}

}  // namespace
}  // namespace sift::log
