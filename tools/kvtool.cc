// kvtool: look inside sift databases, tables, filters, logs and manifests
// (doc/kvtool.md).

#include <exception>
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "tools/command.h"
#include "tools/output.h"

namespace sift::tools {

CLI::App* CommandSet::Add(const std::string& name,
                          const std::string& description, OutputOptions* out,
                          std::function<int()> run) {
  CLI::App* sub = root_->add_subcommand(name, description);
  sub->add_flag("--json", out->json, "Print one JSON document instead of text");
  sub->add_flag("--hex", out->hex,
                "Keys and values as hex digits, on the command line and in "
                "the output");
  runners_[sub] = std::move(run);
  return sub;
}

int CommandSet::RunSelected() const {
  for (const CLI::App* sub : root_->get_subcommands()) {
    auto it = runners_.find(sub);
    if (it != runners_.end()) return it->second();
  }
  return kExitUsage;  // unreachable: the root requires a subcommand
}

namespace {

int PrintHelp(CLI::App& app, const std::string& topic) {
  if (topic.empty()) {
    // Not app.help(): it describes the selected subcommand, i.e. help itself.
    std::cout << app.get_formatter()->make_help(&app, app.get_name(),
                                                CLI::AppFormatMode::Normal);
    return kExitOk;
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == topic) {
      std::cout << sub->help();
      return kExitOk;
    }
  }
  std::cerr << "kvtool help: no command named \"" << topic
            << "\"; run kvtool help for the list\n";
  return kExitUsage;
}

int Main(int argc, char** argv) {
  CLI::App app(
      "Inspect and query sift databases and their files.\n"
      "Exit status: 0 fine, 1 corruption or other data errors, 2 usage "
      "errors.",
      "kvtool");
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string("kvtool (sift) ") + SIFT_VERSION_STRING);
  std::string help_topic;
  CLI::App* help =
      app.add_subcommand("help", "Print this help, or a command's, and exit");
  help->add_option("command", help_topic, "The command to describe");
  CommandSet commands(&app);
  AddDataCommands(&commands);
  AddInfoCommand(&commands);
  AddSstCommand(&commands);
  AddFilterCommand(&commands);
  AddWalCommand(&commands);
  AddManifestCommand(&commands);
  AddVerifyCommand(&commands);
  AddRepairCommand(&commands);
  AddScaleOutCommands(&commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Prints the help text (exit 0) or the parse error and a hint.
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (help->parsed()) return PrintHelp(app, help_topic);
  return commands.RunSelected();
}

}  // namespace
}  // namespace sift::tools

int main(int argc, char** argv) {
  try {
    return sift::tools::Main(argc, argv);
  } catch (const std::exception& e) {
    // Nothing in kvtool should throw past its command; if it does, say so on
    // one line instead of aborting.
    std::cerr << "kvtool: internal error: " << e.what() << "\n";
    return sift::tools::kExitDataError;
  }
}
