// Versions without table data: file picking, level placement, compaction
// picking, and the MANIFEST (logging, recovery, damage, failed writes).

#include "db/version_set.h"

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "db/filename.h"
#include "db/log_writer.h"
#include "gtest/gtest.h"
#include "tests/testutil/test_env.h"
#include "util/fault_env.h"
#include "util/mutex.h"

namespace sift {
namespace {

FileMetaData MakeFile(uint64_t number, std::string_view smallest,
                      std::string_view largest, uint64_t size = 1000,
                      SequenceNumber smallest_seq = 100,
                      SequenceNumber largest_seq = 100) {
  FileMetaData f;
  f.number = number;
  f.file_size = size;
  f.smallest = InternalKey(smallest, smallest_seq, kTypeValue);
  f.largest = InternalKey(largest, largest_seq, kTypeValue);
  return f;
}

// ---------------------------------------------------------------------------
// FindFile and SomeFileOverlapsRange over hand-made file lists.

class FindFileTest : public testing::Test {
 protected:
  void Add(std::string_view smallest, std::string_view largest,
           SequenceNumber smallest_seq = 100,
           SequenceNumber largest_seq = 100) {
    files_.push_back(std::make_shared<const FileMetaData>(
        MakeFile(files_.size() + 1, smallest, largest, 1000, smallest_seq,
                 largest_seq)));
  }
  size_t Find(std::string_view user_key, SequenceNumber seq = 100) {
    const InternalKey target(user_key, seq, kTypeValue);
    return FindFile(icmp_, files_, target.Encode());
  }
  bool Overlaps(const char* smallest, const char* largest) {
    std::string_view s = smallest != nullptr ? smallest : "";
    std::string_view l = largest != nullptr ? largest : "";
    return SomeFileOverlapsRange(icmp_, disjoint_, files_,
                                 smallest != nullptr ? &s : nullptr,
                                 largest != nullptr ? &l : nullptr);
  }

  InternalKeyComparator icmp_{BytewiseComparator()};
  FileList files_;
  bool disjoint_ = true;
};

TEST_F(FindFileTest, Empty) {
  EXPECT_EQ(Find("foo"), 0u);
  EXPECT_FALSE(Overlaps("a", "z"));
  EXPECT_FALSE(Overlaps(nullptr, "z"));
  EXPECT_FALSE(Overlaps("a", nullptr));
  EXPECT_FALSE(Overlaps(nullptr, nullptr));
}

TEST_F(FindFileTest, Single) {
  Add("p", "q");
  EXPECT_EQ(Find("a"), 0u);
  EXPECT_EQ(Find("p"), 0u);
  EXPECT_EQ(Find("p1"), 0u);
  EXPECT_EQ(Find("q"), 0u);
  EXPECT_EQ(Find("q1"), 1u);
  EXPECT_EQ(Find("z"), 1u);

  EXPECT_FALSE(Overlaps("a", "b"));
  EXPECT_FALSE(Overlaps("z1", "z2"));
  EXPECT_TRUE(Overlaps("a", "p"));
  EXPECT_TRUE(Overlaps("a", "q"));
  EXPECT_TRUE(Overlaps("p", "p1"));
  EXPECT_TRUE(Overlaps("q", "z"));
  EXPECT_TRUE(Overlaps("p1", "p2"));
  EXPECT_FALSE(Overlaps(nullptr, "j"));
  EXPECT_FALSE(Overlaps("r", nullptr));
  EXPECT_TRUE(Overlaps(nullptr, "p"));
  EXPECT_TRUE(Overlaps("q", nullptr));
  EXPECT_TRUE(Overlaps(nullptr, nullptr));
}

TEST_F(FindFileTest, Multiple) {
  Add("150", "200");
  Add("200", "250", 90, 90);  // "200"@100 ends file 1; "200"@90 starts file 2
  Add("300", "350");
  Add("400", "450");
  EXPECT_EQ(Find("100"), 0u);
  EXPECT_EQ(Find("150"), 0u);
  EXPECT_EQ(Find("151"), 0u);
  EXPECT_EQ(Find("199"), 0u);
  EXPECT_EQ(Find("200"), 0u);
  EXPECT_EQ(Find("200", 95), 1u);  // older than file 1's last entry
  EXPECT_EQ(Find("201"), 1u);
  EXPECT_EQ(Find("249"), 1u);
  EXPECT_EQ(Find("250", 90), 1u);
  EXPECT_EQ(Find("251"), 2u);
  EXPECT_EQ(Find("299"), 2u);
  EXPECT_EQ(Find("300"), 2u);
  EXPECT_EQ(Find("349"), 2u);
  EXPECT_EQ(Find("350"), 2u);
  EXPECT_EQ(Find("351"), 3u);
  EXPECT_EQ(Find("450"), 3u);
  EXPECT_EQ(Find("451"), 4u);

  EXPECT_FALSE(Overlaps("100", "149"));
  EXPECT_FALSE(Overlaps("251", "299"));
  EXPECT_FALSE(Overlaps("451", "500"));
  EXPECT_FALSE(Overlaps("351", "399"));
  EXPECT_TRUE(Overlaps("100", "150"));
  EXPECT_TRUE(Overlaps("100", "200"));
  EXPECT_TRUE(Overlaps("100", "300"));
  EXPECT_TRUE(Overlaps("100", "400"));
  EXPECT_TRUE(Overlaps("100", "500"));
  EXPECT_TRUE(Overlaps("375", "400"));
  EXPECT_TRUE(Overlaps("450", "450"));
  EXPECT_TRUE(Overlaps("450", "500"));
}

TEST_F(FindFileTest, BinarySearchAgreesWithLinearScan) {
  for (int i = 0; i < 100; ++i) {
    const std::string lo = std::to_string(1000 + 10 * i);
    const std::string hi = std::to_string(1000 + 10 * i + 5);
    Add(lo, hi);
  }
  for (int k = 990; k < 2010; ++k) {
    const std::string key = std::to_string(k);
    size_t expected = files_.size();
    for (size_t i = 0; i < files_.size(); ++i) {
      if (files_[i]->largest.user_key() >= key) {
        expected = i;
        break;
      }
    }
    EXPECT_EQ(Find(key), expected) << key;
  }
}

TEST_F(FindFileTest, OverlappingLevelZeroFiles) {
  disjoint_ = false;
  Add("150", "600");
  Add("400", "500");
  EXPECT_FALSE(Overlaps("100", "149"));
  EXPECT_FALSE(Overlaps("601", "700"));
  EXPECT_TRUE(Overlaps("100", "150"));
  EXPECT_TRUE(Overlaps("450", "700"));
  EXPECT_TRUE(Overlaps("600", "700"));
  EXPECT_TRUE(Overlaps(nullptr, "150"));
  EXPECT_TRUE(Overlaps("600", nullptr));
}

// ---------------------------------------------------------------------------
// VersionSet with metadata-only files (no table is ever opened).

class VersionSetTest : public testing::Test {
 protected:
  VersionSetTest() : mem_env_(test::NewTestEnv()) {
    env_ = mem_env_.get();
    options_.env = env_;
    EXPECT_TRUE(env_->CreateDir(dbname_).ok());
    table_cache_ =
        std::make_unique<TableCache>(dbname_, options_, &icmp_, nullptr, 100);
    vset_ = NewVersionSet();
  }

