// `luong sweep`: a grid / random / TPE hyper-parameter search, each trial a `luong train` child process.
//   luong sweep configs/sweeps/attention.yaml --out checkpoints/sweep-attention [--parallel 2] [--json]
// The logic lives in framework/sweep/; this file wires it to the CLI, the config schema and the process.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/core/cpu_share.h"
#include "framework/core/error.h"
#include "framework/io/json_text.h"
#include "framework/sweep/child_env.h"
#include "framework/sweep/gpu_pool.h"
#include "framework/sweep/results_table.h"
#include "framework/sweep/successive_halving.h"
#include "framework/sweep/sweep_plan.h"
#include "framework/sweep/sweep_report.h"
#include "framework/sweep/sweep_runner.h"
#include "framework/sweep/trial_process.h"
#include "launch/commands.h"
#include "launch/run_config.h"
#include "models/nmt/bleu.h"
#include "models/nmt/data/text_reader.h"
#include "models/nmt/significance/metric_rows.h"
#include "models/nmt/significance/paired_tests.h"

namespace luong::cli {
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string spec;
  std::string out;
  int64_t parallel = 0;
  bool json = false;
  bool retry_failed = false;
  bool dry_run = false;
  std::string gpus;  // --gpus 0,1,...: overrides the spec's gpus
};

// A command line a POSIX shell reads back as `argv`: a word holding anything the shell would interpret is put
// in single quotes, and a single quote inside it is closed, escaped and reopened ('\'').
std::string shell_words(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-+=.,/:@%") == std::string::npos;
    if (!s.empty()) s += ' ';
    if (plain) {
      s += a;
      continue;
    }
    s += '\'';
    for (const char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += '\'';
  }
  return s;
}

// Each trial's name, whether its config resolves, and its command: as text, or with --json one JSON object per
// trial in an array (the command as an argument list) for scripts.
void dry_run(const sweep::SweepSpec& spec, const std::vector<sweep::Trial>& trials, const sweep::SweepOptions& o,
             bool as_json) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& t : trials) {
    if (t.drawn_later) {
      if (as_json) all.push_back({{"name", t.name}, {"drawn_later", true}});
      if (!as_json) std::cout << t.name << "  [values drawn by TPE when it starts, from the results so far]\n";
      continue;
    }
    std::string error;
    // Successive halving: the steps of the trial's rungs; its first run trains to the first.
    std::vector<int64_t> rungs;
    try {
      const Config c = load_run_config(spec.base, t.sets).config;
      if (spec.prune.asha()) {
        sweep::check_step_limit(c.get_int("train.max_steps"));
        rungs = sweep::rung_steps(spec.prune.halving, c.get_int("train.max_steps"));
      }
    } catch (const Error& e) {
      error = e.what();
    }
    const std::vector<std::string> command = sweep::train_command(spec, t, o, rungs.empty() ? 0 : rungs.front());
    if (as_json) {
      all.push_back({{"name", t.name}, {"valid", error.empty()}, {"error", error}, {"command", command}});
      if (spec.prune.asha()) all.back()["rung_steps"] = rungs;
      continue;
    }
    std::cout << t.name << "  [" << (error.empty() ? "ok" : "INVALID: " + error) << "]\n  " << shell_words(command)
              << "\n";
    if (!rungs.empty()) {
      std::string steps;
      for (int64_t r : rungs) steps += (steps.empty() ? "" : ", ") + std::to_string(r);
      std::cout << "  steps of its rungs (successive halving): " << steps << "\n";
    }
  }
  if (as_json) std::cout << json_text(all) << std::endl;
}

// --out must be a directory luong can create or use; said before any trial starts, naming the option.
void prepare_out_dir(const std::string& out) {
  if (out.empty()) LUONG_FAIL("--out is empty; expected the directory for the sweep's trials and results");
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    LUONG_FAIL("--out ", out,
               " exists and is not a directory; expected the directory for the sweep's trials and results");
  fs::create_directories(out, ec);
  if (ec) LUONG_FAIL("--out ", out, ": cannot create the directory: ", ec.message());
}

