// The `luong` command: one binary, one subcommand per job (train, eval, translate, list, ...).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "framework/core/error.h"
#include "framework/core/heap_allocator.h"
#include "framework/dist/bootstrap.h"
#include "launch/commands.h"

namespace {

// CLI11 reports a mistyped subcommand ("luong trian") as "A subcommand is required", which hides the typo.
// Returns the message for an unknown first word, or "" when argv[1] is an option or a known subcommand.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(word)) return "";
    names.push_back(sub->get_name());
  }
  std::sort(names.begin(), names.end());
  return luong::str("unknown subcommand '", word, "' (valid subcommands: ", CLI::detail::join(names, ", "),
                    "; see luong --help)");
}

}  // namespace

int main(int argc, char** argv) {
  luong::cli::prepare_process(argc, argv);
  CLI::App app{"luong: stacked-LSTM neural machine translation with Luong attention"};
  // The allocator too: a bug report's first line then says whether the build linked jemalloc.
  app.set_version_flag("--version",
                       std::string("luong ") + LUONG_VERSION + " (malloc: " + luong::heap_allocator_name() + ")");
  app.require_subcommand(1);
  luong::cli::register_commands(app);
  if (const std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty()) {
    std::cerr << "luong: error: " << unknown << "\n";
    return 2;  // a usage error, like every other one
  }
  try {
    app.parse(argc, argv);
    luong::cli::flush_stdout();
  } catch (const CLI::ParseError& e) {
    // CLI11 gives every kind of usage error its own status (105, 106, 109, ...); scripts get one: 2, the
    // usual status of a command-line usage error. --help and --version stay 0, and a run stopped by a
    // signal keeps its 128 + signal (thrown as CLI::RuntimeError by the subcommand).
    const int status = app.exit(e);
    return status == 0 || dynamic_cast<const CLI::RuntimeError*>(&e) != nullptr ? status : 2;
  } catch (const std::exception& e) {
    // Under mpirun one failing rank must take the whole job down instead of leaving the others waiting
    // in a collective.
    if (luong::mpi_is_initialized()) luong::abort_job(e.what());
    std::cerr << "luong: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