  std::unique_ptr<VersionSet> NewVersionSet() {
    return std::make_unique<VersionSet>(dbname_, &options_, table_cache_.get(),
                                        &icmp_);
  }

  absl::Status Apply(VersionEdit* edit, VersionSet* vset = nullptr) {
    MutexLock l(&mu_);
    return (vset != nullptr ? vset : vset_.get())->LogAndApply(edit, &mu_);
  }

  void AddFiles(int level, const std::vector<FileMetaData>& files) {
    VersionEdit edit;
    for (const auto& f : files) {
      vset_->MarkFileNumberUsed(f.number);
      edit.AddFile(level, f);
    }
    ASSERT_TRUE(Apply(&edit).ok());
  }

  // Files per level as (level, number) pairs.
  static std::set<std::pair<int, uint64_t>> Layout(const Version& v) {
    std::set<std::pair<int, uint64_t>> r;
    for (int level = 0; level < config::kNumLevels; ++level) {
      for (const auto& f : v.files(level)) r.insert({level, f->number});
    }
    return r;
  }

  absl::Status Reopen(std::unique_ptr<VersionSet>* out) {
    *out = NewVersionSet();
    return (*out)->Recover();
  }

  std::string ReadFile(const std::string& fname) {
    auto file = env_->NewSequentialFile(fname);
    EXPECT_TRUE(file.ok());
    std::string r;
    char buf[4096];
    while (true) {
      std::string_view chunk;
      EXPECT_TRUE((*file)->Read(sizeof(buf), &chunk, buf).ok());
      if (chunk.empty()) break;
      r.append(chunk);
    }
    return r;
  }

  void WriteFile(const std::string& fname, std::string_view contents) {
    auto file = env_->NewWritableFile(fname);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(contents).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }

  std::string CurrentManifest() {
    std::string current = ReadFile(CurrentFileName(dbname_));
    EXPECT_FALSE(current.empty());
    if (!current.empty()) current.pop_back();
    return dbname_ + "/" + current;
  }

