// The DB iterator: hiding of older versions and deletions, snapshot
// sequence, both directions and switching between them.

#include "db/db_iter.h"

#include <memory>
#include <string>
#include <vector>

#include "db/dbformat.h"
#include "db/memtable.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "table/iterators.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"
#include "util/comparator.h"
#include "util/random.h"

namespace sift {
namespace {

class DBIterTest : public testing::Test {
 protected:
  DBIterTest()
      : icmp_(BytewiseComparator()), mem_(std::make_shared<MemTable>(icmp_)) {}

  void Put(SequenceNumber seq, std::string_view key, std::string_view value) {
    mem_->Add(seq, kTypeValue, key, value);
  }
  void Del(SequenceNumber seq, std::string_view key) {
    mem_->Add(seq, kTypeDeletion, key, "");
  }

  std::unique_ptr<Iterator> NewIter(SequenceNumber seq) {
    IteratorPins pins;
    pins.mem = mem_;
    return NewDBIterator(&icmp_, mem_->NewIterator(), seq, ReadOptions(),
                         std::move(pins));
  }

  static std::string Forward(Iterator* it) {
    std::string out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out += std::string(it->key()) + "=" + std::string(it->value()) + ";";
    }
    return out;
  }
  static std::string Backward(Iterator* it) {
    std::string out;
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      out += std::string(it->key()) + "=" + std::string(it->value()) + ";";
    }
    return out;
  }
  static std::string At(const Iterator* it) {
    if (!it->Valid()) return "END";
    return std::string(it->key()) + "=" + std::string(it->value());
  }

  InternalKeyComparator icmp_;
  std::shared_ptr<MemTable> mem_;
};

TEST_F(DBIterTest, Empty) {
  std::unique_ptr<Iterator> it = NewIter(100);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
}

TEST_F(DBIterTest, NewestVisibleVersionWins) {
  Put(1, "a", "a1");
  Put(2, "a", "a2");
  Put(3, "b", "b3");
  Put(5, "a", "a5");
  Put(6, "c", "c6");
  std::unique_ptr<Iterator> it = NewIter(4);
  EXPECT_EQ(Forward(it.get()), "a=a2;b=b3;");
  EXPECT_EQ(Backward(it.get()), "b=b3;a=a2;");
  it = NewIter(100);
  EXPECT_EQ(Forward(it.get()), "a=a5;b=b3;c=c6;");
  EXPECT_EQ(Backward(it.get()), "c=c6;b=b3;a=a5;");
  it = NewIter(0);
  EXPECT_EQ(Forward(it.get()), "");
  EXPECT_EQ(Backward(it.get()), "");
}

TEST_F(DBIterTest, DeletionsHideOlderValues) {
  Put(1, "a", "a1");
  Del(2, "a");
  Put(3, "b", "b3");
  Del(4, "b");
  Put(5, "b", "b5");
  Del(6, "c");
  Put(7, "d", "d7");
  Del(8, "e");
  Put(1, "e", "e1");
  std::unique_ptr<Iterator> it = NewIter(100);
  EXPECT_EQ(Forward(it.get()), "b=b5;d=d7;");
  EXPECT_EQ(Backward(it.get()), "d=d7;b=b5;");
  // Before the deletion of b and the re-put.
  it = NewIter(3);
  EXPECT_EQ(Forward(it.get()), "b=b3;e=e1;");
  EXPECT_EQ(Backward(it.get()), "e=e1;b=b3;");
  it = NewIter(1);
  EXPECT_EQ(Forward(it.get()), "a=a1;e=e1;");
}

TEST_F(DBIterTest, SeekLandsOnVisibleKeys) {
  Put(1, "b", "b1");
  Del(2, "c");
  Put(3, "d", "d3");
  Put(9, "e", "e9");  // invisible at 5
  Put(4, "f", "f4");
  std::unique_ptr<Iterator> it = NewIter(5);
  it->Seek("a");
  EXPECT_EQ(At(it.get()), "b=b1");
  it->Seek("b");
  EXPECT_EQ(At(it.get()), "b=b1");
  it->Seek("c");
  EXPECT_EQ(At(it.get()), "d=d3");
  it->Seek("e");
  EXPECT_EQ(At(it.get()), "f=f4");
  it->Seek("g");
  EXPECT_EQ(At(it.get()), "END");
}

// Seek to the iterator's own key(): going backward, key() is a view of the
// iterator's saved key, which the Seek clears before it builds its target.
// The target must be read before anything overwrites those bytes (keys
// longer and shorter than std::string's inline 15 bytes).
TEST_F(DBIterTest, SeekToItsOwnKeyAfterGoingBackward) {
  const std::string long_key(40, 'k');
  Put(1, "a", "va");
  Put(2, "b", "vb");
  Put(3, long_key, "vk");
  Put(4, "z", "vz");
  std::unique_ptr<Iterator> it = NewIter(100);
  it->SeekToLast();
  it->Prev();
  ASSERT_TRUE(it->Valid());
  ASSERT_EQ(it->key(), long_key);
  it->Seek(it->key());
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), long_key);
  EXPECT_EQ(it->value(), "vk");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  ASSERT_EQ(it->key(), "b");  // a short key: "\0" in its place lands on "a"
  it->Seek(it->key());
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "b");
  EXPECT_EQ(it->value(), "vb");
}

