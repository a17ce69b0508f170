#include "db/scan_prefix.h"

namespace sift {

std::optional<std::string> PrefixSuccessor(std::string_view prefix) {
  while (!prefix.empty() && static_cast<uint8_t>(prefix.back()) == 0xff) {
    prefix.remove_suffix(1);
  }
  if (prefix.empty()) return std::nullopt;
  std::string successor(prefix);
  successor.back() = static_cast<char>(static_cast<uint8_t>(prefix.back()) + 1);
  return successor;
}

std::optional<std::string_view> ScanPrefix(const ReadOptions& options,
                                           const PrefixExtractor* extractor) {
  if (extractor == nullptr || !options.iterate_lower_bound.has_value() ||
      !extractor->InDomain(*options.iterate_lower_bound)) {
    return std::nullopt;
  }
  const std::string_view prefix =
      extractor->Transform(*options.iterate_lower_bound);
  const std::optional<std::string> successor = PrefixSuccessor(prefix);
  if (successor.has_value() &&
      (!options.iterate_upper_bound.has_value() ||
       std::string_view(*successor) < *options.iterate_upper_bound)) {
    return std::nullopt;
  }
  return prefix;
}

}  // namespace sift
