// DB::Open refuses every out-of-contract option with InvalidArgument naming
// the field and the allowed range, before touching the file system, and
// accepts the boundary values of each range. The ranges are the REQUIRES
// lines of include/sift/options.h.

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "sift/options.h"
#include "tests/testutil/test_env.h"

namespace sift {
namespace {

struct OptionCase {
  std::string name;  // the test's label
  std::function<void(Options*)> set;
  // Empty: the options are valid. Else the field the error must name.
  std::string bad_field;
  std::string allowed;  // text the error must contain, e.g. the range
};

void PrintTo(const OptionCase& c, std::ostream* os) { *os << c.name; }

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<OptionCase> Cases() {
  return {
      // Out of contract.
      {"bits_nan", [](Options* o) { o->filter_bits_per_key = kNaN; },
       "filter_bits_per_key", "[0, 100]"},
      {"bits_negative", [](Options* o) { o->filter_bits_per_key = -1; },
       "filter_bits_per_key", "[0, 100]"},
      {"bits_huge", [](Options* o) { o->filter_bits_per_key = 1e300; },
       "filter_bits_per_key", "[0, 100]"},
      {"bits_inf", [](Options* o) { o->filter_bits_per_key = kInf; },
       "filter_bits_per_key", "[0, 100]"},
      {"bits_over", [](Options* o) { o->filter_bits_per_key = 100.5; },
       "filter_bits_per_key", "[0, 100]"},
      {"filter_kind_0",
       [](Options* o) { o->filter_kind = static_cast<FilterKind>(0); },
       "filter_kind", "kBlockedBloom=2"},
      {"filter_kind_200",
       [](Options* o) { o->filter_kind = static_cast<FilterKind>(200); },
       "filter_kind", "kStandardBloom=1"},
      {"compression_7",
       [](Options* o) { o->compression = static_cast<Compression>(7); },
       "compression", "kSnappy=1"},
      {"compression_255",
       [](Options* o) { o->compression = static_cast<Compression>(255); },
       "compression", "kNone=0"},
      {"max_open_files_0", [](Options* o) { o->max_open_files = 0; },
       "max_open_files", "[20, 1000000]"},
      {"max_open_files_19", [](Options* o) { o->max_open_files = 19; },
       "max_open_files", "[20, 1000000]"},
      {"max_open_files_negative", [](Options* o) { o->max_open_files = -1; },
       "max_open_files", "[20, 1000000]"},
      {"max_open_files_huge", [](Options* o) { o->max_open_files = 1000001; },
       "max_open_files", "[20, 1000000]"},
      {"write_buffer_0", [](Options* o) { o->write_buffer_size = 0; },
       "write_buffer_size", "[16384, 1073741824]"},
      {"write_buffer_small",
       [](Options* o) { o->write_buffer_size = (16 << 10) - 1; },
       "write_buffer_size", "[16384, 1073741824]"},
      {"write_buffer_huge",
       [](Options* o) { o->write_buffer_size = (size_t{1} << 30) + 1; },
       "write_buffer_size", "[16384, 1073741824]"},
      {"max_file_size_0", [](Options* o) { o->max_file_size = 0; },
       "max_file_size", "[16384, 1073741824]"},
      {"max_file_size_huge", [](Options* o) { o->max_file_size = SIZE_MAX; },
       "max_file_size", "[16384, 1073741824]"},
      {"block_size_0", [](Options* o) { o->block_size = 0; }, "block_size",
       "[256, 4194304]"},
      {"block_size_255", [](Options* o) { o->block_size = 255; }, "block_size",
       "[256, 4194304]"},
      {"block_size_huge",
       [](Options* o) { o->block_size = (size_t{4} << 20) + 1; }, "block_size",
       "[256, 4194304]"},
      {"restart_interval_0", [](Options* o) { o->block_restart_interval = 0; },
       "block_restart_interval", "[1, "},
      {"restart_interval_negative",
       [](Options* o) { o->block_restart_interval = -5; },
       "block_restart_interval", "[1, "},

      // Boundaries of the ranges are accepted.
      {"defaults", [](Options*) {}, "", ""},
      {"bits_zero", [](Options* o) { o->filter_bits_per_key = 0; }, "", ""},
      {"bits_max", [](Options* o) { o->filter_bits_per_key = 100; }, "", ""},
      {"standard_bloom",
       [](Options* o) { o->filter_kind = FilterKind::kStandardBloom; }, "", ""},
      {"no_compression",
       [](Options* o) { o->compression = Compression::kNone; }, "", ""},
      {"max_open_files_min", [](Options* o) { o->max_open_files = 20; }, "",
       ""},
      {"max_open_files_max", [](Options* o) { o->max_open_files = 1000000; },
       "", ""},
      {"small_sizes",
       [](Options* o) {
         o->write_buffer_size = 16 << 10;
         o->max_file_size = 16 << 10;
         o->block_size = 256;
         o->block_restart_interval = 1;
       },
       "", ""},
      {"large_sizes",
       [](Options* o) {
         o->write_buffer_size = size_t{1} << 30;
         o->max_file_size = size_t{1} << 30;
         o->block_size = size_t{4} << 20;
         o->block_restart_interval = std::numeric_limits<int>::max();
       },
       "", ""},
  };
}

class OptionsCheckTest : public testing::TestWithParam<OptionCase> {};

TEST_P(OptionsCheckTest, OpenChecksTheField) {
  const OptionCase& c = GetParam();
  std::unique_ptr<Env> env = test::NewTestEnv();
  Options options;
  options.env = env.get();
  options.create_if_missing = true;
  c.set(&options);

  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, "/db");
  if (c.bad_field.empty()) {
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "v").ok());
    ASSERT_TRUE((*db)->Flush().ok());
    std::string value;
    ASSERT_TRUE((*db)->Get(ReadOptions(), "k", &value).ok());
    EXPECT_EQ(value, "v");
    return;
  }
  ASSERT_FALSE(db.ok());
  const absl::Status& s = db.status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("Options::" + c.bad_field), std::string::npos)
      << s;
  EXPECT_NE(s.message().find(c.allowed), std::string::npos) << s;
  // Refused before anything was created.
  EXPECT_FALSE(env->FileExists("/db/CURRENT"));
  EXPECT_FALSE(env->FileExists("/db/LOCK"));
}

INSTANTIATE_TEST_SUITE_P(AllOptions, OptionsCheckTest,
                         testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<OptionCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace sift
