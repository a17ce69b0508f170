#include "util/logging.h"

#include <sys/time.h>

#include <cstdio>
#include <ctime>
#include <limits>
#include <utility>

namespace sift {

Logger::Logger(std::unique_ptr<WritableFile> file) : file_(std::move(file)) {}

Logger::~Logger() {
  MutexLock lock(&mu_);
  // Nobody is left to tell about a failed close of an informational log.
  file_->Close().IgnoreError();
}

absl::StatusOr<std::unique_ptr<Logger>> Logger::Open(Env* env,
                                                     const std::string& fname) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(fname);
  if (!file.ok()) return file.status();
  return std::make_unique<Logger>(*std::move(file));
}

void Logger::Log(std::string_view message) {
  // libc's localtime_r rather than Abseil's time zones: Debian's Abseil is
  // not TSan-instrumented, and its lazy time-zone loading from several
  // threads shows up as a (false) race in the concurrency suites.
  struct timeval now;
  gettimeofday(&now, nullptr);
  struct tm t;
  localtime_r(&now.tv_sec, &t);
  char stamp[96];
  std::snprintf(stamp, sizeof(stamp), "%04d/%02d/%02d-%02d:%02d:%02d.%06ld ",
                t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min,
                t.tm_sec, static_cast<long>(now.tv_usec));
  std::string line = stamp;
  line.append(message.data(), message.size());
  if (line.back() != '\n') line.push_back('\n');

  MutexLock lock(&mu_);
  if (!status_.ok()) return;
  absl::Status s = file_->Append(line);
  if (s.ok()) s = file_->Flush();
  status_ = std::move(s);
}

absl::Status Logger::status() const {
  MutexLock lock(&mu_);
  return status_;
}

void AppendNumberTo(std::string* dst, uint64_t n) {
  char buf[20];
  char* p = buf + sizeof(buf);
  do {
    *--p = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  dst->append(p, buf + sizeof(buf) - p);
}

std::string NumberToString(uint64_t n) {
  std::string r;
  AppendNumberTo(&r, n);
  return r;
}

void AppendEscapedStringTo(std::string* dst, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      dst->append("\\\\");
    } else if (u >= ' ' && u <= '~') {
      dst->push_back(c);
    } else {
      dst->append("\\x");
      dst->push_back(kHex[u >> 4]);
      dst->push_back(kHex[u & 0xf]);
    }
  }
}

std::string EscapeString(std::string_view bytes) {
  std::string r;
  AppendEscapedStringTo(&r, bytes);
  return r;
}

bool ConsumeDecimalNumber(std::string_view* in, uint64_t* value) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  size_t digits = 0;
  while (digits < in->size() && (*in)[digits] >= '0' && (*in)[digits] <= '9') {
    const uint64_t d = static_cast<uint64_t>((*in)[digits] - '0');
    if (v > (kMax - d) / 10) return false;
    v = v * 10 + d;
    ++digits;
  }
  if (digits == 0) return false;
  in->remove_prefix(digits);
  *value = v;
  return true;
}

}  // namespace sift
