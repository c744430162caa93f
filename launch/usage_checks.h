// Checks of the command line made before CLI11 parses it, and the form of CLI11's own usage errors. CLI11
// reports the first problem in its own order: a mistyped option (`--chekpoint`) came out as "--config is
// required" or "--run-dir is required", hiding the typo; these checks name the typo first, with the closest
// valid name.
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace luong::cli {

// "unknown subcommand 'trian'; did you mean 'train'? (...)" for an unknown first word, or "" when argv[1] is
// an option or a known subcommand.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv);

// "unknown option '--chekpoint' for luong train; did you mean '--checkpoint'? (...)" for the first `--name`
// (or `--name=value`) that the chosen subcommand does not have (`luong`'s own options before one), or "".
// Words after `--` are arguments.
std::string unknown_option(const CLI::App& app, int argc, char** argv);

// Why this command may not run under the launcher that started it (mpirun -np N for a one-process command,
// any launcher for a sweep, srun tasks without MPI process management), or "" when it may.
std::string launcher_problem(int argc, char** argv);

// Makes every integer option refuse text beyond 64 bits and read a leading 0 as decimal (see the .cpp).
void refuse_clamped_integers(CLI::App& app);

// CLI11's usage errors in luong's form: "luong: error: <what>" and where the options are listed.
void format_usage_errors(CLI::App& app, int argc, char** argv);

}  // namespace luong::cli
