// Runs a sweep's trials as `luong train` child processes, `parallel` at a time, each in
// <out>/trials/<name>/ with --resume auto, then (metric bleu or chrf) `luong eval` on its best checkpoint.
// Finished trials (result.json) are skipped, so running the same sweep again continues it; SIGINT/SIGTERM
// stop the running trials with SIGTERM (they save a checkpoint) and the sweep returns what it has.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "framework/io/config.h"
#include "framework/sweep/sweep_plan.h"
#include "framework/sweep/trial_result.h"

namespace luong::sweep {

// Loads the base config with a trial's `--set` overrides and checks them against the schema; throws
// luong::Error naming the bad key or value.
using TrialResolver = std::function<Config(const std::string& base, const std::vector<std::string>& sets)>;

struct SweepOptions {
  std::string out_dir;
  std::string luong_binary;  // absolute path of the luong executable the trials run
  int64_t parallel = 1;
  bool retry_failed = false;  // rerun trials whose result.json says failed
  TrialResolver resolve;
  std::vector<std::pair<std::string, std::string>> child_env;  // e.g. OMP_NUM_THREADS for each trial
  // GPU ids the trials share out (each trial's processes see only theirs, by CUDA_VISIBLE_DEVICES); empty = none.
  std::vector<std::string> gpus;
  int64_t gpus_per_trial = 1;  // a training trial's processes (its launch prefix's -np); an evaluation takes one
  std::function<void(const std::string&)> log;                  // progress lines
  // Called with the results so far (trials running, waiting, pending among them) whenever a trial starts or ends,
  // and at least every report_every_s while trials run: for a results table that follows the sweep.
  std::function<void(const std::vector<TrialResult>&)> on_progress;
  double report_every_s = 60.0;
};

struct SweepOutcome {
  std::vector<TrialResult> results;  // in plan order
  bool interrupted = false;
};

// The run directory of a trial: <out>/trials/<name>.
std::string trial_dir(const std::string& out_dir, const std::string& name);
// The `luong train` command line of a trial (launch prefix, binary, base config, run dir, sets); `steps` > 0 (a rung
// of successive halving) adds --set train.max_steps=steps.
std::vector<std::string> train_command(const SweepSpec& spec, const Trial& t, const SweepOptions& o, int64_t steps = 0);

SweepOutcome run_sweep(const SweepSpec& spec, const std::vector<Trial>& trials, const SweepOptions& options);

}  // namespace luong::sweep
