// `luong config`: prints the resolved config (every default filled in) or, with --doc, the key reference.
//   luong config --config configs/tiny.yaml --set model.layers=1
//   luong config --doc > configs/README.md
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "framework/core/error.h"
#include "launch/commands.h"
#include "launch/run_config.h"
#include "models/nmt/nmt_config.h"

namespace luong::cli {
namespace {

struct ConfigArgs {
  std::string file;
  std::vector<std::string> sets;
  bool doc = false;
};

void run(const ConfigArgs& a) {
  if (a.doc) {
    // The reference is the same whatever the config: quietly ignoring -c/--set would suggest it depends on them.
    if (!a.file.empty() || !a.sets.empty())
      LUONG_FAIL("config --doc prints the key reference and takes no config: drop ",
                 a.file.empty() ? "--set" : a.sets.empty() ? "--config" : "--config and --set",
                 ", or drop --doc to print the resolved config");
    std::cout << nmt::nmt_config_reference();
    return;
  }
  // The same loading path as train/eval: registered names validated, rules across keys checked.
  std::cout << load_run_config(a.file, a.sets).config.dump();
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<ConfigArgs>();
  auto* cmd = app.add_subcommand("config", "Print the resolved config (defaults filled in) or the key reference");
  cmd->add_option("--config,-c", args->file, "YAML config file (omit for the defaults)");
  cmd->add_option("--set", args->sets, "Override a key: --set section.key=value (repeatable)");
  cmd->add_flag("--doc", args->doc, "Print the reference of every key (Markdown; configs/README.md)");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
