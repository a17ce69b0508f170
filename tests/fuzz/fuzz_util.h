#ifndef SIFT_TESTS_FUZZ_FUZZ_UTIL_H_
#define SIFT_TESTS_FUZZ_FUZZ_UTIL_H_

// Small pieces shared by the fuzz targets: files over a byte string, a
// check that aborts (so libFuzzer and the corpus replay both see a crash),
// and a reader of fuzz input bytes.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "sift/env.h"

// Fuzz targets check properties with this: a failure is a crash.
#define FUZZ_CHECK(cond)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                   \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

namespace sift::fuzz {

// A SequentialFile reading a string (not owned; must outlive the file).
class StringSequentialFile final : public SequentialFile {
 public:
  explicit StringSequentialFile(std::string_view data) : data_(data) {}
  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    n = std::min(n, data_.size() - pos_);
    std::memcpy(scratch, data_.data() + pos_, n);
    pos_ += n;
    *result = std::string_view(scratch, n);
    return absl::OkStatus();
  }
  absl::Status Skip(uint64_t n) override {
    pos_ += static_cast<size_t>(std::min<uint64_t>(n, data_.size() - pos_));
    return absl::OkStatus();
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// A RandomAccessFile over a string (not owned; must outlive the file).
class StringRandomAccessFile final : public RandomAccessFile {
 public:
  explicit StringRandomAccessFile(std::string_view data) : data_(data) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    if (offset > data_.size()) {
      *result = {};
      return absl::OkStatus();
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, data_.size() - offset));
    std::memcpy(scratch, data_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return absl::OkStatus();
  }

 private:
  std::string_view data_;
};

// Reads fuzz input front to back; past the end every read gives zeros.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size)
      : data_(reinterpret_cast<const char*>(data), size) {}
  bool empty() const { return data_.empty(); }
  uint8_t Byte() {
    if (data_.empty()) return 0;
    const auto b = static_cast<uint8_t>(data_[0]);
    data_.remove_prefix(1);
    return b;
  }
  // Up to `n` bytes.
  std::string_view Bytes(size_t n) {
    n = std::min(n, data_.size());
    std::string_view out = data_.substr(0, n);
    data_.remove_prefix(n);
    return out;
  }
  std::string_view Rest() { return Bytes(data_.size()); }

 private:
  std::string_view data_;
};

// Keep the compiler from dropping reads whose only purpose is to touch
// memory (so ASan sees them).
inline void Touch(std::string_view bytes) {
  volatile unsigned sum = 0;
  for (char c : bytes) sum = sum + static_cast<unsigned char>(c);
  (void)sum;
}

}  // namespace sift::fuzz

#endif  // SIFT_TESTS_FUZZ_FUZZ_UTIL_H_
