#include "tests/reliability/reliability_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "util/hash.h"

extern char** environ;

namespace sift::reliability {

bool Sanitized() { return std::getenv("SIFT_SANITIZED") != nullptr; }

bool LongMode() {
  const char* v = std::getenv("SIFT_LONG");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

int64_t IntFromEnv(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  int64_t n = 0;
  if (v == nullptr || !absl::SimpleAtoi(v, &n)) return fallback;
  return n;
}

absl::StatusOr<KvMap> ReadAll(DB* db, const ReadOptions& options) {
  KvMap out;
  std::unique_ptr<Iterator> it = db->NewIterator(options);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.emplace(std::string(it->key()), std::string(it->value()));
  }
  if (!it->status().ok()) return it->status();
  return out;
}

std::string DescribeDiff(const KvMap& expected, const KvMap& actual) {
  std::string out;
  int shown = 0;
  auto show = [&](const std::string& what) {
    if (++shown <= 8) absl::StrAppend(&out, "\n  ", what);
  };
  auto e = expected.begin();
  auto a = actual.begin();
  while (e != expected.end() || a != actual.end()) {
    if (a == actual.end() || (e != expected.end() && e->first < a->first)) {
      show(absl::StrCat("missing ", e->first, " (expected ",
                        e->second.substr(0, 24), ")"));
      ++e;
    } else if (e == expected.end() || a->first < e->first) {
      show(absl::StrCat("unexpected ", a->first, " = ",
                        a->second.substr(0, 24)));
      ++a;
    } else {
      if (e->second != a->second) {
        show(absl::StrCat("wrong value for ", e->first, ": ",
                          a->second.substr(0, 24), " (expected ",
                          e->second.substr(0, 24), ")"));
      }
      ++e;
      ++a;
    }
  }
  return absl::StrCat(shown, " difference(s) (expected ", expected.size(),
                      " keys, found ", actual.size(), "):", out);
}

uint64_t EntryHash(const std::string& key, const std::string& value) {
  return Hash64(value, Hash64(key, 0x5eed)) * 0x9e3779b97f4a7c15ULL + 1;
}

uint64_t Fingerprint(const KvMap& map) {
  uint64_t sum = 0;
  for (const auto& [k, v] : map) sum += EntryHash(k, v);
  return sum;
}

int RunProgram(const std::vector<std::string>& argv,
               const std::string& output_path) {
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

std::string ReadDiskFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

absl::StatusOr<std::string> ReadEnvFile(Env* env, const std::string& fname) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  std::string contents;
  std::string scratch(1 << 16, '\0');
  while (true) {
    std::string_view chunk;
    if (absl::Status s = (*file)->Read(scratch.size(), &chunk, scratch.data());
        !s.ok()) {
      return s;
    }
    if (chunk.empty()) break;
    contents.append(chunk);
  }
  return contents;
}

absl::Status WriteEnvFile(Env* env, const std::string& fname,
                          const std::string& contents) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env->NewWritableFile(fname);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Append(contents);
  if (s.ok()) s = (*file)->Sync();
  absl::Status closed = (*file)->Close();
  return s.ok() ? closed : s;
}

absl::StatusOr<std::map<std::string, std::string>> ReadEnvDir(
    Env* env, const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> children = env->GetChildren(dir);
  if (!children.ok()) return children.status();
  std::map<std::string, std::string> files;
  for (const std::string& name : *children) {
    if (name == "." || name == "..") continue;
    absl::StatusOr<std::string> contents =
        ReadEnvFile(env, absl::StrCat(dir, "/", name));
    if (!contents.ok()) return contents.status();
    files[name] = *std::move(contents);
  }
  return files;
}

absl::Status WriteEnvDir(Env* env, const std::string& dir,
                         const std::map<std::string, std::string>& files) {
  if (absl::Status s = env->CreateDir(dir); !s.ok()) return s;
  for (const auto& [name, contents] : files) {
    if (absl::Status s =
            WriteEnvFile(env, absl::StrCat(dir, "/", name), contents);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace sift::reliability
