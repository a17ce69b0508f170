#ifndef SIFT_TOOLS_DB_FILES_H_
#define SIFT_TOOLS_DB_FILES_H_

// Reading a database directory without opening the database: CURRENT, the
// MANIFEST replayed edit by edit, and the files present. Nothing here writes
// or takes the LOCK, so it works while another process has the database
// open. Unlike the engine's recovery, which refuses a damaged MANIFEST, the
// replay keeps going and records what is wrong, for info and verify to show.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/dbformat.h"
#include "db/version_edit.h"
#include "sift/env.h"
#include "tools/log_scan.h"

namespace sift::tools {

// The MANIFEST file name (no directory) that CURRENT names. A missing
// directory or CURRENT is NotFound, a malformed CURRENT DataLoss, both naming
// the file.
absl::StatusOr<std::string> ReadCurrent(Env* env, const std::string& dbname);

// The state the MANIFEST describes.
struct ManifestState {
  std::string manifest_name;  // file name, from CURRENT
  uint64_t manifest_number = 0;
  uint64_t num_edits = 0;  // edits decoded and applied

  std::optional<std::string> comparator;
  std::optional<uint64_t> log_number;
  std::optional<uint64_t> next_file_number;
  std::optional<SequenceNumber> last_sequence;
  // Live tables per level, by file number.
  std::array<std::map<uint64_t, FileMetaData>, config::kNumLevels> levels;

  // Framing problems (and a torn tail) from reading the MANIFEST.
  LogScanResult scan;
  // Records that are not valid edits, and edits that contradict the state
  // before them (a file added twice, a file removed that is not there).
  std::vector<LogProblem> edit_problems;

  bool damaged() const { return scan.damaged() || !edit_problems.empty(); }
  uint64_t TotalFiles() const;
};

// Read CURRENT and replay the MANIFEST it names into *state, calling
// `on_edit(offset, edit)` (if set) for each decoded edit in order. Returns an
// error only if CURRENT or the MANIFEST cannot be read at all; damage inside
// the MANIFEST goes to state->scan and state->edit_problems.
absl::Status ReplayManifest(
    Env* env, const std::string& dbname, ManifestState* state,
    const std::function<void(uint64_t offset, const VersionEdit& edit)>&
        on_edit = nullptr);

// Replay MANIFEST file `path` (any one, not necessarily the live one) the
// same way; state->manifest_name is left empty.
absl::Status ReplayManifestFile(
    Env* env, const std::string& path, ManifestState* state,
    const std::function<void(uint64_t offset, const VersionEdit& edit)>&
        on_edit = nullptr);

// The sift files of a database directory, by kind and number.
struct DirListing {
  std::map<uint64_t, uint64_t> tables;  // number -> size
  std::map<uint64_t, uint64_t> logs;    // number -> size
  std::map<uint64_t, uint64_t> manifests;
  bool has_current = false;
  bool has_lock = false;
};
absl::StatusOr<DirListing> ListDatabase(Env* env, const std::string& dbname);

// Logs the database still needs (number >= log_number), oldest first: those
// recovery replays.
std::vector<uint64_t> LiveLogs(const ManifestState& state,
                               const DirListing& listing);

// "user_key @ seq : value|deletion" ("@ max" for the largest sequence, which
// index separators carry) for an internal key (keys shown with ShowBytes
// per `hex`); the escaped bytes if it does not parse.
std::string ShowInternalKey(std::string_view internal_key, bool hex);

}  // namespace sift::tools

#endif  // SIFT_TOOLS_DB_FILES_H_