// Perplexity is per target token: trials that cut the text into other tokens (subword merges, lowercasing,
// another target vocabulary and so another share of <unk>) are not ranked by it. A warning, not an error:
// the user may want the numbers anyway.
// The report's test of a trial's translations against the best trial's: sacreBLEU's paired bootstrap resampling
// on the sweep's metric (chrF2 for chrf, the score luong eval ranked it by).
double paired_bootstrap_p(const std::string& metric, const std::string& best, const std::string& other,
                          const std::string& reference) {
  const auto lines_of = [](const std::string& path) {  // as luong bleu reads them (gzip too)
    std::istringstream in(nmt::read_text_file(path));
    return bleu::read_lines(in, path);
  };
  const std::vector<std::vector<std::string>> refs{lines_of(reference)};
  const auto rows = [&](const std::string& file) {
    const std::vector<std::string> hyps = lines_of(file);
    if (metric == "bleu") return significance::bleu_rows(hyps, refs);
    return significance::chrf_rows(hyps, refs, static_cast<int>(std::count(metric.begin(), metric.end(), '+')));
  };
  return *significance::paired_bootstrap({rows(best), rows(other)}, significance::kDefaultResamples)[1].p_value;
}

void warn_if_perplexities_differ_in_kind(const sweep::SweepSpec& spec) {
  const bool ranks = spec.metric == "valid_ppl", prunes = spec.prune.enabled && spec.prune.metric == "valid_ppl";
  if (!ranks && !prunes) return;
  std::vector<std::string> varied;
  for (const auto& axis : spec.grid) varied.push_back(axis.key);
  for (const auto& param : spec.random_params) varied.push_back(param.key);
  for (const std::string& key : varied)
    for (const char* token_key : {"data.bpe_merges", "data.bpe_joint", "data.bpe_codes", "data.bpe_codes_tgt",
                                  "data.lowercase", "data.tgt_vocab_size", "data.min_freq"})
      if (key == token_key)
        std::cerr << "sweep warning: " << spec.file << " varies " << key << ", so its trials' perplexities are over "
                  << "different tokens and do not " << (ranks ? "rank" : "compare") << " them; "
                  << (ranks ? "rank by metric" : "prune by prune.metric") << ": valid_bleu or valid_chrf (with "
                  << "train.valid_bleu: true)" << (ranks ? ", bleu or chrf" : "") << std::endl;
}

