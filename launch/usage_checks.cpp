#include "launch/usage_checks.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/core/suggest.h"
#include "framework/dist/bootstrap.h"

namespace luong::cli {
namespace {

// The subcommand argv[1] names, or nullptr (an option, nothing, or an unknown word).
const CLI::App* chosen_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return nullptr;
  for (const CLI::App* s : app.get_subcommands({}))
    if (s->check_name(argv[1])) return s;
  return nullptr;
}

}  // namespace

std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  // CLI11 reports a mistyped subcommand ("luong trian") as "A subcommand is required", which hides the typo.
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(word)) return "";
    names.push_back(sub->get_name());
  }
  std::sort(names.begin(), names.end());
  return str("unknown subcommand '", word, "'", did_you_mean(word, names),
             " (valid subcommands: ", CLI::detail::join(names, ", "), "; see luong --help)");
}

std::string unknown_option(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return "";
  // The options of `luong` itself (--help, --version) before a subcommand, else those of the subcommand.
  const CLI::App* sub = &app;
  int first = 1;
  if (argv[1][0] != '-') {
    sub = chosen_subcommand(app, argc, argv);
    if (!sub) return "";  // unknown_subcommand's case
    first = 2;
  }
  const std::string command = sub == &app ? "luong" : "luong " + sub->get_name();
  for (int i = first; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // the rest are arguments, whatever they look like
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const size_t equals = word.find('=');
    const std::string name = equals > 2 ? word.substr(0, equals) : word;  // `--=x` is named whole
    if (sub->get_option_no_throw(name) || app.get_option_no_throw(name)) continue;
    std::vector<std::string> names;
    for (const CLI::Option* o : sub->get_options())
      for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    // An option of other subcommands (`eval --n-best`) is worth naming as such: the user has the right word.
    std::string elsewhere;
    if (const std::string near = closest_name(name, names); near.empty())
      for (const CLI::App* s : app.get_subcommands({}))
        if (s != sub && s->get_option_no_throw(name))
          elsewhere += (elsewhere.empty() ? "" : ", ") + ("luong " + s->get_name());
    return str("unknown option '", name, "' for ", command, did_you_mean(name, names),
               elsewhere.empty() ? "" : " (an option of " + elsewhere + ")", " (see ", command, " --help)");
  }
  return "";
}

// Only `luong train` is data-parallel; any other command started by mpirun -np N would run whole in every rank: `eval`
// printing N results, `average` and `gen-data` writing the same files at once. A sweep is a driver that starts its own
// trials (the spec's `launch:` runs them under mpirun); under a launcher even as one process its trials would inherit
// the launcher's environment and initialise MPI as part of the sweep's job. Returns the message, or "" when the command
// may run here.
std::string launcher_problem(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  // `srun -n 2 luong train` on a cluster without Slurm's MPI plugin: no rank knows of the other, so each
  // would run the whole job alone, all writing the same run directory. Every command is refused (--help too:
  // the check runs before parsing), since none of them should run N times over.
  if (const int tasks = srun_tasks_without_mpi(); tasks > 0)
    return str("srun started ", tasks, " tasks without MPI process management (SLURM_STEP_NUM_TASKS=", tasks,
               " but none of OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK is set), so each would run the whole ",
               word == "train" ? "training alone, all writing the same checkpoints" : "job alone",
               "; for train start it with srun --mpi=pmix (or --mpi=pmi2, whichever `srun --mpi=list` "
               "offers) or with mpirun, and run other commands as one task (srun -n 1); tasks meant as independent "
               "jobs, each with its own run directory, say so with LUONG_INDEPENDENT_TASKS=1");
  if (!launched_by_mpi()) return "";
  if (word == "train") return "";
  if (word == "sweep")
    return "luong sweep was started by an MPI launcher (mpirun / srun); run it as a plain command: it starts "
           "each trial itself, under mpirun when the spec sets launch: (docs/SWEEPS.md)";
  const int ranks = world_size_hint();
  if (ranks <= 1) return "";
  return str("luong ", word, " runs as one process, but the launcher started ", ranks,
             " (each would do the whole job); run it without mpirun, or with -np 1");
}

// CLI11 converts an integer option's text with strtoll (base 0), which turns a value past the type's range into
// the range's end: `gen-data --seed 99999999999999999999` ran as seed 9223372036854775807, and a range check
// quoted that number instead of the one typed. Every integer option's text is checked to fit first.
void refuse_clamped_integers(CLI::App& app) {
  const CLI::Validator fits(
      [](std::string& text) -> std::string {
        // CLI11 reads a leading 0 as octal (--valid 010 gave 8 pairs): decimal digits are decimal.
        const size_t digits = text.find_first_not_of("+-");
        if (digits != std::string::npos && text.size() - digits > 1 && text[digits] == '0' &&
            text.find_first_not_of("0123456789", digits) == std::string::npos) {
          const size_t first = text.find_first_not_of('0', digits);
          text.erase(digits, (first == std::string::npos ? text.size() - 1 : first) - digits);
        }
        const char* b = text.data();
        const char* e = b + text.size();
        if (b != e && *b == '+') ++b;
        int64_t signed_value = 0;
        uint64_t unsigned_value = 0;
        if (std::from_chars(b, e, signed_value).ec != std::errc::result_out_of_range &&
            std::from_chars(b, e, unsigned_value).ec != std::errc::result_out_of_range)
          return "";  // in range, or not a number at all: CLI11 says which
        return "value " + text + " is out of range (a 64-bit integer)";
      },
      "", "fits in 64 bits");
  for (CLI::App* sub : app.get_subcommands({}))
    for (CLI::Option* o : sub->get_options())
      // "INT", or "INT>=1" and the like once a range check has named itself.
      if (o->get_type_name().rfind("INT", 0) == 0 || o->get_type_name().rfind("UINT", 0) == 0) o->transform(fits);
}

void format_usage_errors(CLI::App& app, int argc, char** argv) {
  const CLI::App* sub = chosen_subcommand(app, argc, argv);
  const std::string where = sub ? "luong " + sub->get_name() + " --help" : "luong --help";
  app.failure_message([where](const CLI::App*, const CLI::Error& e) {
    return str("luong: error: ", e.what(), " (see ", where, ")\n");
  });
}

}  // namespace luong::cli