  const std::string dbname_ = "/db";
  std::unique_ptr<Env> mem_env_;
  Env* env_;
  Options options_;
  InternalKeyComparator icmp_{BytewiseComparator()};
  std::unique_ptr<TableCache> table_cache_;
  Mutex mu_;
  std::unique_ptr<VersionSet> vset_;
};

TEST_F(VersionSetTest, NewDatabaseStartsEmpty) {
  EXPECT_EQ(vset_->LevelSummary(), "files[ 0 0 0 0 0 0 0 ]");
  EXPECT_FALSE(vset_->NeedsCompaction());
  EXPECT_EQ(vset_->PickCompaction(), nullptr);
  EXPECT_FALSE(env_->FileExists(CurrentFileName(dbname_)));

  VersionEdit edit;
  ASSERT_TRUE(Apply(&edit).ok());
  EXPECT_TRUE(env_->FileExists(CurrentFileName(dbname_)));
  EXPECT_EQ(CurrentManifest(),
            DescriptorFileName(dbname_, vset_->ManifestFileNumber()));
  EXPECT_TRUE(env_->FileExists(CurrentManifest()));
}

TEST_F(VersionSetTest, FileNumbers) {
  const uint64_t a = vset_->NewFileNumber();
  const uint64_t b = vset_->NewFileNumber();
  EXPECT_EQ(b, a + 1);
  vset_->ReuseFileNumber(a);  // not the last one handed out: ignored
  EXPECT_EQ(vset_->NewFileNumber(), b + 1);
  vset_->ReuseFileNumber(b + 1);
  EXPECT_EQ(vset_->NewFileNumber(), b + 1);
  vset_->MarkFileNumberUsed(100);
  EXPECT_EQ(vset_->NewFileNumber(), 101u);
  vset_->MarkFileNumberUsed(50);
  EXPECT_EQ(vset_->NewFileNumber(), 102u);
}

TEST_F(VersionSetTest, PickLevelForMemTableOutput) {
  auto pick = [&](std::string_view a, std::string_view b) {
    return vset_->current()->PickLevelForMemTableOutput(a, b);
  };
  EXPECT_EQ(pick("a", "z"), config::kMaxMemCompactLevel);

  AddFiles(2, {MakeFile(10, "m", "n")});
  EXPECT_EQ(pick("a", "c"), config::kMaxMemCompactLevel);
  EXPECT_EQ(pick("a", "m"), 1);  // would overlap level 2
  EXPECT_EQ(pick("n", "p"), 1);

  AddFiles(1, {MakeFile(11, "f", "g")});
  EXPECT_EQ(pick("a", "c"), config::kMaxMemCompactLevel);
  EXPECT_EQ(pick("e", "f"), 0);  // would overlap level 1

  AddFiles(0, {MakeFile(12, "x", "y")});
  EXPECT_EQ(pick("y", "z"), 0);  // overlaps level 0
  EXPECT_EQ(pick("a", "c"), config::kMaxMemCompactLevel);

  // Too much grandparent data under the range keeps the table higher up:
  // level 1 would be fine itself, but level 3 below level 2 is too big.
  const uint64_t big = MaxGrandParentOverlapBytes(options_.max_file_size) + 1;
  AddFiles(3, {MakeFile(13, "b", "c", big)});
  EXPECT_EQ(pick("a", "c"), 1);
  AddFiles(2, {MakeFile(14, "b", "b1", big)});
  EXPECT_EQ(pick("a", "c"), 0);  // level 2 is level 0's grandparent
}

TEST_F(VersionSetTest, OverlapInLevel) {
  AddFiles(0, {MakeFile(5, "c", "e"), MakeFile(6, "a", "b")});
  AddFiles(1, {MakeFile(7, "c", "e"), MakeFile(8, "g", "h")});
  auto v = vset_->current();
  std::string_view a = "a", d = "d", f = "f", z = "z";
  EXPECT_TRUE(v->OverlapInLevel(0, &a, &a));
  EXPECT_TRUE(v->OverlapInLevel(0, &d, &z));
  EXPECT_FALSE(v->OverlapInLevel(0, &f, &z));
  EXPECT_TRUE(v->OverlapInLevel(1, &d, &f));
  EXPECT_FALSE(v->OverlapInLevel(1, &f, &f));
  EXPECT_TRUE(v->OverlapInLevel(1, nullptr, &d));
  EXPECT_FALSE(v->OverlapInLevel(1, &z, nullptr));
  EXPECT_FALSE(v->OverlapInLevel(2, nullptr, nullptr));
  EXPECT_EQ(v->NumFiles(0), 2);
  EXPECT_EQ(v->NumLevelBytes(1), 2000);
}

TEST_F(VersionSetTest, ManifestRoundTrip) {
  AddFiles(0, {MakeFile(20, "a", "m"), MakeFile(21, "c", "z")});
  AddFiles(1, {MakeFile(22, "a", "f"), MakeFile(23, "g", "k")});
  AddFiles(3, {MakeFile(24, "b", "y", 5000)});
  {
    VersionEdit edit;
    edit.RemoveFile(1, 23);
    edit.AddFile(2, MakeFile(23, "g", "k"));  // moved down
    edit.SetLogNumber(30);
    vset_->MarkFileNumberUsed(30);
    vset_->SetLastSequence(12345);
    ASSERT_TRUE(Apply(&edit).ok());
  }
  {
    VersionEdit edit;
    edit.RemoveFile(0, 20);
    edit.RemoveFile(0, 21);
    ASSERT_TRUE(Apply(&edit).ok());
  }
  // A compaction pick moves the level's compact pointer; log it.
  AddFiles(0, {MakeFile(31, "a", "b"), MakeFile(32, "c", "d"),
               MakeFile(33, "e", "f"), MakeFile(34, "g", "h")});
  std::unique_ptr<Compaction> c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->input(0, 0)->number, 31u);
  ASSERT_TRUE(Apply(c->edit()).ok());
  c.reset();