TEST_F(DBIterTest, DirectionSwitches) {
  Put(1, "a", "a1");
  Put(2, "b", "b2");
  Del(3, "b");
  Put(4, "c", "c4");
  Put(5, "c", "c5");
  Put(6, "d", "d6");
  Put(20, "d", "d20");  // invisible at 10
  Put(7, "e", "e7");
  std::unique_ptr<Iterator> it = NewIter(10);
  it->Seek("c");
  EXPECT_EQ(At(it.get()), "c=c5");
  it->Next();
  EXPECT_EQ(At(it.get()), "d=d6");
  it->Prev();
  EXPECT_EQ(At(it.get()), "c=c5");
  it->Prev();
  EXPECT_EQ(At(it.get()), "a=a1");
  it->Next();
  EXPECT_EQ(At(it.get()), "c=c5");
  it->Next();
  EXPECT_EQ(At(it.get()), "d=d6");
  it->Next();
  EXPECT_EQ(At(it.get()), "e=e7");
  it->Prev();
  EXPECT_EQ(At(it.get()), "d=d6");
  it->Next();
  EXPECT_EQ(At(it.get()), "e=e7");
  it->Next();
  EXPECT_EQ(At(it.get()), "END");

  it->SeekToLast();
  EXPECT_EQ(At(it.get()), "e=e7");
  it->Prev();
  it->Prev();
  EXPECT_EQ(At(it.get()), "c=c5");
  it->Next();
  EXPECT_EQ(At(it.get()), "d=d6");
  it->SeekToFirst();
  EXPECT_EQ(At(it.get()), "a=a1");
  it->Prev();
  EXPECT_EQ(At(it.get()), "END");
  it->SeekToFirst();
  it->Next();
  EXPECT_EQ(At(it.get()), "c=c5");
}

TEST_F(DBIterTest, InvisibleNewestEntryAtFront) {
  // The smallest key exists only after the iterator's sequence; the reverse
  // pass must not stop on it and Next from there must not skip "b".
  Put(10, "a", "a10");
  Put(2, "b", "b2");
  Put(3, "c", "c3");
  std::unique_ptr<Iterator> it = NewIter(5);
  it->SeekToLast();
  EXPECT_EQ(At(it.get()), "c=c3");
  it->Prev();
  EXPECT_EQ(At(it.get()), "b=b2");
  it->Next();
  EXPECT_EQ(At(it.get()), "c=c3");
  it->Prev();
  it->Prev();
  EXPECT_EQ(At(it.get()), "END");
}

TEST_F(DBIterTest, DamagedKeyStopsWithDataLoss) {
  // An iterator yielding one internal key whose type byte (the low byte of
  // the little-endian tag) is unknown.
  class OneKey final : public Iterator {
   public:
    bool Valid() const override { return valid_; }
    void SeekToFirst() override { valid_ = true; }
    void SeekToLast() override { valid_ = true; }
    void Seek(std::string_view) override { valid_ = true; }
    void Next() override { valid_ = false; }
    void Prev() override { valid_ = false; }
    std::string_view key() const override { return key_; }
    std::string_view value() const override { return "v"; }
    absl::Status status() const override { return absl::OkStatus(); }

   private:
    std::string key_ = std::string("z\x07") + std::string(7, '\0');
    bool valid_ = false;
  };
  std::unique_ptr<Iterator> it = NewDBIterator(
      &icmp_, std::make_unique<OneKey>(), 100, ReadOptions(), IteratorPins());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsDataLoss(it->status())) << it->status();
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsDataLoss(it->status())) << it->status();
}

