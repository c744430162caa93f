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
// Flushes std::cout and throws "cannot write to standard output: <reason>" when any write failed (a full
// disk, /dev/full): output that was lost must not end in exit status 0.
void flush_stdout();

}  // namespace luong::cli