  const auto before = Layout(*vset_->current());
  const uint64_t next_file = vset_->NewFileNumber();
  const uint64_t manifest = vset_->ManifestFileNumber();

  std::unique_ptr<VersionSet> reopened;
  ASSERT_TRUE(Reopen(&reopened).ok());
  EXPECT_EQ(Layout(*reopened->current()), before);
  EXPECT_EQ(reopened->LogNumber(), 30u);
  EXPECT_EQ(reopened->LastSequence(), 12345u);
  EXPECT_EQ(reopened->ManifestFileNumber(), manifest);
  EXPECT_GE(reopened->NewFileNumber(), next_file);
  EXPECT_EQ(reopened->LevelSummary(), vset_->LevelSummary());
  // Key ranges and sizes come back too.
  const FileMetaData& f = *reopened->current()->files(3)[0];
  EXPECT_EQ(f.number, 24u);
  EXPECT_EQ(f.file_size, 5000u);
  EXPECT_EQ(f.smallest.user_key(), "b");
  EXPECT_EQ(f.largest.user_key(), "y");
  // The compact pointer survived: the next pick of level 0 continues after
  // where the last one ended rather than at the start.
  std::unique_ptr<Compaction> again = reopened->PickCompaction();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->level(), 0);
  EXPECT_EQ(again->input(0, 0)->number, 34u);  // 31..33 went together
  again.reset();

  // The first write after recovery starts a new MANIFEST; a second reopen
  // reads that one.
  VersionEdit edit;
  edit.RemoveFile(3, 24);
  ASSERT_TRUE(Apply(&edit, reopened.get()).ok());
  EXPECT_GT(reopened->ManifestFileNumber(), manifest);
  EXPECT_EQ(CurrentManifest(),
            DescriptorFileName(dbname_, reopened->ManifestFileNumber()));
  const auto after = Layout(*reopened->current());
  EXPECT_EQ(after.count({3, 24}), 0u);
  EXPECT_EQ(after.size(), before.size() - 1);

  std::unique_ptr<VersionSet> third;
  ASSERT_TRUE(Reopen(&third).ok());
  EXPECT_EQ(Layout(*third->current()), after);
  EXPECT_EQ(third->LastSequence(), 12345u);
}

TEST_F(VersionSetTest, ManyEditsInOneManifest) {
  VersionEdit first;
  ASSERT_TRUE(Apply(&first).ok());
  const uint64_t manifest = vset_->ManifestFileNumber();
  for (uint64_t i = 0; i < 200; ++i) {
    VersionEdit edit;
    const std::string key = std::to_string(1000 + i);
    const uint64_t number = vset_->NewFileNumber();
    edit.AddFile(1, MakeFile(number, key, key + "z"));
    if (i % 3 == 2) edit.RemoveFile(1, number - 1);
    vset_->SetLastSequence(i * 10);
    ASSERT_TRUE(Apply(&edit).ok());
  }
  EXPECT_EQ(vset_->ManifestFileNumber(), manifest);  // appended, not rewritten
  std::unique_ptr<VersionSet> reopened;
  ASSERT_TRUE(Reopen(&reopened).ok());
  EXPECT_EQ(Layout(*reopened->current()), Layout(*vset_->current()));
  EXPECT_EQ(reopened->LastSequence(), 1990u);
}

TEST_F(VersionSetTest, MissingOrDamagedCurrentIsDataLoss) {
  VersionEdit edit;
  ASSERT_TRUE(Apply(&edit).ok());
  const std::string current = CurrentFileName(dbname_);
  const std::string good = ReadFile(current);
  std::unique_ptr<VersionSet> v;

  ASSERT_TRUE(env_->RemoveFile(current).ok());
  absl::Status s = Reopen(&v);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("CURRENT"), std::string_view::npos) << s;

  for (std::string_view bad :
       {std::string_view(""), std::string_view("\n"),
        std::string_view("garbage\n"), std::string_view("MANIFEST-000001"),
        std::string_view("000001.log\n")}) {
    WriteFile(current, bad);
    s = Reopen(&v);
    EXPECT_TRUE(absl::IsDataLoss(s)) << "'" << bad << "': " << s;
    EXPECT_NE(s.message().find("CURRENT"), std::string_view::npos) << s;
  }
  WriteFile(current, good);
  EXPECT_TRUE(Reopen(&v).ok());
}