// While a level reports a deferred position (db/level_iterator.h), the DB
// iterator reads the value of each entry it lands on, so a value that
// cannot be read ends the iteration with the error instead of showing up
// empty; with none deferred it leaves values to be read when asked for.
TEST_F(DBIterTest, DeferredValueThatFailsStopsTheIteration) {
  Put(1, "a", "va");
  Put(2, "b", "vb");
  Put(3, "c", "vc");
  // The memtable's iterator, whose value() of "b" fails as a deferred
  // table that cannot be opened does.
  class FailsAtB final : public Iterator {
   public:
    FailsAtB(std::unique_ptr<Iterator> base, DeferredPositions* deferred,
             int* values_read)
        : base_(std::move(base)),
          deferred_(deferred),
          values_read_(values_read) {}
    bool Valid() const override { return base_->Valid(); }
    void SeekToFirst() override { base_->SeekToFirst(); }
    void SeekToLast() override { base_->SeekToLast(); }
    void Seek(std::string_view t) override { base_->Seek(t); }
    void Next() override { base_->Next(); }
    void Prev() override { base_->Prev(); }
    std::string_view key() const override { return base_->key(); }
    std::string_view value() const override {
      ++*values_read_;
      if (ExtractUserKey(base_->key()) == "b") {
        deferred_->error = absl::DataLossError("table gone");
        return {};
      }
      return base_->value();
    }
    absl::Status status() const override { return base_->status(); }

   private:
    std::unique_ptr<Iterator> base_;
    DeferredPositions* deferred_;
    int* values_read_;
  };
  for (const int deferred_count : {0, 1}) {
    int values_read = 0;
    IteratorPins pins;
    pins.mem = mem_;
    DeferredPositions deferred_record;
    deferred_record.count = deferred_count;
    DeferredPositions* deferred = &deferred_record;
    pins.deferred = deferred;
    std::unique_ptr<Iterator> it = NewDBIterator(
        &icmp_,
        std::make_unique<FailsAtB>(mem_->NewIterator(), deferred, &values_read),
        10, ReadOptions(), std::move(pins));
    it->Seek("a");
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(values_read, deferred_count);
    it->Next();
    if (deferred_count == 0) {
      ASSERT_TRUE(it->Valid());  // "b", its value not read yet
      EXPECT_EQ(values_read, 0);
      EXPECT_TRUE(it->status().ok());
    } else {
      EXPECT_FALSE(it->Valid());
      EXPECT_TRUE(absl::IsDataLoss(it->status())) << it->status();
    }
  }
}

// Randomized: compare forward/backward walks against a map built from the
// same history, at several sequence numbers.
TEST_F(DBIterTest, RandomHistoryMatchesModel) {
  Random rnd(99);
  struct Op {
    SequenceNumber seq;
    std::string key;
    bool del;
    std::string value;
  };
  std::vector<Op> ops;
  for (SequenceNumber seq = 1; seq <= 3000; ++seq) {
    Op op{seq, "k" + test::NumberKey(rnd.Uniform(200), 4), rnd.OneIn(3),
          test::RandomString(&rnd, 8)};
    if (op.del) {
      Del(op.seq, op.key);
    } else {
      Put(op.seq, op.key, op.value);
    }
    ops.push_back(op);
  }
  for (SequenceNumber at :
       {SequenceNumber{0}, SequenceNumber{17}, SequenceNumber{500},
        SequenceNumber{2999}, SequenceNumber{5000}}) {
    std::map<std::string, std::string> model;
    for (const Op& op : ops) {
      if (op.seq > at) break;
      if (op.del) {
        model.erase(op.key);
      } else {
        model[op.key] = op.value;
      }
    }
    std::string expected_fwd, expected_bwd;
    for (const auto& [k, v] : model) expected_fwd += k + "=" + v + ";";
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
      expected_bwd += it->first + "=" + it->second + ";";
    }
    std::unique_ptr<Iterator> it = NewIter(at);
    EXPECT_EQ(Forward(it.get()), expected_fwd) << at;
    EXPECT_EQ(Backward(it.get()), expected_bwd) << at;

    // Random walk with direction changes.
    auto pos = model.begin();
    it->SeekToFirst();
    for (int step = 0; step < 2000 && pos != model.end(); ++step) {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), pos->first);
      ASSERT_EQ(it->value(), pos->second);
      if (rnd.OneIn(3) && pos != model.begin()) {
        it->Prev();
        --pos;
      } else {
        it->Next();
        ++pos;
      }
    }
  }
}

// Through the DB: an iterator keeps its view while flushes and compactions
// replace the memtable and tables underneath it.
TEST(DBIteratorLifetimeTest, IteratorOutlivesFlushAndCompaction) {
  std::unique_ptr<Env> env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/iterdb");
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), test::NumberKey(i), "old").ok());
  }
  ASSERT_TRUE((*db)->Flush().ok());
  for (int i = 0; i < 100; i += 2) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), test::NumberKey(i), "mem").ok());
  }
  std::unique_ptr<Iterator> it = (*db)->NewIterator(ReadOptions());
  // Everything changes underneath.
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE((*db)->Delete(WriteOptions(), test::NumberKey(i)).ok());
  }
  ASSERT_TRUE((*db)->Flush().ok());
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());

  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    EXPECT_EQ(it->key(), test::NumberKey(n));
    EXPECT_EQ(it->value(), n % 2 == 0 ? "mem" : "old");
  }
  EXPECT_EQ(n, 100);
  EXPECT_TRUE(it->status().ok()) << it->status();
  it.reset();
  std::unique_ptr<Iterator> fresh = (*db)->NewIterator(ReadOptions());
  fresh->SeekToFirst();
  EXPECT_FALSE(fresh->Valid());
}

}  // namespace
}  // namespace sift
