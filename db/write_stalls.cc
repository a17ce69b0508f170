#include "db/write_stalls.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sift {

const char* WriteStalls::Name(Cause cause) {
  switch (cause) {
    case kLevel0Slowdown:
      return "level0-slowdown";
    case kMemTableFlush:
      return "memtable-flush";
    case kLevel0Stop:
      return "level0-stop";
    case kWalSwitch:
      return "wal-switch";
  }
  return "unknown";
}

void WriteStalls::Add(Cause cause, uint64_t micros) {
  Counts& c = causes_[cause];
  ++c.count;
  c.micros += micros;
  c.longest_micros = std::max(c.longest_micros, micros);
}

void WriteStalls::Add(const Waits& waits) {
  for (int i = 0; i < kNumCauses; ++i) {
    if (waits.waited_[i]) Add(static_cast<Cause>(i), waits.micros_[i]);
  }
}

std::string WriteStalls::ToString() const {
  std::string out;
  for (int i = 0; i < kNumCauses; ++i) {
    const Counts& c = causes_[i];
    absl::StrAppend(&out, Name(static_cast<Cause>(i)), ": ", c.count,
                    " stalls, ", c.micros, " us, longest ", c.longest_micros,
                    " us\n");
  }
  return out;
}

}  // namespace sift
