// Binary fuse filters of format version 1 (3-wise), as tables written
// before version 2 hold them, must keep decoding and answering exactly as
// they did. The two fixtures below were written by the version-1 builder
// before the 4-wise layout existed (60 keys "fixture-key-<i>", the default
// seed, 8- and 11-bit fingerprints: a byte-aligned and a bit-packed width),
// together with that reader's answers for 20,000 absent keys
// "absent-key-<i>": the indexes it answered "maybe" for. Today's reader must
// find every key and give exactly those answers; the version-1 builder kept
// for tests must still write the same bytes.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "filter/bloom_math.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "filter/fuse_math.h"
#include "gtest/gtest.h"

namespace sift {
namespace {

struct Fixture {
  uint32_t fingerprint_bits;
  const char* hex;  // the serialized filter
  std::vector<int> absent_matches;
};

const Fixture& Fixture8() {
  static const Fixture* f = new Fixture{
      8,
      "030108050000000002000000000000003c000000000000006d6c622d74666973"
      "603300bf730000008018e90000cb5a00008e000d673100eee62700000000bf00"
      "23ae868f4acf4d4e294a3700c8acef0011210fe5000d3a00003236a1ade0d700"
      "e07b89ede500000e2600865f003c00cf00003367be1c001f0000000000000000"
      "0002000000000000000000000000000000000000000000000000000000000000"
      "0cd9af7b",
      {414,   416,   447,   1196,  1506,  1533,  2356,  2603,  2695,  2745,
       2866,  3357,  3534,  3624,  3947,  4061,  4241,  5049,  5324,  5395,
       6145,  6492,  6572,  6720,  7078,  7514,  7549,  7620,  8139,  8145,
       8279,  8400,  8512,  8657,  8909,  9352,  9597,  9636,  9901,  10498,
       10507, 10623, 10865, 11191, 11244, 11246, 11496, 11546, 12143, 12511,
       13102, 13450, 13474, 13839, 13961, 14039, 14300, 14406, 15019, 15050,
       15221, 15354, 15462, 16519, 16673, 16882, 17423, 17666, 17926, 18124,
       18385, 18658, 18731, 19176, 19471, 19570}};
  return *f;
}

const Fixture& Fixture11() {
  static const Fixture* f = new Fixture{
      11,
      "03010b050000000002000000000000003c000000000000006d6c622d74666973"
      "609921007e3b370000000080c1603a010080656a190000701c001a74861801c0"
      "5de638390000000000fc060023759d611ea5b46736c5692957da0d01803cd6be"
      "1b001109f983cb0b8086e908000090890d42db1af05d1300e0df5b62da572e00"
      "00c04126028061be00001e03e0390000c04ccfe64b8e01e04300000000000000"
      "0000000000101000000000000000000000000000000000000000000000000000"
      "00000000000000000000000000000000bf3cee73",
      {2356, 4241, 7514, 9636, 15019, 17926, 18124, 19176}};
  return *f;
}

constexpr int kKeys = 60;
constexpr int kAbsent = 20000;

std::string Key(int i) { return "fixture-key-" + std::to_string(i); }
std::string Absent(int i) { return "absent-key-" + std::to_string(i); }

std::string Bytes(const Fixture& f) { return absl::HexStringToBytes(f.hex); }

TEST(FuseV1CompatTest, FixturesDecodeAsVersion1) {
  for (const Fixture* f : {&Fixture8(), &Fixture11()}) {
    absl::StatusOr<FilterContents> c = DecodeFilter(Bytes(*f));
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE(c->info.known);
    EXPECT_EQ(c->info.version, kFuseFormatVersionV1);
    EXPECT_EQ(c->info.num_probes, 3u);
    EXPECT_EQ(c->fuse.arity, 3u);
    EXPECT_EQ(c->info.fingerprint_bits, f->fingerprint_bits);
    EXPECT_EQ(c->info.num_keys, static_cast<uint64_t>(kKeys));
    EXPECT_EQ(c->info.seed, kDefaultFilterSeed);
    EXPECT_EQ(c->fuse.num_slots(),
              FuseLayoutFor(kKeys, 1, kFuseArityV1).num_slots());
    EXPECT_DOUBLE_EQ(TheoreticalFpr(c->info), FuseFpr(f->fingerprint_bits));
  }
}

TEST(FuseV1CompatTest, AnswersAreThoseOfTheVersion1Reader) {
  for (const Fixture* f : {&Fixture8(), &Fixture11()}) {
    absl::StatusOr<std::unique_ptr<FilterReader>> r =
        FilterReader::Parse(Bytes(*f));
    ASSERT_TRUE(r.ok()) << r.status();
    for (int i = 0; i < kKeys; ++i) {
      EXPECT_TRUE((*r)->KeyMayMatch(Key(i))) << Key(i);
    }
    std::vector<int> matches;
    for (int i = 0; i < kAbsent; ++i) {
      if ((*r)->KeyMayMatch(Absent(i))) matches.push_back(i);
    }
    EXPECT_EQ(matches, f->absent_matches) << "w " << f->fingerprint_bits;
    // Prefetch reads nothing the query would not, and changes no answer.
    for (int i = 0; i < 100; ++i) (*r)->Prefetch(Absent(i));
  }
}

TEST(FuseV1CompatTest, Version1BuilderWritesTheSameBytes) {
  for (const Fixture* f : {&Fixture8(), &Fixture11()}) {
    std::unique_ptr<FilterBuilder> b = NewFuseFilterBuilder(
        f->fingerprint_bits, kDefaultFilterSeed, kFuseFormatVersionV1);
    for (int i = 0; i < kKeys; ++i) b->AddKey(Key(i));
    EXPECT_EQ(absl::BytesToHexString(b->Finish()), f->hex);
  }
}

// The same keys in a version-2 filter: another layout (four slots a key,
// fewer slots), the same keys found.
TEST(FuseV1CompatTest, Version2OfTheSameKeys) {
  std::unique_ptr<FilterBuilder> b =
      NewFuseFilterBuilder(8, kDefaultFilterSeed);
  for (int i = 0; i < kKeys; ++i) b->AddKey(Key(i));
  const std::string s = b->Finish();
  absl::StatusOr<FilterContents> c = DecodeFilter(s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->info.version, kFuseFormatVersion);
  EXPECT_EQ(c->info.num_probes, 4u);
  EXPECT_LT(c->fuse.num_slots(),
            FuseLayoutFor(kKeys, 1, kFuseArityV1).num_slots());
  absl::StatusOr<std::unique_ptr<FilterReader>> r = FilterReader::Parse(s);
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < kKeys; ++i) EXPECT_TRUE((*r)->KeyMayMatch(Key(i)));
}

}  // namespace
}  // namespace sift
