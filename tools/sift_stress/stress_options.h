#ifndef SIFT_TOOLS_SIFT_STRESS_STRESS_OPTIONS_H_
#define SIFT_TOOLS_SIFT_STRESS_STRESS_OPTIONS_H_

// Random option sets: every value the engine supports today, drawn from a
// seed so that a round can be replayed from its seed alone.

#include <cstdint>
#include <string>

#include "sift/options.h"
#include "sift/prefix_extractor.h"
#include "tools/sift_stress/random.h"

namespace sift::stress {

// What the machine and file system allow.
struct Capabilities {
  bool direct_reads = false;  // O_DIRECT works in the database directory
};

// One drawn configuration: database options plus how the soak writes.
struct DrawnOptions {
  Options options;       // env and create_if_missing left to the caller
  int sync_percent = 0;  // share of writes made with WriteOptions::sync
  std::string text;      // one line, every drawn value
};

DrawnOptions DrawOptions(Rng* rng, const Capabilities& caps);

}  // namespace sift::stress

#endif  // SIFT_TOOLS_SIFT_STRESS_STRESS_OPTIONS_H_
