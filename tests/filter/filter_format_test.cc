// The serialized filter: exact bytes, round trips, and what damaged or
// unknown bytes turn into.

#include "filter/filter_format.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "filter/bloom_math.h"
#include "filter/filter.h"
#include "gtest/gtest.h"
#include "tests/filter/filter_keys.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/random.h"

namespace sift {
namespace {

using test::KeyFamily;
using test::KeySequence;

bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }

std::string Build(FilterKind kind, double bpk, uint64_t n,
                  uint64_t seed = kDefaultFilterSeed) {
  std::unique_ptr<FilterBuilder> builder = FilterBuilder::Make(kind, bpk, seed);
  KeySequence keys(KeyFamily::kPrefixed, 0);
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(keys.Next());
  return builder->Finish();
}

// Recomputes the trailing checksum after a deliberate header edit, so the
// edit reaches the field checks instead of stopping at the checksum.
void Reseal(std::string* s) {
  const size_t body = s->size() - kFilterTrailerLength;
  EncodeFixed32(s->data() + body,
                Checksum32(std::string_view(s->data(), body)));
}

TEST(FilterFormatTest, ExactBytes) {
  // Three keys, 100 bits/key: 300 bits, rounded up to 320 (five words).
  const std::string s = Build(FilterKind::kStandardBloom, 100, 3, 0xabcdef);
  ASSERT_EQ(s.size(), 32u + 40u + 4u);
  EXPECT_EQ(s[0], 1);   // kind: standard
  EXPECT_EQ(s[1], 1);   // version
  EXPECT_EQ(s[2], 30);  // k = round(100 ln 2) clamped to 30
  EXPECT_EQ(s.substr(3, 5), std::string(5, '\0'));     // reserved
  EXPECT_EQ(DecodeFixed64(s.data() + 8), 320u);        // bits
  EXPECT_EQ(DecodeFixed64(s.data() + 16), 3u);         // keys
  EXPECT_EQ(DecodeFixed64(s.data() + 24), 0xabcdefu);  // seed
  EXPECT_EQ(DecodeFixed32(s.data() + 72),
            Checksum32(std::string_view(s.data(), 72)));

  const std::string b = Build(FilterKind::kBlockedBloom, 10, 100);
  ASSERT_EQ(b.size(), 32u + 128u + 4u);  // 1000 bits -> two 512-bit lines
  EXPECT_EQ(b[0], 2);
  EXPECT_EQ(b[2], 6);
  EXPECT_EQ(DecodeFixed64(b.data() + 8), 1024u);
  EXPECT_EQ(DecodeFixed64(b.data() + 24), kDefaultFilterSeed);
}

TEST(FilterFormatTest, HeaderEncodeDecode) {
  FilterHeader h;
  h.kind = 2;
  h.num_probes = 7;
  h.num_bits = uint64_t{1} << 40;
  h.num_keys = 123456789012ull;
  h.seed = ~uint64_t{0};
  std::string out;
  h.EncodeTo(&out);
  ASSERT_EQ(out.size(), FilterHeader::kEncodedLength);
  FilterHeader d;
  ASSERT_TRUE(d.DecodeFrom(out).ok());
  EXPECT_EQ(d.kind, h.kind);
  EXPECT_EQ(d.version, kFilterFormatVersion);
  EXPECT_EQ(d.num_probes, h.num_probes);
  EXPECT_EQ(d.num_bits, h.num_bits);
  EXPECT_EQ(d.num_keys, h.num_keys);
  EXPECT_EQ(d.seed, h.seed);
  EXPECT_TRUE(absl::IsDataLoss(d.DecodeFrom(out.substr(0, 31))));
}

TEST(FilterFormatTest, RoundTripIsBitExact) {
  for (FilterKind kind :
       {FilterKind::kStandardBloom, FilterKind::kBlockedBloom}) {
    for (uint64_t n : {0ull, 1ull, 77ull, 5000ull}) {
      const std::string s = Build(kind, 9.5, n);
      absl::StatusOr<FilterContents> c = DecodeFilter(s);
      ASSERT_TRUE(c.ok()) << c.status();
      ASSERT_TRUE(c->info.known);
      FilterHeader h;
      h.kind = c->info.kind;
      h.version = c->info.version;
      h.num_probes = static_cast<uint8_t>(c->info.num_probes);
      h.num_bits = c->info.num_bits;
      h.num_keys = c->info.num_keys;
      h.seed = c->info.seed;
      EXPECT_EQ(EncodeFilter(h, c->bits), s);
      // Building again from the same keys gives the same bytes.
      EXPECT_EQ(Build(kind, 9.5, n), s);
      // And a reader's view of the header matches.
      absl::StatusOr<std::unique_ptr<FilterReader>> r = FilterReader::Parse(s);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ((*r)->info().num_bits, h.num_bits);
      EXPECT_EQ((*r)->info().num_keys, n);
    }
  }
}

TEST(FilterFormatTest, UnknownKindOrVersionAnswersMaybe) {
  const std::string good = Build(FilterKind::kBlockedBloom, 10, 100);
  struct Case {
    uint8_t kind, version;
  };
  for (Case c : {Case{4, 2}, Case{5, 1}, Case{0, 1}, Case{255, 1}, Case{1, 2},
                 Case{2, 0}, Case{2, 9}, Case{3, 0}, Case{3, 3}}) {
    std::string s = good;
    s[0] = static_cast<char>(c.kind);
    s[1] = static_cast<char>(c.version);
    absl::StatusOr<std::unique_ptr<FilterReader>> r = FilterReader::Parse(s);
    ASSERT_TRUE(r.ok()) << r.status();
    const FilterInfo info = (*r)->info();
    EXPECT_FALSE(info.known);
    EXPECT_EQ(info.kind, c.kind);
    EXPECT_EQ(info.version, c.version);
    EXPECT_EQ(info.num_bits, 0u);
    EXPECT_EQ((*r)->FillRatio(), 0.0);
    EXPECT_GT((*r)->MemoryUsage(), 0u);
    KeySequence keys(KeyFamily::kRandom, 1000);
    for (int i = 0; i < 100; ++i) EXPECT_TRUE((*r)->KeyMayMatch(keys.Next()));
  }
  // Two bytes are enough to say "not mine"; the rest of a future format is
  // not inspected.
  absl::StatusOr<std::unique_ptr<FilterReader>> tiny =
      FilterReader::Parse(std::string("\x07\x01", 2));
  ASSERT_TRUE(tiny.ok());
  EXPECT_FALSE((*tiny)->info().known);
}

TEST(FilterFormatTest, InconsistentHeadersAreDataLoss) {
  const std::string good = Build(FilterKind::kStandardBloom, 10, 640);
  ASSERT_TRUE(FilterReader::Parse(good).ok());
  auto expect_loss = [](std::string s, const char* what) {
    Reseal(&s);
    absl::StatusOr<std::unique_ptr<FilterReader>> r = FilterReader::Parse(s);
    EXPECT_TRUE(absl::IsDataLoss(r.status())) << what << ": " << r.status();
  };
  std::string s = good;
  s[2] = 0;
  expect_loss(s, "k = 0");
  s = good;
  s[2] = 31;
  expect_loss(s, "k = 31");
  for (int i = 3; i < 8; ++i) {
    s = good;
    s[i] = 1;
    expect_loss(s, "reserved byte");
  }
  s = good;
  EncodeFixed64(s.data() + 8, 6400 + 64);
  expect_loss(s, "bits longer than body");
  s = good;
  EncodeFixed64(s.data() + 8, 6400 - 64);
  expect_loss(s, "bits shorter than body");
  s = good;
  EncodeFixed64(s.data() + 8, 6400 + 8);
  expect_loss(s, "bits not whole words");
  s = good;
  EncodeFixed64(s.data() + 8, ~uint64_t{0} - 63);
  expect_loss(s, "huge bit count");
  s = good;
  EncodeFixed64(s.data() + 16, 0);
  expect_loss(s, "bits without keys");
  // Blocked filters come in whole lines: a standard filter's size relabelled
  // as blocked is rejected unless it happens to be a multiple of 512.
  s = good;
  s[0] = 2;
  expect_loss(s, "blocked, 6400 bits");
  // The empty filter with keys claimed.
  std::string empty = Build(FilterKind::kBlockedBloom, 10, 0);
  ASSERT_TRUE(FilterReader::Parse(empty).ok());
  EncodeFixed64(empty.data() + 16, 5);
  expect_loss(empty, "keys without bits");
}

TEST(FilterFormatTest, EveryTruncationIsRejected) {
  for (FilterKind kind :
       {FilterKind::kStandardBloom, FilterKind::kBlockedBloom}) {
    const std::string good = Build(kind, 10, 300);
    for (size_t len = 0; len < good.size(); ++len) {
      absl::StatusOr<std::unique_ptr<FilterReader>> r =
          FilterReader::Parse(good.substr(0, len));
      EXPECT_TRUE(absl::IsDataLoss(r.status())) << "length " << len;
      EXPECT_NE(r.status().message().find("filter block"), std::string::npos);
    }
    // Extra bytes are as wrong as missing ones.
    EXPECT_TRUE(absl::IsDataLoss(FilterReader::Parse(good + "x").status()));
  }
}

// Flips bytes of a serialized filter: each result must be rejected, or be a
// reader that still finds every key (an unknown layout says "maybe"). A
// corrupt filter must never hide a key that is in the table.
TEST(FilterFormatTest, CorruptionIsRejectedOrSafe) {
  const int n = 500;
  Random rnd(301);
  const int samples = Sanitized() ? 300 : 3000;
  for (FilterKind kind :
       {FilterKind::kStandardBloom, FilterKind::kBlockedBloom}) {
    const std::string good = Build(kind, 10, n);
    int rejected = 0, unknown = 0;
    for (int t = 0; t < samples; ++t) {
      std::string s = good;
      // Every header byte in turn, then random positions.
      const size_t pos =
          t < 36 ? static_cast<size_t>(t) % s.size() : rnd.Uniform(s.size());
      const uint8_t flip = static_cast<uint8_t>(1 + rnd.Uniform(255));
      s[pos] = static_cast<char>(s[pos] ^ flip);
      absl::StatusOr<std::unique_ptr<FilterReader>> r = FilterReader::Parse(s);
      if (!r.ok()) {
        EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
        ++rejected;
        continue;
      }
      EXPECT_FALSE((*r)->info().known) << "byte " << pos << " ^ " << +flip;
      ++unknown;
      KeySequence keys(KeyFamily::kPrefixed, 0);
      for (int i = 0; i < n; ++i) {
        ASSERT_TRUE((*r)->KeyMayMatch(keys.Next())) << "byte " << pos;
      }
    }
    // Only a change of kind or version can be accepted.
    EXPECT_GT(rejected, samples * 9 / 10);
    EXPECT_GE(unknown, 2);
  }
}

TEST(FilterFormatTest, AnyBytesParseSafely) {
  // Random blocks, some starting like a real header: never a crash.
  Random rnd(7);
  const int rounds = Sanitized() ? 2000 : 20000;
  for (int t = 0; t < rounds; ++t) {
    std::string s(rnd.Uniform(120), '\0');
    for (char& c : s) c = static_cast<char>(rnd.Next());
    if (s.size() >= 2 && rnd.OneIn(2)) {
      s[0] = static_cast<char>(1 + rnd.Uniform(2));
      s[1] = 1;
    }
    absl::StatusOr<std::unique_ptr<FilterReader>> r = FilterReader::Parse(s);
    if (r.ok()) {
      EXPECT_FALSE((*r)->info().known);
      EXPECT_TRUE((*r)->KeyMayMatch("k"));
    } else {
      EXPECT_TRUE(absl::IsDataLoss(r.status()));
    }
  }
}

}  // namespace
}  // namespace sift
