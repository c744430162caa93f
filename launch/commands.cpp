#include "launch/commands.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "framework/core/error.h"
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

void flush_stdout() {
  // std::cout writes through C stdio (synced), whose error flag remembers a failed write even when a later
  // flush had nothing left to write; errno is that of the last failed write(2) when nothing ran since.
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (failed) {
    const int err = errno;
    std::clearerr(stdout);
    std::cout.clear();
    LUONG_FAIL("cannot write to standard output: ", err ? std::strerror(err) : "write error");
  }
}

}  // namespace luong::cli