void run(const SweepArgs& a) {
  const sweep::SweepSpec spec = sweep::load_sweep_spec(a.spec);
  // Unknown keys anywhere and bad fixed values are spec errors (file:line), not a sweep of invalid trials.
  sweep::check_spec_keys(spec, run_schema());
  warn_if_perplexities_differ_in_kind(spec);
  const std::vector<sweep::Trial> trials = sweep::plan_trials(spec);
  sweep::SweepOptions o;
  o.out_dir = a.out;
  o.luong_binary = fs::canonical("/proc/self/exe").string();  // mpirun would resolve /proc/self/exe to itself
  o.parallel = a.parallel > 0 ? a.parallel : spec.parallel;
  o.gpus = a.gpus.empty() ? spec.gpus : sweep::parse_gpu_list(a.gpus, "--gpus");
  o.gpus_per_trial = sweep::ranks_per_trial(spec.launch);  // one GPU a process
  o.retry_failed = a.retry_failed;
  // The CPUs this sweep may use (a Slurm allocation's, a taskset's), not the machine's.
  o.child_env =
      sweep::thread_env(usable_cpus(), o.parallel, o.gpus_per_trial, [](const char* k) { return std::getenv(k); });
  o.resolve = [](const std::string& base, const std::vector<std::string>& sets) { return load_run_config(base, sets).config; };
  o.log = [](const std::string& s) { std::cerr << "sweep " << s << std::endl; };
  if (a.dry_run) return dry_run(spec, trials, o, a.json);

  prepare_out_dir(a.out);
  std::cerr << "sweep " << spec.file << ": " << trials.size() << " trial(s), " << o.parallel << " at a time, ranked by "
            << spec.metric << " (" << spec.mode << ")"
            << (spec.tpe() ? str(", the first ", spec.tpe_startup, " drawn at random and the rest by TPE")
                           : std::string())
            << (spec.prune.asha() ? str(", pruned by successive halving on ", spec.prune.metric, " (min_steps ",
                                        spec.prune.halving.min_steps, ", reduction ", spec.prune.halving.reduction, ")")
                : spec.prune.median()
                    ? str(", pruned by the median stopping rule on ", spec.prune.metric, " (min_trials ",
                          spec.prune.min_trials, ", min_validations ", spec.prune.min_validations, ")")
                    : std::string())
            << (o.gpus.empty() ? std::string()
                               : str(", on GPUs ", sweep::visible_devices(o.gpus), " (", o.gpus_per_trial, " a trial)"))
            << ", in " << a.out << std::endl;
  // results.md and results.csv follow the sweep (without the significance tests, made once at the end). A report
  // that cannot be written is said once; the sweep goes on.
  bool said_report_error = false;
  o.on_progress = [&](const std::vector<sweep::TrialResult>& results) {
    try {
      sweep::write_sweep_report(spec, results, a.out, sweep::SweepStage::running);
    } catch (const Error& e) {
      if (!said_report_error) std::cerr << "sweep warning: " << e.what() << " (the results so far)" << std::endl;
      said_report_error = true;
    }
  };
  sweep::install_interrupt_handlers();
  const sweep::SweepOutcome outcome = sweep::run_sweep(spec, trials, o);
  const sweep::SweepReport report = sweep::write_sweep_report(
      spec, outcome.results, a.out, outcome.interrupted ? sweep::SweepStage::interrupted : sweep::SweepStage::finished,
      paired_bootstrap_p, o.log);

  if (a.json) {
    std::cout << json_text(sweep::results_json(report.ranked, a.out)) << std::endl;
  } else {
    std::cout << report.markdown << std::flush;
  }
  std::string files;
  for (const std::string& f : report.files) files += (files.empty() ? "" : ", ") + f;
  std::cerr << "sweep: results in " << a.out << "/: " << files << std::endl;
  bool all_ok = true;
  // A pruned trial did what the spec asked of it.
  for (const auto& r : outcome.results)
    all_ok = all_ok && (r.status == sweep::TrialStatus::ok || r.status == sweep::TrialStatus::pruned);
  if (outcome.interrupted) {
    std::cerr << "sweep: interrupted; run the same command again to continue" << std::endl;
    throw CLI::RuntimeError(130);
  }
  if (!all_ok) throw CLI::RuntimeError(1);
}

const bool kRegistered = add_command([](CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep",
                                 "Grid / random / TPE (model-based) hyper-parameter search: one `luong train` per "
                                 "trial, pruned (prune:) by the median stopping rule "
                                 "or successive halving; a results table and plots kept up to date while it runs");
  cmd->add_option("spec", args->spec, "Sweep spec (YAML, see docs/SWEEPS.md)")->required()->check(CLI::ExistingFile);
  cmd->add_option(
         "--out,-o", args->out,
         "Sweep directory: trials/<name>/ run dirs, results.csv/.md, valid_ppl.svg (rewritten as trials start and end)")
      ->required();
  // CLI::PositiveNumber would say "Value 0 not in range 0.000000 to 1797693134862315708145...".
  const CLI::Validator at_least_one(
      [](std::string& v) {
        int64_t n = 0;
        return CLI::detail::lexical_cast(v, n) && n >= 1 ? std::string() : "must be >= 1 (trials at once), got " + v;
      },
      "INT>=1");
  cmd->add_option("--parallel,-j", args->parallel, "Trials at once (overrides the spec's parallel)")
      ->check(at_least_one);
  cmd->add_option("--gpus", args->gpus,
                  "GPUs to share out among the trials (overrides the spec's gpus): ids as CUDA_VISIBLE_DEVICES takes "
                  "them, e.g. 0,1,2,3; each running trial sees only its own (one a process)");
  cmd->add_flag("--json", args->json,
                "Print the results table (with --dry-run: the planned trials) as a JSON array on stdout (progress goes "
                "to stderr)");
  cmd->add_flag("--retry-failed", args->retry_failed,
                "Run failed trials again (trials that finished ok or were pruned are always skipped)");
  cmd->add_flag("--dry-run,-n", args->dry_run, "List the trials, their validity and command lines; run nothing");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace luong::cli