TEST_F(VersionSetTest, MissingOrDamagedManifestIsDataLoss) {
  AddFiles(1, {MakeFile(10, "a", "c"), MakeFile(11, "d", "f")});
  const std::string manifest = CurrentManifest();
  const std::string good = ReadFile(manifest);
  const std::string manifest_base = manifest.substr(dbname_.size() + 1);
  std::unique_ptr<VersionSet> v;
  auto expect_data_loss = [&](const char* what) {
    absl::Status s = Reopen(&v);
    EXPECT_TRUE(absl::IsDataLoss(s)) << what << ": " << s;
    EXPECT_NE(s.message().find(manifest_base), std::string_view::npos)
        << what << ": " << s;
  };

  ASSERT_TRUE(env_->RemoveFile(manifest).ok());
  expect_data_loss("missing");

  WriteFile(manifest, "");
  expect_data_loss("empty");

  // A flipped byte inside the first record's payload breaks its checksum.
  std::string flipped = good;
  flipped[log::kHeaderSize + 3] ^= 0x5a;
  WriteFile(manifest, flipped);
  expect_data_loss("flipped byte");

  WriteFile(manifest, std::string(100, '\xff'));
  expect_data_loss("garbage");

  WriteFile(manifest, good);
  ASSERT_TRUE(Reopen(&v).ok());
  EXPECT_EQ(v->current()->NumFiles(1), 2);
}

TEST_F(VersionSetTest, ManifestLackingRequiredFieldsIsDataLoss) {
  // Hand-written MANIFESTs, each missing one required field.
  auto write_manifest = [&](const VersionEdit& edit) {
    const std::string fname = DescriptorFileName(dbname_, 7);
    auto file = env_->NewWritableFile(fname);
    ASSERT_TRUE(file.ok());
    log::Writer writer(file->get());
    std::string record;
    edit.EncodeTo(&record);
    ASSERT_TRUE(writer.AddRecord(record).ok());
    ASSERT_TRUE((*file)->Close().ok());
    ASSERT_TRUE(SetCurrentFile(env_, dbname_, 7).ok());
  };
  auto full = [] {
    VersionEdit e;
    e.SetComparatorName(BytewiseComparator()->Name());
    e.SetLogNumber(3);
    e.SetNextFile(9);
    e.SetLastSequence(5);
    return e;
  };
  std::unique_ptr<VersionSet> v;
  {
    VersionEdit e = full();
    write_manifest(e);
    ASSERT_TRUE(Reopen(&v).ok());
    EXPECT_EQ(v->LogNumber(), 3u);
    EXPECT_EQ(v->LastSequence(), 5u);
    EXPECT_EQ(v->ManifestFileNumber(), 7u);
    EXPECT_GE(v->NewFileNumber(), 9u);
  }
  struct Case {
    const char* field;
    void (*clear)(VersionEdit* e);
  };
  const Case cases[] = {
      {"comparator",
       [](VersionEdit* e) {
         VersionEdit x;
         x.SetLogNumber(3);
         x.SetNextFile(9);
         x.SetLastSequence(5);
         *e = x;
       }},
      {"log number",
       [](VersionEdit* e) {
         VersionEdit x;
         x.SetComparatorName(BytewiseComparator()->Name());
         x.SetNextFile(9);
         x.SetLastSequence(5);
         *e = x;
       }},
      {"next file",
       [](VersionEdit* e) {
         VersionEdit x;
         x.SetComparatorName(BytewiseComparator()->Name());
         x.SetLogNumber(3);
         x.SetLastSequence(5);
         *e = x;
       }},
      {"last sequence",
       [](VersionEdit* e) {
         VersionEdit x;
         x.SetComparatorName(BytewiseComparator()->Name());
         x.SetLogNumber(3);
         x.SetNextFile(9);
         *e = x;
       }},
  };
  for (const Case& c : cases) {
    VersionEdit e = full();
    c.clear(&e);
    write_manifest(e);
    absl::Status s = Reopen(&v);
    EXPECT_TRUE(absl::IsDataLoss(s)) << c.field << ": " << s;
    EXPECT_NE(s.message().find(c.field), std::string_view::npos) << s;
    EXPECT_NE(s.message().find("MANIFEST-000007"), std::string_view::npos) << s;
  }

  // Overlapping files in a level >= 1 cannot come from a sound MANIFEST.
  VersionEdit overlapping = full();
  overlapping.AddFile(1, MakeFile(4, "a", "m"));
  overlapping.AddFile(1, MakeFile(5, "k", "z"));
  write_manifest(overlapping);
  absl::Status s = Reopen(&v);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;

  VersionEdit other_comparator = full();
  other_comparator.SetComparatorName("some.other.Comparator");
  write_manifest(other_comparator);
  s = Reopen(&v);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
}

