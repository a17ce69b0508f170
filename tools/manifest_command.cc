// kvtool manifest DB: the version edits of the live MANIFEST, decoded, and
// the state they add up to.

#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "db/version_edit.h"
#include "sift/env.h"
#include "tools/command.h"
#include "tools/db_files.h"
#include "tools/output.h"

namespace sift::tools {

namespace {

struct ManifestArgs {
  OutputOptions out;
  std::string db;
  std::string file;
  bool summary = false;
};

std::string ShowFile(const FileMetaData& f, bool hex) {
  return absl::StrFormat("%06d: %d bytes, %s .. %s", f.number, f.file_size,
                         ShowInternalKey(f.smallest.Encode(), hex),
                         ShowInternalKey(f.largest.Encode(), hex));
}

Json FileJson(int level, const FileMetaData& f, bool hex) {
  return Json{{"level", level},
              {"number", f.number},
              {"size", f.file_size},
              {"smallest", ShowInternalKey(f.smallest.Encode(), hex)},
              {"largest", ShowInternalKey(f.largest.Encode(), hex)}};
}

Json EditJson(uint64_t offset, const VersionEdit& e, bool hex) {
  Json j{{"offset", offset}};
  if (e.comparator()) j["comparator"] = Escape(*e.comparator());
  if (e.log_number()) j["log_number"] = *e.log_number();
  if (e.next_file_number()) j["next_file_number"] = *e.next_file_number();
  if (e.last_sequence()) j["last_sequence"] = *e.last_sequence();
  if (!e.compact_pointers().empty()) {
    Json cp = Json::array();
    for (const auto& [level, key] : e.compact_pointers()) {
      cp.push_back(
          Json{{"level", level}, {"key", ShowInternalKey(key.Encode(), hex)}});
    }
    j["compact_pointers"] = cp;
  }
  if (!e.deleted_files().empty()) {
    Json d = Json::array();
    for (const auto& [level, number] : e.deleted_files()) {
      d.push_back(Json{{"level", level}, {"number", number}});
    }
    j["removed_files"] = d;
  }
  if (!e.new_files().empty()) {
    Json a = Json::array();
    for (const auto& [level, f] : e.new_files()) {
      a.push_back(FileJson(level, f, hex));
    }
    j["added_files"] = a;
  }
  return j;
}

void PrintEdit(uint64_t offset, const VersionEdit& e, bool hex) {
  std::cout << "offset " << offset << ": edit\n";
  if (e.comparator()) {
    std::cout << "  comparator:      " << Escape(*e.comparator()) << "\n";
  }
  if (e.log_number()) {
    std::cout << "  log number:      " << *e.log_number() << "\n";
  }
  if (e.next_file_number()) {
    std::cout << "  next file:       " << *e.next_file_number() << "\n";
  }
  if (e.last_sequence()) {
    std::cout << "  last sequence:   " << *e.last_sequence() << "\n";
  }
  for (const auto& [level, key] : e.compact_pointers()) {
    std::cout << "  compact pointer: level " << level << " at "
              << ShowInternalKey(key.Encode(), hex) << "\n";
  }
  for (const auto& [level, number] : e.deleted_files()) {
    std::cout << absl::StrFormat("  remove table:    %06d from level %d\n",
                                 number, level);
  }
  for (const auto& [level, f] : e.new_files()) {
    std::cout << "  add table:       level " << level << ", "
              << ShowFile(f, hex) << "\n";
  }
}

int RunManifest(const ManifestArgs& args) {
  Env* env = Env::Default();
  const bool hex = args.out.hex;
  Json edits = Json::array();
  auto on_edit = [&](uint64_t offset, const VersionEdit& edit) {
    if (args.out.json) {
      if (!args.summary) edits.push_back(EditJson(offset, edit, hex));
    } else if (!args.summary) {
      PrintEdit(offset, edit, hex);
    }
  };
  ManifestState state;
  std::string path;
  absl::Status s;
  if (!args.file.empty()) {
    path = args.file;
    s = ReplayManifestFile(env, path, &state, on_edit);
  } else {
    s = ReplayManifest(env, args.db, &state, on_edit);
    path = args.db + "/" + state.manifest_name;
  }
  if (!s.ok()) return ReportError("manifest", s, args.out);

  std::vector<LogProblem> problems = state.scan.problems;
  problems.insert(problems.end(), state.edit_problems.begin(),
                  state.edit_problems.end());
  std::sort(problems.begin(), problems.end(),
            [](const LogProblem& a, const LogProblem& b) {
              return a.offset < b.offset;
            });

  if (args.out.json) {
    Json levels = Json::array();
    for (int level = 0; level < config::kNumLevels; ++level) {
      Json files = Json::array();
      for (const auto& [number, f] : state.levels[level]) {
        files.push_back(FileJson(level, f, hex));
      }
      levels.push_back(files);
    }
    Json p = ProblemsJson(problems);
    auto opt = [](const auto& v) { return v ? Json(*v) : Json(); };
    Json j{{"file", Escape(path)},
           {"file_size", state.scan.file_size},
           {"num_edits", state.num_edits}};
    if (!args.summary) j["edits"] = std::move(edits);
    j["final"] =
        Json{{"comparator",
              state.comparator ? Json(Escape(*state.comparator)) : Json()},
             {"log_number", opt(state.log_number)},
             {"next_file_number", opt(state.next_file_number)},
             {"last_sequence", opt(state.last_sequence)},
             {"levels", std::move(levels)}};
    j["problems"] = std::move(p);
    j["ok"] = !state.damaged();
    PrintJson(j);
  } else {
    for (const LogProblem& problem : problems) {
      std::cout << absl::StrFormat("%s at offset %d: %s\n",
                                   problem.torn_tail ? "torn tail" : "DAMAGE",
                                   problem.offset, problem.message);
    }
    std::cout << path << ": " << state.scan.file_size << " bytes, "
              << state.num_edits << " edits\n"
              << "final state: log number " << state.log_number.value_or(0)
              << ", next file " << state.next_file_number.value_or(0)
              << ", last sequence " << state.last_sequence.value_or(0) << ", "
              << state.TotalFiles() << " tables\n";
    for (int level = 0; level < config::kNumLevels; ++level) {
      for (const auto& [number, f] : state.levels[level]) {
        std::cout << "  level " << level << " " << ShowFile(f, hex) << "\n";
      }
    }
  }
  if (state.damaged()) {
    std::cerr << "kvtool manifest: " << path << ": damaged\n";
    return kExitDataError;
  }
  return kExitOk;
}

}  // namespace

void AddManifestCommand(CommandSet* commands) {
  auto args = std::make_shared<ManifestArgs>();
  CLI::App* sub = commands->Add(
      "manifest",
      "Decode the version edits of the MANIFEST that CURRENT names, and the "
      "state they add up to (exit 1 if damaged)",
      &args->out, [args] { return RunManifest(*args); });
  sub->add_option("db", args->db, "Database directory")->required();
  sub->add_option("--file", args->file,
                  "Read this MANIFEST file instead of the live one");
  sub->add_flag("--summary", args->summary,
                "Only the final state, not every edit");
}

}  // namespace sift::tools
