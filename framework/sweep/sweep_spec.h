// A hyper-parameter sweep specification (`luong sweep SPEC.yaml`): a base config, fixed overrides, a grid
// and/or a seeded random search over config keys, the metric that ranks the trials, and how trials run.
// The YAML format is documented in docs/SWEEPS.md; every error names the spec file, line and key.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "framework/sweep/median_stopping.h"

namespace luong {
class ConfigSchema;
}

namespace luong::sweep {

// The most trials a spec may make (grid combinations times random samples). Counted before any trial is
// built, so a runaway spec (7 keys x 10 values = 10^7 trials) fails at once instead of exhausting memory.
inline constexpr int64_t kMaxTrials = 10000;
// The trials a TPE search draws at random before it models the results (Optuna's n_startup_trials).
inline constexpr int64_t kDefaultTpeStartup = 10;

// One value a config key takes in a trial.
struct ParamValue {
  std::string yaml;   // passed to `luong train --set key=<yaml>` (full precision, quoted strings kept quoted)
  std::string label;  // used in trial names (floats rounded to 4 significant digits)
};

struct Assignment {
  std::string key;  // "optim.lr"
  ParamValue value;
};

enum class Distribution { choice, uniform, loguniform };

struct RandomParam {
  std::string key;
  Distribution dist = Distribution::choice;
  std::vector<ParamValue> choices;  // choice
  double lo = 0.0, hi = 0.0;        // uniform / loguniform bounds (inclusive lo, exclusive hi)
};

struct GridAxis {
  std::string key;
  std::vector<ParamValue> values;  // never empty; values equal as YAML values (0.1 and 0.10) are kept once
};

struct SweepSpec {
  std::string file;                  // where the spec came from (error messages, copies)
  std::string base;                  // config path, resolved: relative to the working directory, else to the spec
  std::vector<Assignment> overrides; // applied to every trial, before the varied keys
  std::vector<GridAxis> grid;        // all combinations, the last axis varying fastest
  int64_t random_samples = 0;        // 0 = no random search
  uint64_t random_seed = 0;
  std::vector<RandomParam> random_params;
  // `random.sampler`: "random" (every trial drawn up front) or "tpe" (the first tpe_startup at random, the rest each
  // drawn when it starts by the tree-structured Parzen estimator from the results so far;
  // framework/sweep/tpe_sampler.h).
  std::string sampler = "random";
  int64_t tpe_startup = 0;           // `random.startup`; default min(10, ceil(2/3 samples))
  std::string metric = "valid_ppl";  // valid_ppl, valid_bleu, valid_chrf, bleu, chrf, tokens_per_s, wall_s
  std::string mode;                  // min or max (default: min for valid_ppl / wall_s, max otherwise)
  std::vector<std::string> launch;   // command prefix for `luong train`, split on whitespace ("mpirun -np 4")
  int64_t parallel = 1;              // trials running at once
  PruneRule prune;                   // `prune:`: stop trials that fall behind (off when absent)
  std::vector<std::string> gpus;     // `gpus:`: ids each trial takes its own of (CUDA_VISIBLE_DEVICES); empty = none
  // Line in `file` of each config key the spec sets, by section: "overrides.optim.lr", "grid.model.attention",
  // "random.params.optim.lr" (for errors found after parsing, against the config schema).
  std::map<std::string, int> lines;

  bool tpe() const { return sampler == "tpe"; }
  // bleu, chrf: each trial's best checkpoint is evaluated (`luong eval`, which gives both) after it trains.
  bool evaluates() const { return metric == "bleu" || metric == "chrf"; }
  // valid_bleu, valid_chrf: read from the trial's validation records, which need validation scoring.
  bool ranks_by_validation_score() const { return metric == "valid_bleu" || metric == "valid_chrf"; }
};

// The metrics a sweep can rank by.
const std::vector<std::string>& sweep_metrics();

// Parses a spec from YAML text; `file` names it in errors and resolves a relative `base`.
SweepSpec parse_sweep_spec(const std::string& text, const std::string& file);
// Reads and parses the spec file (error naming the file when it cannot be read).
SweepSpec load_sweep_spec(const std::string& path);

// Grid combinations times random samples, before identical trials are merged; saturates at INT64_MAX.
int64_t trial_count(const SweepSpec& spec);

// Checks every key the spec sets or varies against the config schema, and the fixed overrides' values too
// (a bad one would make every trial invalid); throws "sweep spec FILE:LINE: overrides.KEY: ...". Varied
// values are checked per trial, so one bad value fails only its trials.
void check_spec_keys(const SweepSpec& spec, const ConfigSchema& schema);

// The YAML text of a double that reads back as the same number: shortest round-trip form with a '.' or
// an exponent (so `--set` types it as a number), and its 4-significant-digit label for trial names.
ParamValue number_value(double v);

}  // namespace luong::sweep