TEST_F(VersionSetTest, FailedManifestWriteChangesNothing) {
  FaultInjectionEnv fault_env(mem_env_.get());
  options_.env = &fault_env;
  vset_ = NewVersionSet();
  AddFiles(1, {MakeFile(10, "a", "c")});
  const auto before = Layout(*vset_->current());
  const uint64_t log_number = vset_->LogNumber();
  const uint64_t manifest = vset_->ManifestFileNumber();

  // The record cannot be synced.
  fault_env.FailAfter(FaultInjectionEnv::OpKind::kSync, 1,
                      FaultInjectionEnv::NoSpaceError(), /*persistent=*/false);
  VersionEdit edit;
  edit.AddFile(1, MakeFile(11, "d", "f"));
  edit.SetLogNumber(vset_->NewFileNumber());
  absl::Status s = Apply(&edit);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_EQ(Layout(*vset_->current()), before);
  EXPECT_EQ(vset_->LogNumber(), log_number);

  // The next write starts a new MANIFEST and succeeds.
  fault_env.ClearFaults();
  VersionEdit retry;
  retry.AddFile(1, MakeFile(12, "g", "h"));
  ASSERT_TRUE(Apply(&retry).ok());
  EXPECT_GT(vset_->ManifestFileNumber(), manifest);
  std::unique_ptr<VersionSet> reopened;
  ASSERT_TRUE(Reopen(&reopened).ok());
  EXPECT_EQ(Layout(*reopened->current()),
            (std::set<std::pair<int, uint64_t>>{{1, 10}, {1, 12}}));

  // A new MANIFEST that cannot be created leaves everything as it was too,
  // and CURRENT still names a readable MANIFEST.
  vset_ = std::move(reopened);  // no MANIFEST open after Recover
  const auto layout = Layout(*vset_->current());
  fault_env.FailAfter(FaultInjectionEnv::OpKind::kCreate, 1,
                      FaultInjectionEnv::NoSpaceError(), false);
  VersionEdit third;
  third.AddFile(2, MakeFile(13, "x", "y"));
  EXPECT_FALSE(Apply(&third).ok());
  EXPECT_EQ(Layout(*vset_->current()), layout);
  fault_env.ClearFaults();
  std::unique_ptr<VersionSet> again;
  ASSERT_TRUE(Reopen(&again).ok());
  EXPECT_EQ(Layout(*again->current()), layout);
  vset_.reset();
  again.reset();
  options_.env = env_;
}

TEST_F(VersionSetTest, AddLiveFilesCoversVersionsStillHeld) {
  AddFiles(1, {MakeFile(10, "a", "c"), MakeFile(11, "d", "f")});
  std::shared_ptr<const Version> held = vset_->current();
  VersionEdit edit;
  edit.RemoveFile(1, 10);
  edit.AddFile(2, MakeFile(12, "a", "c"));
  ASSERT_TRUE(Apply(&edit).ok());

  std::set<uint64_t> live;
  vset_->AddLiveFiles(&live);
  EXPECT_EQ(live, (std::set<uint64_t>{10, 11, 12}));

  held.reset();
  live.clear();
  vset_->AddLiveFiles(&live);
  EXPECT_EQ(live, (std::set<uint64_t>{11, 12}));
}

// ---------------------------------------------------------------------------
// Compaction picking.

TEST_F(VersionSetTest, LevelZeroTriggerAndOverlapExpansion) {
  for (int i = 0; i < config::kL0CompactionTrigger - 1; ++i) {
    AddFiles(0, {MakeFile(10 + i, "x" + std::to_string(i),
                          "x" + std::to_string(i) + "z")});
  }
  EXPECT_FALSE(vset_->NeedsCompaction());
  EXPECT_EQ(vset_->PickCompaction(), nullptr);

  // Files 10..12 cover x0..x2z; 13 overlaps 12 only.
  AddFiles(0, {MakeFile(13, "x2a", "y")});
  EXPECT_TRUE(vset_->NeedsCompaction());
  AddFiles(1, {MakeFile(20, "a", "b"), MakeFile(21, "x1", "x3"),
               MakeFile(22, "zz", "zz")});

  // The compact pointer is empty: the pick starts at the oldest file, x0.
  std::unique_ptr<Compaction> c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level(), 0);
  ASSERT_EQ(c->num_input_files(1), 0);
  ASSERT_EQ(c->num_input_files(0), 1);
  EXPECT_EQ(c->input(0, 0)->number, 10u);
  EXPECT_TRUE(c->IsTrivialMove());
  c.reset();

  // Next pick continues after x0z: file 11 (x1..x1z), which level 1 file 21
  // overlaps; 21's range x1..x3 brings in 12 and 13, which overlap it too.
  c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  std::set<uint64_t> inputs0;
  for (int i = 0; i < c->num_input_files(0); ++i) {
    inputs0.insert(c->input(0, i)->number);
  }
  EXPECT_EQ(inputs0, (std::set<uint64_t>{11, 12, 13}));
  ASSERT_EQ(c->num_input_files(1), 1);
  EXPECT_EQ(c->input(1, 0)->number, 21u);
  EXPECT_FALSE(c->IsTrivialMove());

  VersionEdit deletions;
  c->AddInputDeletions(&deletions);
  EXPECT_EQ(
      deletions.deleted_files(),
      (std::set<std::pair<int, uint64_t>>{{0, 11}, {0, 12}, {0, 13}, {1, 21}}));
}

