// The `luong` command: one binary, one subcommand per job (train, eval, translate, list, ...).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "framework/core/error.h"
#include "framework/core/heap_allocator.h"
#include "framework/dist/bootstrap.h"
#include "launch/commands.h"
#include "launch/usage_checks.h"

int main(int argc, char** argv) {
  luong::cli::prepare_process(argc, argv);
  CLI::App app{"luong: stacked-LSTM neural machine translation with Luong attention"};
  // The allocator too: a bug report's first line then says whether the build linked jemalloc.
  app.set_version_flag("--version",
                       std::string("luong ") + LUONG_VERSION + " (malloc: " + luong::heap_allocator_name() + ")");
  app.require_subcommand(1);
  luong::cli::register_commands(app);
  luong::cli::refuse_clamped_integers(app);
  luong::cli::format_usage_errors(app, argc, argv);
  for (const std::string& usage :
       {luong::cli::unknown_subcommand(app, argc, argv), luong::cli::unknown_option(app, argc, argv)})
    if (!usage.empty()) {
      std::cerr << "luong: error: " << usage << "\n";
      return 2;  // a usage error, like every other one
    }
  if (const std::string problem = luong::cli::launcher_problem(argc, argv); !problem.empty()) {
    std::cerr << "luong: error: " << problem << "\n";
    return 1;
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
