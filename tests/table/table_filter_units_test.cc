// A table written in filter units (TableOptions::modular_filter; the filter
// memory limit of doc/filters.md): opened with some units resident, units
// read back from the file one at a time and dropped again, answers never
// wrong whatever is resident, and a unit damaged after open refused with
// DataLoss naming the file, leaving the table as it was.

#include <cstdint>
#include <memory>
#include <string>

#include "filter/modular_bloom.h"
#include "gtest/gtest.h"
#include "sift/read_stats.h"
#include "table/table.h"
#include "table/table_options.h"
#include "tests/table/table_test_util.h"
#include "tests/testutil/test_env.h"
#include "tests/testutil/testutil.h"

namespace sift {
namespace {

constexpr char kName[] = "/units.sst";
constexpr int kKeys = 20000;

// Present keys are even numbers, absent ones odd.
std::string Key(int n) { return "key" + test::NumberKey(n, 8); }

class TableFilterUnitsTest : public testing::Test {
 protected:
  TableFilterUnitsTest() : env_(test::NewTestEnv()) {
    options_.filter_kind = FilterKind::kBlockedBloom;
    options_.filter_bits_per_key = 10;
    options_.modular_filter = true;
    test::KVVector entries;
    for (int n = 0; n < 2 * kKeys; n += 2) entries.emplace_back(Key(n), "v");
    EXPECT_TRUE(test::WriteTable(env_.get(), kName, options_, entries).ok());
    auto size = env_->GetFileSize(kName);
    auto file = env_->NewRandomAccessFile(kName);
    EXPECT_TRUE(size.ok() && file.ok());
    image_.resize(*size);
    std::string_view got;
    EXPECT_TRUE((*file)->Read(0, *size, &got, image_.data()).ok());
    image_.assign(got);
  }

  // The table over image_, with at most `units` filter units at open.
  std::unique_ptr<Table> Open(uint32_t units) {
    auto table = Table::Open(
        options_, std::make_unique<test::ImageFile>(&image_), image_.size(),
        kName, [units](const ModularHeader&) { return units; });
    EXPECT_TRUE(table.ok()) << table.status();
    return table.ok() ? *std::move(table) : nullptr;
  }

  // Absent keys the filter lets through; checks no present key is refused.
  static int Maybes(const Table& table) {
    for (int n = 0; n < 2 * kKeys; n += 2) {
      if (!table.filter()->KeyMayMatch(Key(n))) {
        ADD_FAILURE() << "a false negative for " << Key(n);
        return -1;
      }
    }
    int maybes = 0;
    for (int n = 1; n < 2 * kKeys; n += 2) {
      maybes += table.filter()->KeyMayMatch(Key(n)) ? 1 : 0;
    }
    return maybes;
  }

  // Where unit u's bytes start in image_: the serialized filter begins with
  // its header, found by encoding the header the table read.
  size_t UnitOffset(const Table& table, uint32_t u) const {
    std::string header;
    table.modular_filter()->header().EncodeTo(&header);
    const size_t filter = image_.find(header);
    EXPECT_NE(filter, std::string::npos);
    EXPECT_EQ(image_.find(header, filter + 1), std::string::npos);
    return filter + table.modular_filter()->header().UnitOffset(u);
  }

  std::unique_ptr<Env> env_;
  TableOptions options_;
  std::string image_;
};

TEST_F(TableFilterUnitsTest, UnitsLoadAndDropOneAtATime) {
  std::unique_ptr<Table> table = Open(0);
  ASSERT_NE(table, nullptr);
  const ModularBloomReader* filter = table->modular_filter();
  ASSERT_NE(filter, nullptr);
  const uint32_t units = filter->num_units();
  ASSERT_EQ(units, FilterUnitsFor(10));
  EXPECT_EQ(filter->resident_units(), 0u);
  // No unit: every key is "maybe".
  EXPECT_EQ(Maybes(*table), kKeys);

  ReadStats stats;
  std::vector<int> maybes = {kKeys};
  for (uint32_t u = 0; u < units; ++u) {
    const size_t before = table->FilterMemoryUsage();
    ASSERT_TRUE(table->LoadFilterUnit(&stats).ok());
    EXPECT_EQ(filter->resident_units(), u + 1);
    EXPECT_EQ(stats.filter_unit_loads, u + 1);
    EXPECT_EQ(table->FilterMemoryUsage() - before, filter->UnitMemory(u));
    maybes.push_back(Maybes(*table));
    EXPECT_LT(maybes.back(), maybes[u]) << "unit " << u << " ruled out none";
  }
  // All units: about the rate of 10 bits/key (the units' product is about
  // 1%; generous, the filter tests check the rates themselves).
  EXPECT_LT(maybes.back(), kKeys / 40);

  // Dropping the last unit gives back its memory and its answers exactly.
  const size_t full = table->FilterMemoryUsage();
  std::unique_ptr<AlignedWords> dropped = table->DropFilterUnit();
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(filter->resident_units(), units - 1);
  EXPECT_EQ(full - table->FilterMemoryUsage(), filter->UnitMemory(units - 1));
  EXPECT_EQ(Maybes(*table), maybes[units - 1]);
  ASSERT_TRUE(table->LoadFilterUnit(&stats).ok());
  EXPECT_EQ(Maybes(*table), maybes[units]);

  // A table opened with some units resident answers as one that loaded
  // them: the open reads the same bytes.
  std::unique_ptr<Table> two = Open(2);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->modular_filter()->resident_units(), 2u);
  EXPECT_EQ(Maybes(*two), maybes[2]);
}

TEST_F(TableFilterUnitsTest, AUnitDamagedAfterOpenIsRefused) {
  std::unique_ptr<Table> table = Open(1);
  ASSERT_NE(table, nullptr);
  const ModularBloomReader* filter = table->modular_filter();
  ASSERT_GE(filter->num_units(), 3u);
  const int one_unit = Maybes(*table);
  // A byte in the middle of unit 1's bits, then its checksum.
  const ModularHeader& header = filter->header();
  const size_t bits = UnitOffset(*table, 1);
  const size_t length = ModularHeader::UnitLength(header.units[1]);
  for (const size_t at : {bits + length / 2, bits + length - 1}) {
    image_[at] ^= 0x10;
    ReadStats stats;
    const absl::Status s = table->LoadFilterUnit(&stats);
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(kName), std::string_view::npos) << s;
    // Nothing changed: still one unit, the same answers, nothing counted.
    EXPECT_EQ(filter->resident_units(), 1u);
    EXPECT_EQ(stats.filter_unit_loads, 0u);
    EXPECT_EQ(Maybes(*table), one_unit);
    image_[at] ^= 0x10;
  }
  // Repaired (the bytes read back right), the unit loads.
  ASSERT_TRUE(table->LoadFilterUnit(nullptr).ok());
  EXPECT_EQ(filter->resident_units(), 2u);

  // Damage present at open is the filter block's: the open reports it.
  image_[bits + length / 2] ^= 0x10;
  auto reopened = Table::Open(
      options_, std::make_unique<test::ImageFile>(&image_), image_.size(),
      kName, [](const ModularHeader&) { return uint32_t{0}; });
  EXPECT_TRUE(absl::IsDataLoss(reopened.status())) << reopened.status();
}

}  // namespace
}  // namespace sift
