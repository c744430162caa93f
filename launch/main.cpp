// The `luong` command: one binary, one subcommand per job (train, eval, translate, list, ...).
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "framework/core/error.h"
#include "framework/dist/bootstrap.h"
#include "launch/commands.h"

int main(int argc, char** argv) {
  luong::cli::prepare_process(argc, argv);
  CLI::App app{"luong: stacked-LSTM neural machine translation with Luong attention"};
  app.set_version_flag("--version", std::string("luong ") + LUONG_VERSION);
  app.require_subcommand(1);
  luong::cli::register_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    // Under mpirun one failing rank must take the whole job down instead of leaving the others waiting
    // in a collective.
    if (luong::mpi_is_initialized()) luong::abort_job(e.what());
    std::cerr << "luong: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
