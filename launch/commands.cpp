#include "launch/commands.h"

#include <CLI/CLI.hpp>

#include "framework/core/process_setup.h"

namespace luong::cli {
namespace {
std::vector<CommandSetup>& setups() {
  static std::vector<CommandSetup> s;
  return s;
}
}  // namespace

bool add_command(CommandSetup setup) {
  setups().push_back(std::move(setup));
  return true;
}

void register_commands(CLI::App& app) {
  for (auto& s : setups()) s(app);
}

void prepare_process(int argc, char** argv) { configure_process(argc, argv); }

}  // namespace luong::cli
