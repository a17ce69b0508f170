#include "db/db_state.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sift {
namespace {

// File descriptors kept for the WAL, MANIFEST, LOG and LOCK, outside the
// table cache's share of max_open_files.
constexpr int kNonTableFiles = 10;

}  // namespace

DBState::DBState(const Options& opts, std::string name)
    : dbname(std::move(name)),
      options(opts),
      env(opts.env),
      icmp(BytewiseComparator()),
      block_cache(opts.block_cache_capacity > 0
                      ? NewLRUCache(opts.block_cache_capacity)
                      : nullptr),
      table_cache(std::make_unique<TableCache>(
          dbname, options, &icmp, block_cache.get(),
          options.max_open_files - kNonTableFiles)),
      versions(std::make_unique<VersionSet>(dbname, &options, table_cache.get(),
                                            &icmp)) {}

DBState::~DBState() = default;

void DBState::RecordBackgroundError(const absl::Status& s) {
  if (s.ok() || !bg_error.ok()) return;
  bg_error = s;
  Log(absl::StrCat("background error; writes now fail: ", s.ToString()));
  bg_cv.SignalAll();
}

SequenceNumber DBState::SmallestSnapshot() const {
  return snapshots.empty() ? versions->LastSequence() : snapshots.oldest();
}

void DBState::Log(std::string_view message) const {
  if (info_log != nullptr) info_log->Log(message);
}

}  // namespace sift
