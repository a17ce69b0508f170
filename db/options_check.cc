#include "db/options_check.h"

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "sift/env.h"

namespace sift {
namespace {

// "name=value, ..." for every value of Enum's underlying type that `name_of`
// names: the allowed values come from the same switch that names them.
template <typename Enum>
std::string AllowedValues(const char* (*name_of)(Enum)) {
  using Underlying = std::underlying_type_t<Enum>;
  static_assert(sizeof(Underlying) == 1, "enumerate a one-byte enum only");
  std::string out;
  for (int v = 0; v <= 255; ++v) {
    const char* name = name_of(static_cast<Enum>(v));
    if (name == nullptr) continue;
    if (!out.empty()) out += ", ";
    absl::StrAppend(&out, name, "=", v);
  }
  return out;
}

template <typename Enum>
absl::Status CheckEnum(absl::string_view field, Enum value,
                       const char* (*name_of)(Enum)) {
  if (name_of(value) != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Options::", field, " is ", static_cast<int>(value),
      ", which is not a value of the enum; allowed: ", AllowedValues(name_of)));
}

template <typename T>
absl::Status CheckRange(absl::string_view field, T value, T lo, T hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Options::", field, " is ",
                                                 value, "; allowed range: [",
                                                 lo, ", ", hi, "]"));
}

}  // namespace

const char* FilterKindName(FilterKind kind) {
  // No default: -Wswitch flags an enumerator missing here, so every kind
  // the enum declares is accepted by CheckOptions.
  switch (kind) {
    case FilterKind::kStandardBloom:
      return "kStandardBloom";
    case FilterKind::kBlockedBloom:
      return "kBlockedBloom";
    case FilterKind::kBinaryFuse:
      return "kBinaryFuse";
  }
  return nullptr;
}

const char* CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kNone:
      return "kNone";
    case Compression::kSnappy:
      return "kSnappy";
  }
  return nullptr;
}

absl::Status CheckOptions(const Options& o) {
  // The ranges below are the REQUIRES lines of include/sift/options.h.
  const absl::Status checks[] = {
      CheckRange<size_t>("write_buffer_size", o.write_buffer_size,
                         size_t{16} << 10, size_t{1} << 30),
      CheckRange<size_t>("max_file_size", o.max_file_size, size_t{16} << 10,
                         size_t{1} << 30),
      CheckRange<size_t>("block_size", o.block_size, 256, size_t{4} << 20),
      CheckRange("block_restart_interval", o.block_restart_interval, 1,
                 std::numeric_limits<int>::max()),
      CheckEnum("compression", o.compression, &CompressionName),
      CheckRange("max_open_files", o.max_open_files, 20, 1000000),
      // NaN fails both comparisons and is reported like any other value.
      CheckRange("filter_bits_per_key", o.filter_bits_per_key, 0.0, 100.0),
      CheckEnum("filter_kind", o.filter_kind, &FilterKindName),
  };
  for (const absl::Status& s : checks) {
    if (!s.ok()) return s;
  }
  if (o.prefix_extractor != nullptr) {
    // Stored in every table's properties; one length byte's worth keeps
    // kvtool's listings readable.
    const std::string_view name = o.prefix_extractor->Name();
    if (name.empty() || name.size() > 255) {
      return absl::InvalidArgumentError(absl::StrCat(
          "prefix_extractor: Name() must be 1 to 255 bytes long, not ",
          name.size()));
    }
  }
  if (!(o.range_filter_bits_per_key == 0.0 ||
        (o.range_filter_bits_per_key >= 2.0 &&
         o.range_filter_bits_per_key <= 64.0))) {
    return absl::InvalidArgumentError(
        absl::StrCat("range_filter_bits_per_key must be 0 or in [2, 64], not ",
                     o.range_filter_bits_per_key));
  }
  if (!o.whole_key_filtering && o.prefix_extractor == nullptr) {
    return absl::InvalidArgumentError(
        "whole_key_filtering = false needs a prefix_extractor (the filters "
        "would hold nothing)");
  }
  return absl::OkStatus();
}

Options SanitizeOptions(const Options& options) {
  Options result = options;
  if (result.env == nullptr) result.env = Env::Default();
  return result;
}

}  // namespace sift
