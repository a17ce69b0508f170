#ifndef SIFT_TOOLS_COMMAND_H_
#define SIFT_TOOLS_COMMAND_H_

// How kvtool's subcommands plug into the command line: each command file
// registers its subcommands on a CommandSet, binding its flags to an options
// struct it owns, and hands over the function that runs it.

#include <functional>
#include <map>
#include <string>

#include "CLI/CLI.hpp"
#include "tools/output.h"

namespace sift::tools {

class CommandSet {
 public:
  // `root` is not owned and must outlive this object.
  explicit CommandSet(CLI::App* root) : root_(root) {}
  CommandSet(const CommandSet&) = delete;
  CommandSet& operator=(const CommandSet&) = delete;

  // Add subcommand `name` with --json and --hex bound to *out (which must
  // outlive parsing and `run`). `run` is called by RunSelected if this is the
  // subcommand on the command line, after the whole line parsed; it returns
  // the exit code. Returns the subcommand for adding its own options.
  CLI::App* Add(const std::string& name, const std::string& description,
                OutputOptions* out, std::function<int()> run);

  // Run the subcommand chosen on the command line. REQUIRES: the root parsed
  // successfully.
  int RunSelected() const;

 private:
  CLI::App* root_;
  std::map<const CLI::App*, std::function<int()>> runners_;
};

// The subcommands, one registration function per file.
void AddDataCommands(CommandSet* commands);  // get put delete scan compact
void AddInfoCommand(CommandSet* commands);
void AddSstCommand(CommandSet* commands);
void AddFilterCommand(CommandSet* commands);
void AddWalCommand(CommandSet* commands);
void AddManifestCommand(CommandSet* commands);
void AddVerifyCommand(CommandSet* commands);
void AddRepairCommand(CommandSet* commands);
// checkpoint ingest dump load
void AddScaleOutCommands(CommandSet* commands);

}  // namespace sift::tools

#endif  // SIFT_TOOLS_COMMAND_H_
