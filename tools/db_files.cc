#include "tools/db_files.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "tools/output.h"

namespace sift::tools {

absl::StatusOr<std::string> ReadCurrent(Env* env, const std::string& dbname) {
  const std::string current = CurrentFileName(dbname);
  if (!env->FileExists(dbname)) {
    return absl::NotFoundError(
        absl::StrCat(dbname, ": no such database directory"));
  }
  if (!env->FileExists(current)) {
    return absl::NotFoundError(
        absl::StrCat(current, ": missing (not a sift database?)"));
  }
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(current);
  if (!file.ok()) return file.status();
  // CURRENT is one short line; anything long is not ours.
  constexpr size_t kMaxCurrent = 4096;
  std::string contents;
  auto scratch = std::make_unique<char[]>(kMaxCurrent);
  while (contents.size() <= kMaxCurrent) {
    std::string_view got;
    absl::Status s = (*file)->Read(kMaxCurrent, &got, scratch.get());
    if (!s.ok()) return s;
    if (got.empty()) break;
    contents.append(got);
  }
  if (contents.empty() || contents.back() != '\n' ||
      contents.size() > kMaxCurrent) {
    return absl::DataLossError(absl::StrCat(
        current, ": malformed (expected one line naming a MANIFEST)"));
  }
  contents.pop_back();
  uint64_t number;
  FileType type;
  if (!ParseFileName(contents, &number, &type) ||
      type != FileType::kDescriptorFile) {
    return absl::DataLossError(absl::StrCat(current, ": names \"",
                                            Escape(contents),
                                            "\", which is not a MANIFEST"));
  }
  return contents;
}

uint64_t ManifestState::TotalFiles() const {
  uint64_t n = 0;
  for (const auto& level : levels) n += level.size();
  return n;
}

namespace {

// Apply one decoded edit to *state, recording contradictions.
void ApplyEdit(uint64_t offset, const VersionEdit& edit, ManifestState* state) {
  if (edit.comparator()) state->comparator = edit.comparator();
  if (edit.log_number()) state->log_number = edit.log_number();
  if (edit.next_file_number()) {
    state->next_file_number = edit.next_file_number();
  }
  if (edit.last_sequence()) state->last_sequence = edit.last_sequence();
  for (const auto& [level, number] : edit.deleted_files()) {
    if (state->levels[level].erase(number) == 0) {
      state->edit_problems.push_back(
          {offset,
           absl::StrFormat("edit removes table %06d from level %d, which "
                           "does not hold it",
                           number, level),
           false});
    }
  }
  for (const auto& [level, meta] : edit.new_files()) {
    for (int l = 0; l < config::kNumLevels; ++l) {
      if (state->levels[l].count(meta.number) > 0) {
        state->edit_problems.push_back(
            {offset,
             absl::StrFormat("edit adds table %06d to level %d, but level %d "
                             "already holds it",
                             meta.number, level, l),
             false});
      }
    }
    state->levels[level][meta.number] = meta;
  }
}

}  // namespace

absl::Status ReplayManifestFile(
    Env* env, const std::string& path, ManifestState* state,
    const std::function<void(uint64_t offset, const VersionEdit& edit)>&
        on_edit) {
  *state = ManifestState();
  if (!env->FileExists(path)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  return ScanLog(
      env, path,
      [&](uint64_t offset, std::string_view record) {
        VersionEdit edit;
        absl::Status s = edit.DecodeFrom(record);
        if (!s.ok()) {
          state->edit_problems.push_back(
              {offset, absl::StrCat("undecodable version edit: ", s.message()),
               false});
          return;
        }
        ++state->num_edits;
        ApplyEdit(offset, edit, state);
        if (on_edit) on_edit(offset, edit);
      },
      &state->scan);
}

absl::Status ReplayManifest(
    Env* env, const std::string& dbname, ManifestState* state,
    const std::function<void(uint64_t offset, const VersionEdit& edit)>&
        on_edit) {
  absl::StatusOr<std::string> name = ReadCurrent(env, dbname);
  if (!name.ok()) return name.status();
  const std::string path = absl::StrCat(dbname, "/", *name);
  if (!env->FileExists(path)) {
    return absl::NotFoundError(
        absl::StrCat(path, ": missing, but CURRENT names it"));
  }
  absl::Status s = ReplayManifestFile(env, path, state, on_edit);
  state->manifest_name = *name;
  FileType type;
  ParseFileName(*name, &state->manifest_number, &type);
  return s;
}

absl::StatusOr<DirListing> ListDatabase(Env* env, const std::string& dbname) {
  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(dbname);
  if (!children.ok()) return children.status();
  DirListing listing;
  for (const std::string& child : *children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(child, &number, &type)) continue;
    auto size = [&]() -> uint64_t {
      absl::StatusOr<uint64_t> s =
          env->GetFileSize(absl::StrCat(dbname, "/", child));
      return s.ok() ? *s : 0;
    };
    switch (type) {
      case FileType::kTableFile:
        listing.tables[number] = size();
        break;
      case FileType::kLogFile:
        listing.logs[number] = size();
        break;
      case FileType::kDescriptorFile:
        listing.manifests[number] = size();
        break;
      case FileType::kCurrentFile:
        listing.has_current = true;
        break;
      case FileType::kDBLockFile:
        listing.has_lock = true;
        break;
      default:
        break;
    }
  }
  return listing;
}

std::vector<uint64_t> LiveLogs(const ManifestState& state,
                               const DirListing& listing) {
  std::vector<uint64_t> live;
  const uint64_t min_log = state.log_number.value_or(0);
  for (const auto& [number, size] : listing.logs) {
    if (number >= min_log) live.push_back(number);
  }
  return live;
}

std::string ShowInternalKey(std::string_view internal_key, bool hex) {
  OutputOptions out;
  out.hex = hex;
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed)) {
    return absl::StrCat("(bad internal key) ", ShowBytes(internal_key, out));
  }
  // Index separators carry the largest sequence: say so instead of 2^56-1.
  const std::string seq = parsed.sequence == kMaxSequenceNumber
                              ? std::string("max")
                              : absl::StrCat(parsed.sequence);
  return absl::StrCat(ShowBytes(parsed.user_key, out), " @ ", seq, " : ",
                      parsed.type == kTypeValue ? "value" : "deletion");
}

}  // namespace sift::tools
