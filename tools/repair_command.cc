// kvtool repair: rebuild a database whose MANIFEST or CURRENT is lost or
// damaged (sift::RepairDB), and say what was set aside.

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sift/db.h"
#include "sift/env.h"
#include "sift/options.h"
#include "tools/command.h"
#include "tools/output.h"

namespace sift::tools {

namespace {

struct RepairArgs {
  OutputOptions out;
  std::string db;
};

// The files in DB/lost: what this repair and any earlier one set aside.
// Empty if there is no such directory.
std::vector<std::string> SetAside(const std::string& db) {
  absl::StatusOr<std::vector<std::string>> names =
      Env::Default()->GetChildren(db + "/lost");
  if (!names.ok()) return {};
  std::sort(names->begin(), names->end());
  return *names;
}

int RunRepair(const RepairArgs& args) {
  // Files already in lost/ are told apart from those this run adds.
  const std::vector<std::string> before = SetAside(args.db);
  absl::Status s = RepairDB(args.db, Options());
  if (!s.ok()) return ReportError("repair", s, args.out);
  std::vector<std::string> added;
  for (const std::string& name : SetAside(args.db)) {
    if (!std::binary_search(before.begin(), before.end(), name)) {
      added.push_back(name);
    }
  }
  const std::string lost_dir = args.db + "/lost";
  if (args.out.json) {
    PrintJson(Json{{"ok", true},
                   {"db", args.db},
                   {"lost_dir", lost_dir},
                   {"set_aside", added},
                   {"log", args.db + "/LOG"}});
    return kExitOk;
  }
  std::cout << "repaired " << args.db << "\n";
  if (added.empty()) {
    std::cout << "nothing set aside\n";
  } else {
    std::cout << "set aside in " << lost_dir << ":\n";
    for (const std::string& name : added) std::cout << "  " << name << "\n";
  }
  std::cout << "what was kept and dropped: " << args.db << "/LOG\n";
  return kExitOk;
}

}  // namespace

void AddRepairCommand(CommandSet* commands) {
  auto args = std::make_shared<RepairArgs>();
  CLI::App* sub = commands->Add(
      "repair",
      "Rebuild the MANIFEST of DB from its tables and WALs (the database must "
      "not be open); damaged files and old MANIFESTs go to DB/lost",
      &args->out, [args] { return RunRepair(*args); });
  sub->add_option("db", args->db, "Database directory")->required();
}

}  // namespace sift::tools