TEST_F(VersionSetTest, LevelSizeTriggerAndRoundRobin) {
  const uint64_t big =
      static_cast<uint64_t>(vset_->current()->LevelTargetBytes(1) / 3) + 1;
  AddFiles(1, {MakeFile(10, "a", "b", big), MakeFile(11, "c", "d", big)});
  EXPECT_FALSE(vset_->NeedsCompaction());
  AddFiles(1, {MakeFile(12, "e", "f", big)});
  EXPECT_TRUE(vset_->NeedsCompaction());
  AddFiles(2, {MakeFile(20, "c", "c5")});

  std::vector<uint64_t> picked;
  for (int i = 0; i < 4; ++i) {
    std::unique_ptr<Compaction> c = vset_->PickCompaction();
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->level(), 1);
    ASSERT_EQ(c->num_input_files(0), 1);
    picked.push_back(c->input(0, 0)->number);
    if (picked.back() == 11) {
      ASSERT_EQ(c->num_input_files(1), 1);
      EXPECT_EQ(c->input(1, 0)->number, 20u);
      EXPECT_FALSE(c->IsTrivialMove());
    } else {
      EXPECT_TRUE(c->IsTrivialMove());
    }
  }
  EXPECT_EQ(picked, (std::vector<uint64_t>{10, 11, 12, 10}));

  // Deeper levels are weighed against 10x bigger targets.
  EXPECT_NEAR(vset_->current()->LevelTargetBytes(2) /
                  vset_->current()->LevelTargetBytes(1),
              10.0, 1e-9);
  EXPECT_NEAR(vset_->current()->LevelTargetBytes(1), 10.0 * 1048576, 1e-3);
}

// Level 1's target follows the memtable size: 2.5 memtables' worth, never
// under 10 MiB (the default 4 MiB memtable keeps exactly 10 MiB).
TEST_F(VersionSetTest, LevelOneTargetFollowsTheWriteBuffer) {
  EXPECT_NEAR(Level1MaxBytes(4 << 20), 10.0 * 1048576, 1e-3);
  EXPECT_NEAR(Level1MaxBytes(64 << 10), 10.0 * 1048576, 1e-3);
  EXPECT_NEAR(Level1MaxBytes(64 << 20), 160.0 * 1048576, 1e-3);

  // Versions take the target from the options' write buffer: 120 MiB in
  // level 1 is within a 64 MiB memtable's 160 MiB, 180 MiB is not.
  options_.write_buffer_size = 64 << 20;
  const uint64_t mib = 1 << 20;
  AddFiles(
      1, {MakeFile(10, "a", "b", 60 * mib), MakeFile(11, "c", "d", 60 * mib)});
  EXPECT_FALSE(vset_->NeedsCompaction());
  AddFiles(1, {MakeFile(12, "e", "f", 60 * mib)});
  EXPECT_TRUE(vset_->NeedsCompaction());
  std::unique_ptr<Compaction> c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level(), 1);
}

// A compaction of a level >= 1 takes the files after the round-robin point
// too, until the level is back at its target, stopping before a file that
// overlaps nothing below (it moves alone) and at 25 table sizes of input.
TEST_F(VersionSetTest, LevelCompactionTakesTheLevelsExcess) {
  const uint64_t eighth =
      static_cast<uint64_t>(vset_->current()->LevelTargetBytes(1) / 8);
  // 12 files of an eighth of the target: the excess is four of them.
  const char* const names[] = {"a", "b", "c", "d", "e", "f",
                               "g", "h", "i", "j", "k", "l"};
  std::vector<FileMetaData> level1;
  for (uint64_t i = 0; i < 12; ++i) {
    const std::string k = names[i];
    level1.push_back(MakeFile(10 + i, k + "0", k + "9", eighth));
  }
  AddFiles(1, level1);
  // Below every file but c's; f's file below is too big to join others.
  std::vector<FileMetaData> level2;
  for (uint64_t i = 0; i < 12; ++i) {
    if (i == 2) continue;
    const std::string k = names[i];
    level2.push_back(
        MakeFile(30 + i, k + "4", k + "5",
                 i == 5 ? 25 * options_.max_file_size : uint64_t{1000}));
  }
  AddFiles(2, level2);

  auto numbers = [](const Compaction& c, int which) {
    std::vector<uint64_t> r;
    for (int i = 0; i < c.num_input_files(which); ++i) {
      r.push_back(c.input(which, i)->number);
    }
    return r;
  };
  // a and b; c overlaps nothing below, so it is left to move alone.
  std::unique_ptr<Compaction> c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level(), 1);
  EXPECT_EQ(numbers(*c, 0), (std::vector<uint64_t>{10, 11}));
  EXPECT_EQ(numbers(*c, 1), (std::vector<uint64_t>{30, 31}));
  // c, by itself, without a rewrite.
  c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(numbers(*c, 0), (std::vector<uint64_t>{12}));
  EXPECT_TRUE(c->IsTrivialMove());
  // d and e: with f and its big file below the inputs would pass the limit.
  c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(numbers(*c, 0), (std::vector<uint64_t>{13, 14}));
  // f alone, then g to j: four eighths make up the excess, k stays.
  c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(numbers(*c, 0), (std::vector<uint64_t>{15}));
  EXPECT_EQ(numbers(*c, 1), (std::vector<uint64_t>{35}));
  c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(numbers(*c, 0), (std::vector<uint64_t>{16, 17, 18, 19}));
  EXPECT_EQ(numbers(*c, 1), (std::vector<uint64_t>{36, 37, 38, 39}));
  EXPECT_FALSE(c->IsTrivialMove());
  // After l, the last file, the round starts over at a.
  c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(numbers(*c, 0), (std::vector<uint64_t>{20, 21}));
  c = vset_->PickCompaction();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(numbers(*c, 0), (std::vector<uint64_t>{10, 11}));
}

