// Subcommands register themselves on the CLI11 app; each lives in its own launch/cmd_*.cpp file.
#pragma once
#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace luong::cli {

using CommandSetup = std::function<void(CLI::App&)>;
// Called from each cmd_*.cpp at static-initialisation time.
bool add_command(CommandSetup setup);
void register_commands(CLI::App& app);
// Process-level set-up before anything else runs (BLAS core type, thread counts).
void prepare_process(int argc, char** argv);

}  // namespace luong::cli
