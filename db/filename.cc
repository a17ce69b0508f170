#include "db/filename.h"

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"

namespace sift {
namespace {

constexpr char kManifestPrefix[] = "MANIFEST-";
constexpr size_t kManifestPrefixLen = sizeof(kManifestPrefix) - 1;

// `number` as at least six decimal digits.
std::string Digits(uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%06" PRIu64, number);
  return buf;
}

std::string Child(std::string_view dbname, std::string_view name) {
  return absl::StrCat(absl::string_view(dbname.data(), dbname.size()), "/",
                      absl::string_view(name.data(), name.size()));
}

// Parses a non-empty run of decimal digits that is all of `s`. False on
// anything else, including overflow of 64 bits.
bool ParseNumber(std::string_view s, uint64_t* value) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

}  // namespace

std::string LogFileName(std::string_view dbname, uint64_t number) {
  return Child(dbname, Digits(number) + ".log");
}

std::string DamagedLogFileName(std::string_view dbname, uint64_t number) {
  return Child(dbname, Digits(number) + ".log.damaged");
}

std::string TableFileName(std::string_view dbname, uint64_t number) {
  return Child(dbname, Digits(number) + ".sst");
}

std::string DescriptorFileName(std::string_view dbname, uint64_t number) {
  return Child(dbname, absl::StrCat(kManifestPrefix, Digits(number)));
}

std::string CurrentFileName(std::string_view dbname) {
  return Child(dbname, "CURRENT");
}

std::string LockFileName(std::string_view dbname) {
  return Child(dbname, "LOCK");
}

std::string TempFileName(std::string_view dbname, uint64_t number) {
  return Child(dbname, Digits(number) + ".dbtmp");
}

std::string InfoLogFileName(std::string_view dbname) {
  return Child(dbname, "LOG");
}

std::string OldInfoLogFileName(std::string_view dbname) {
  return Child(dbname, "LOG.old");
}

bool ParseFileName(std::string_view filename, uint64_t* number,
                   FileType* type) {
  if (filename == "CURRENT") {
    *number = 0;
    *type = FileType::kCurrentFile;
    return true;
  }
  if (filename == "LOCK") {
    *number = 0;
    *type = FileType::kDBLockFile;
    return true;
  }
  if (filename == "LOG" || filename == "LOG.old") {
    *number = 0;
    *type = FileType::kInfoLogFile;
    return true;
  }
  if (filename.starts_with(kManifestPrefix)) {
    uint64_t n = 0;
    if (!ParseNumber(filename.substr(kManifestPrefixLen), &n)) return false;
    *number = n;
    *type = FileType::kDescriptorFile;
    return true;
  }
  const size_t dot = filename.find('.');
  if (dot == std::string_view::npos) return false;
  uint64_t n = 0;
  if (!ParseNumber(filename.substr(0, dot), &n)) return false;
  const std::string_view suffix = filename.substr(dot);
  FileType t;
  if (suffix == ".log") {
    t = FileType::kLogFile;
  } else if (suffix == ".log.damaged") {
    t = FileType::kDamagedLogFile;
  } else if (suffix == ".sst") {
    t = FileType::kTableFile;
  } else if (suffix == ".dbtmp") {
    t = FileType::kTempFile;
  } else {
    return false;
  }
  *number = n;
  *type = t;
  return true;
}

absl::StatusOr<uint64_t> ReadCurrentFile(Env* env, std::string_view dbname) {
  const std::string fname = CurrentFileName(dbname);
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  std::string contents;
  auto scratch = std::make_unique<char[]>(kMaxCurrentFileSize + 1);
  while (contents.size() <= kMaxCurrentFileSize) {
    std::string_view got;
    if (absl::Status s =
            (*file)->Read(kMaxCurrentFileSize + 1, &got, scratch.get());
        !s.ok()) {
      return s;
    }
    if (got.empty()) break;
    contents.append(got.data(), got.size());
  }
  uint64_t number = 0;
  FileType type;
  if (contents.size() > kMaxCurrentFileSize || contents.empty() ||
      contents.back() != '\n' ||
      !ParseFileName(std::string_view(contents).substr(0, contents.size() - 1),
                     &number, &type) ||
      type != FileType::kDescriptorFile) {
    return absl::DataLossError(absl::StrCat(
        fname, ": damaged (expected one line naming a MANIFEST file)"));
  }
  return number;
}

absl::Status SetCurrentFile(Env* env, const std::string& dbname,
                            uint64_t descriptor_number) {
  // CURRENT holds the manifest's name relative to the database directory.
  const std::string contents =
      absl::StrCat(kManifestPrefix, Digits(descriptor_number), "\n");
  const std::string tmp = TempFileName(dbname, descriptor_number);

  absl::Status s;
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> file =
        env->NewWritableFile(tmp);
    if (!file.ok()) return file.status();
    s = (*file)->Append(contents);
    if (s.ok()) s = (*file)->Sync();
    // Close even after a failure so the handle is released; the first error
    // wins.
    absl::Status close = (*file)->Close();
    if (s.ok()) s = close;
  }
  // The rename is the commit point: before it CURRENT still names the old
  // manifest, after it the new one; the directory sync makes it durable.
  if (s.ok()) s = env->RenameFile(tmp, CurrentFileName(dbname));
  if (s.ok()) return env->SyncDir(dbname);
  env->RemoveFile(tmp).IgnoreError();  // best effort; `s` is what matters
  return s;
}

}  // namespace sift
