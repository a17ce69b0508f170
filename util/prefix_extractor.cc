#include "sift/prefix_extractor.h"

#include <cassert>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sift {
namespace {

class FixedPrefixExtractor final : public PrefixExtractor {
 public:
  explicit FixedPrefixExtractor(size_t length)
      : length_(length), name_(absl::StrCat("sift.fixed:", length)) {}

  std::string_view Name() const override { return name_; }
  bool InDomain(std::string_view key) const override {
    return key.size() >= length_;
  }
  std::string_view Transform(std::string_view key) const override {
    assert(InDomain(key));
    return key.substr(0, length_);
  }

 private:
  const size_t length_;
  const std::string name_;
};

class DelimitedPrefixExtractor final : public PrefixExtractor {
 public:
  explicit DelimitedPrefixExtractor(char delimiter)
      : delimiter_(delimiter),
        name_(absl::StrFormat("sift.delimited:%02x",
                              static_cast<unsigned char>(delimiter))) {}

  std::string_view Name() const override { return name_; }
  bool InDomain(std::string_view key) const override {
    return key.find(delimiter_) != std::string_view::npos;
  }
  std::string_view Transform(std::string_view key) const override {
    const size_t at = key.find(delimiter_);
    assert(at != std::string_view::npos);
    return key.substr(0, at + 1);
  }

 private:
  const char delimiter_;
  const std::string name_;
};

}  // namespace

std::shared_ptr<const PrefixExtractor> NewFixedPrefixExtractor(size_t length) {
  assert(length > 0);
  return std::make_shared<FixedPrefixExtractor>(length);
}

std::shared_ptr<const PrefixExtractor> NewDelimitedPrefixExtractor(
    char delimiter) {
  return std::make_shared<DelimitedPrefixExtractor>(delimiter);
}

}  // namespace sift