TEST_F(VersionSetTest, TrivialMoveNeedsLimitedGrandparentOverlap) {
  const uint64_t limit = MaxGrandParentOverlapBytes(options_.max_file_size);
  FileMetaData moved = MakeFile(10, "a", "m");
  moved.filter_bytes = 1234;  // as the writer recorded it
  moved.filter_keys = 987;
  AddFiles(1, {moved});
  AddFiles(3, {MakeFile(11, "b", "c", limit / 2),
               MakeFile(12, "d", "e", limit / 2)});
  InternalKey begin("a", kMaxSequenceNumber, kValueTypeForSeek);
  InternalKey end("z", 0, kTypeDeletion);
  // Level 3 is the grandparent of a level-1 compaction: at the limit, fine.
  std::unique_ptr<Compaction> c = vset_->CompactRange(1, &begin, &end);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->IsTrivialMove());
  c->MakeTrivialMoveEdit();
  EXPECT_EQ(c->edit()->new_files().size(), 1u);
  EXPECT_EQ(c->edit()->new_files()[0].first, 2);
  ASSERT_TRUE(Apply(c->edit()).ok());
  EXPECT_EQ(vset_->NumLevelFiles(1), 0);
  EXPECT_EQ(vset_->NumLevelFiles(2), 1);
  // The moved table keeps its filter as built (the filter allocation's
  // budget correction counts it).
  EXPECT_EQ(vset_->current()->files(2)[0]->filter_bytes, 1234u);
  EXPECT_EQ(vset_->current()->files(2)[0]->filter_keys, 987u);

  // Past the limit the file must be rewritten (split up) instead.
  AddFiles(1, {MakeFile(14, "n", "o")});
  AddFiles(3, {MakeFile(15, "n", "o", limit + 1)});
  InternalKey n("n", kMaxSequenceNumber, kValueTypeForSeek);
  c = vset_->CompactRange(1, &n, nullptr);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->num_input_files(0), 1);
  EXPECT_EQ(c->input(0, 0)->number, 14u);
  EXPECT_EQ(c->num_input_files(1), 0);
  EXPECT_FALSE(c->IsTrivialMove());

  // Nothing in range: no compaction.
  InternalKey p("p", kMaxSequenceNumber, kValueTypeForSeek);
  EXPECT_EQ(vset_->CompactRange(1, &p, nullptr), nullptr);
}

TEST_F(VersionSetTest, ShouldStopBeforeCountsGrandparentBytes) {
  const uint64_t gp = MaxGrandParentOverlapBytes(options_.max_file_size) / 2;
  AddFiles(1, {MakeFile(10, "a", "z")});
  AddFiles(3, {MakeFile(20, "b", "c", gp), MakeFile(21, "d", "e", gp),
               MakeFile(22, "f", "g", gp), MakeFile(23, "h", "i", gp)});
  std::unique_ptr<Compaction> c = vset_->CompactRange(1, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  auto key = [](std::string_view k) {
    return std::string(InternalKey(k, 50, kTypeValue).Encode());
  };
  EXPECT_FALSE(c->ShouldStopBefore(key("a")));
  EXPECT_FALSE(c->ShouldStopBefore(key("c5")));  // passed 20: gp bytes
  EXPECT_FALSE(c->ShouldStopBefore(key("e5")));  // passed 21: 2 gp = limit
  EXPECT_TRUE(c->ShouldStopBefore(key("g5")));   // passed 22: over the limit
  EXPECT_FALSE(c->ShouldStopBefore(key("h")));   // counting restarted
}

TEST_F(VersionSetTest, IsBaseLevelForKey) {
  AddFiles(1, {MakeFile(10, "a", "z")});
  AddFiles(3, {MakeFile(20, "c", "d")});
  AddFiles(5, {MakeFile(21, "m", "n")});
  std::unique_ptr<Compaction> c = vset_->CompactRange(1, nullptr, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->IsBaseLevelForKey("a"));
  EXPECT_FALSE(c->IsBaseLevelForKey("c"));
  EXPECT_FALSE(c->IsBaseLevelForKey("c5"));
  EXPECT_TRUE(c->IsBaseLevelForKey("e"));
  EXPECT_FALSE(c->IsBaseLevelForKey("m"));
  EXPECT_FALSE(c->IsBaseLevelForKey("n"));
  EXPECT_TRUE(c->IsBaseLevelForKey("n1"));
  EXPECT_TRUE(c->IsBaseLevelForKey("z"));
}

}  // namespace
}  // namespace sift
