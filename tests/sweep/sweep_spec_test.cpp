// Parsing sweep specs: accepted keys and their defaults, and errors that name the file, line and key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "framework/core/error.h"
#include "framework/sweep/sweep_spec.h"

namespace luong::sweep {
namespace {

const std::string kBase = std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml";

SweepSpec parse(const std::string& body) { return parse_sweep_spec("base: " + kBase + "\n" + body, "specs/s.yaml"); }

// The luong::Error message of parsing `body` (after a valid base line), or "" when it parses.
std::string error_of(const std::string& body, bool with_base = true) {
  try {
    parse_sweep_spec((with_base ? "base: " + kBase + "\n" : std::string()) + body, "specs/s.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, ParsesEveryKey) {
  const SweepSpec s = parse(R"(
overrides:
  train: {max_epochs: 2}
  optim.lr: 0.01
grid:
  model.attention: [dot, general]
  model:
    dropout: [0.1, 0.3]
random:
  samples: 3
  seed: 7
  params:
    optim.lr2: {loguniform: [1.0e-4, 1.0e-2]}
    model.init_range: {uniform: [0.05, 0.2]}
    model.input_feeding: {choice: [true, false]}
metric: bleu
mode: max
launch: mpirun -np 4
parallel: 2
)");
  EXPECT_EQ(s.base, kBase);
  ASSERT_EQ(s.overrides.size(), 2u);
  EXPECT_EQ(s.overrides[0].key, "train.max_epochs");  // nested mappings flatten to dotted keys
  EXPECT_EQ(s.overrides[0].value.yaml, "2");
  EXPECT_EQ(s.overrides[1].key, "optim.lr");
  ASSERT_EQ(s.grid.size(), 2u);
  EXPECT_EQ(s.grid[0].key, "model.attention");
  EXPECT_EQ(s.grid[0].values[1].yaml, "general");
  EXPECT_EQ(s.grid[1].key, "model.dropout");
  EXPECT_EQ(s.grid[1].values[0].label, "0.1");
  EXPECT_EQ(s.random_samples, 3);
  EXPECT_EQ(s.random_seed, 7u);
  ASSERT_EQ(s.random_params.size(), 3u);
  EXPECT_EQ(s.random_params[0].dist, Distribution::loguniform);
  EXPECT_DOUBLE_EQ(s.random_params[0].lo, 1e-4);
  EXPECT_DOUBLE_EQ(s.random_params[0].hi, 1e-2);
  EXPECT_EQ(s.random_params[1].dist, Distribution::uniform);
  EXPECT_EQ(s.random_params[2].dist, Distribution::choice);
  EXPECT_EQ(s.random_params[2].choices.size(), 2u);
  EXPECT_EQ(s.metric, "bleu");
  EXPECT_EQ(s.mode, "max");
  EXPECT_EQ(s.launch, (std::vector<std::string>{"mpirun", "-np", "4"}));
  EXPECT_EQ(s.parallel, 2);
}

TEST(SweepSpec, DefaultsAndModeFollowsMetric) {
  const SweepSpec s = parse("grid: {optim.lr: [0.1]}\n");
  EXPECT_EQ(s.metric, "valid_ppl");
  EXPECT_EQ(s.mode, "min");
  EXPECT_EQ(s.parallel, 1);
  EXPECT_TRUE(s.launch.empty());
  EXPECT_EQ(parse("metric: bleu\n").mode, "max");
  EXPECT_EQ(parse("metric: tokens_per_s\n").mode, "max");
  EXPECT_EQ(parse("metric: wall_s\n").mode, "min");
  EXPECT_EQ(parse("launch: [mpirun, -np, '2']\n").launch, (std::vector<std::string>{"mpirun", "-np", "2"}));
}

TEST(SweepSpec, PruneRuleDefaultsFollowTheMetric) {
  EXPECT_FALSE(parse("metric: bleu\n").prune.enabled);
  // By the sweep's own metric when it is measured while training (and in its mode), else by perplexity.
  const PruneRule by_valid_bleu = parse("metric: valid_bleu\nprune: {}\n").prune;
  EXPECT_TRUE(by_valid_bleu.enabled);
  EXPECT_EQ(by_valid_bleu.metric, "valid_bleu");
  EXPECT_EQ(by_valid_bleu.mode, "max");
  EXPECT_EQ(by_valid_bleu.min_trials, 3);
  EXPECT_EQ(by_valid_bleu.min_validations, 2);
  const PruneRule by_ppl = parse("metric: bleu\nprune: true\n").prune;
  EXPECT_TRUE(by_ppl.enabled);
  EXPECT_EQ(by_ppl.metric, "valid_ppl");
  EXPECT_EQ(by_ppl.mode, "min");
  EXPECT_EQ(parse("metric: valid_ppl\nmode: max\nprune: yes\n").prune.mode, "max");  // the spec's mode
  EXPECT_FALSE(parse("prune: false\n").prune.enabled);
  const PruneRule set = parse("metric: bleu\nprune: {metric: valid_chrf, min_trials: 5, min_validations: 1}\n").prune;
  EXPECT_EQ(set.metric, "valid_chrf");
  EXPECT_EQ(set.mode, "max");
  EXPECT_EQ(set.min_trials, 5);
  EXPECT_EQ(set.min_validations, 1);
}

TEST(SweepSpec, SuccessiveHalvingTakesItsFirstRungAndReduction) {
  EXPECT_EQ(parse("prune: {}\n").prune.rule, "median");
  EXPECT_TRUE(parse("prune: {}\n").prune.median());
  const PruneRule asha = parse("metric: valid_bleu\nprune: {rule: asha, min_steps: 500}\n").prune;
  EXPECT_TRUE(asha.asha());
  EXPECT_FALSE(asha.median());
  EXPECT_EQ(asha.metric, "valid_bleu");
  EXPECT_EQ(asha.mode, "max");
  EXPECT_EQ(asha.halving.min_steps, 500);
  EXPECT_EQ(asha.halving.reduction, 3);  // the paper's default
  EXPECT_EQ(parse("prune: {rule: asha, min_steps: 5, reduction: 4}\n").prune.halving.reduction, 4);
  EXPECT_FALSE(parse("prune: false\n").prune.asha());
}

TEST(SweepSpec, TpeSamplerDrawsItsStartupTrialsAtRandomFirst) {
  const std::string params = "params: {optim.lr: {loguniform: [0.0001, 0.01]}}}\n";
  EXPECT_EQ(parse("random: {samples: 4, " + params).sampler, "random");
  EXPECT_FALSE(parse("random: {samples: 4, " + params).tpe());
  // Default startup: Optuna's 10, or two thirds of a smaller sweep (rounded up), so TPE draws the last third.
  EXPECT_EQ(parse("random: {samples: 40, sampler: tpe, " + params).tpe_startup, 10);
  EXPECT_EQ(parse("random: {samples: 12, sampler: tpe, " + params).tpe_startup, 8);
  EXPECT_EQ(parse("random: {samples: 4, sampler: tpe, " + params).tpe_startup, 3);
  EXPECT_EQ(parse("random: {samples: 1, sampler: tpe, " + params).tpe_startup, 1);
  const SweepSpec s = parse("random: {samples: 6, sampler: tpe, startup: 2, " + params);
  EXPECT_TRUE(s.tpe());
  EXPECT_EQ(s.tpe_startup, 2);
}

TEST(SweepSpec, GpusAreAListOrACommaSeparatedString) {
  EXPECT_TRUE(parse("metric: bleu\n").gpus.empty());
  EXPECT_EQ(parse("gpus: [0, 1, GPU-ab12]\n").gpus, (std::vector<std::string>{"0", "1", "GPU-ab12"}));
  EXPECT_EQ(parse("gpus: 2,3\n").gpus, (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(parse("gpus: 4\n").gpus, (std::vector<std::string>{"4"}));
}

TEST(SweepSpec, QuotedValuesStayStrings) {
  const SweepSpec s = parse("grid: {model.attention: ['yes', \"it's\", plain]}\n");
  EXPECT_EQ(s.grid[0].values[0].yaml, "'yes'");  // unquoted, `--set` would read a boolean
  EXPECT_EQ(s.grid[0].values[0].label, "yes");
  EXPECT_EQ(s.grid[0].values[1].yaml, "'it''s'");
  EXPECT_EQ(s.grid[0].values[2].yaml, "plain");
}

TEST(SweepSpec, NumberValueKeepsFullPrecisionAndRoundsLabel) {
  const ParamValue v = number_value(0.000123456789);
  EXPECT_EQ(v.yaml, "0.000123456789");
  EXPECT_EQ(v.label, "0.0001235");
  EXPECT_EQ(number_value(2.0).yaml, "2.0");  // stays a number for `--set`, not an integer
  EXPECT_EQ(std::stod(number_value(1.0 / 3.0).yaml), 1.0 / 3.0);
}

TEST(SweepSpec, BaseResolvedBesideTheSpecFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("luong_sweep_spec_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "base.yaml") << "seed: 1\n";
  std::ofstream(dir / "s.yaml") << "base: base.yaml\n";
  const SweepSpec s = load_sweep_spec((dir / "s.yaml").string());
  EXPECT_EQ(s.base, (dir / "base.yaml").string());
  std::filesystem::remove_all(dir);
}

TEST(SweepSpec, ErrorsNameFileLineAndKey) {
  struct Case {
    std::string body, expected;
  };
  const Case cases[] = {
      {"grdi: {optim.lr: [1]}\n",
       "specs/s.yaml:2: unknown key 'grdi'; did you mean 'grid'? (valid keys: base, overrides, grid"},
      {"grid: {optim.lr: []}\n", "specs/s.yaml:2: grid.optim.lr: has no values"},
      {"grid: {}\n", "specs/s.yaml:2: grid: is empty"},
      {"grid:\n", "specs/s.yaml:2: grid: is empty"},  // nothing after it: not a sweep of the base alone
      {"grid: {optim.lr: 0.1}\n", "grid.optim.lr: expected a list of values, got '0.1'"},
      {"grid: [1, 2]\n", "grid: expected a mapping of config keys"},
      {"random: {params: {optim.lr: {uniform: [0, 1]}}}\n", "random: 'samples' is required"},
      {"random: {samples: 0, params: {optim.lr: {uniform: [0, 1]}}}\n", "random.samples: must be at least 1"},
      {"random: {samples: two, params: {optim.lr: {uniform: [0, 1]}}}\n",
       "random.samples: expected a positive integer, got 'two'"},
      {"random: {samples: 2}\n", "random.params: at least one parameter"},
      {"random: {samples: 2, params: {optim.lr: {normal: [0, 1]}}}\n",
       "random.params.optim.lr: unknown distribution 'normal' (valid: choice, uniform, loguniform)"},
      {"random: {samples: 2, params: {optim.lr: {uniform: [1, 0]}}}\n",
       "random.params.optim.lr: uniform needs finite bounds with lo < hi"},
      {"random: {samples: 2, params: {optim.lr: {loguniform: [0, 1]}}}\n", "loguniform needs lo > 0"},
      {"random: {samples: 2, params: {optim.lr: {choice: []}}}\n", "choice needs a non-empty list"},
      {"random: {samples: 2, sed: 3, params: {optim.lr: {choice: [1]}}}\n",
       "unknown key 'random.sed'; did you mean 'seed'? (valid keys under 'random': samples, seed, params, sampler, "
       "startup)"},
      {"random: {samples: 4, sampler: bayes, params: {optim.lr: {uniform: [0, 1]}}}\n",
       "specs/s.yaml:2: random.sampler: unknown sampler 'bayes' (valid: random, tpe)"},
      {"random: {samples: 4, sampler: tpe, startup: 4, params: {optim.lr: {uniform: [0, 1]}}}\n",
       "random.startup: must be less than random.samples (4), or no trial is drawn by TPE; got 4"},
      {"random: {samples: 4, sampler: tpe, startup: 0, params: {optim.lr: {uniform: [0, 1]}}}\n",
       "random.startup: must be at least 1, got 0"},
      {"random: {samples: 4, startup: 2, params: {optim.lr: {uniform: [0, 1]}}}\n",
       "random.startup: is a setting of sampler: tpe"},
      {"grid: {model.attention: [dot, general]}\nrandom: {samples: 4, sampler: tpe, params: {optim.lr: {uniform: [0, "
       "1]}}}\n",
       "specs/s.yaml:3: random.sampler: tpe cannot be combined with grid: (put the grid's keys in random.params as "
       "{choice: [...]})"},
      {"metric: accuracy\n",
       "metric: unknown metric 'accuracy' (valid: valid_ppl, valid_bleu, valid_chrf, bleu, chrf, tokens_per_s, "
       "wall_s)"},
      {"mode: lowest\n", "mode: expected min or max, got 'lowest'"},
      {"prune: {metric: bleu}\n",
       "specs/s.yaml:2: prune.metric: 'bleu' is not measured while a trial trains; expected valid_ppl, valid_bleu, "
       "valid_chrf"},
      {"prune: {min_trial: 2}\n", "unknown key 'prune.min_trial'; did you mean 'min_trials'?"},
      {"prune: {min_trials: 0}\n", "prune.min_trials: must be at least 1, got 0"},
      {"prune: {min_validations: two}\n", "prune.min_validations: expected a positive integer"},
      {"prune: 3\n",
       "prune: expected a mapping with rule, metric, min_trials, min_validations, min_steps, reduction ({} or true "
       "for the defaults), got '3'"},
      {"prune: {rule: hyperband}\n",
       "specs/s.yaml:2: prune.rule: 'hyperband' is not a pruning rule; expected median (the median stopping rule) "
       "or asha (successive halving)"},
      {"prune: {rule: asha}\n",
       "prune.min_steps: is required with rule asha: the steps every trial trains before the first comparison"},
      {"prune: {rule: asha, min_steps: 0}\n", "prune.min_steps: must be at least 1, got 0"},
      {"prune: {rule: asha, min_steps: 10, reduction: 1}\n",
       "prune.reduction: must be at least 2 (1/reduction of a rung's trials go on), got 1"},
      {"prune: {rule: asha, min_steps: 10, reduction: half}\n", "prune.reduction: expected an integer of at least 2"},
      {"prune: {rule: asha, min_steps: 10, min_trials: 3}\n",
       "prune.min_trials: is a setting of rule median, and this prune: rule is asha"},
      {"prune: {min_steps: 10}\n", "prune.min_steps: is a setting of rule asha, and this prune: rule is median"},
      {"prune: {rule: median, reduction: 2}\n",
       "prune.reduction: is a setting of rule asha, and this prune: rule is median"},
      {"prune:\n", "prune: expected a mapping"},
      {"gpus: [0, 1, 0]\n", "specs/s.yaml:2: gpus: GPU 0 is listed twice"},
      {"gpus: {a: 1}\n", "specs/s.yaml:2: gpus: expected a list of GPU ids such as [0, 1], got a mapping"},
      {"gpus: '0,x y'\n", "gpus: 'x y' is not a GPU id"},
      {"parallel: 0\n", "parallel: must be at least 1"},
      {"parallel: [2]\n", "parallel: expected a positive integer, got a sequence"},
      {"launch: {np: 4}\n", "launch: expected a command prefix"},
      {"overrides: {optim.lr: [1, 2]}\n", "overrides.optim.lr: expected a single value, got a sequence"},
      {"overrides: {optim.lr: 1}\ngrid: {optim.lr: [1, 2]}\n",
       "optim.lr: is both a fixed override and varied in 'grid'"},
      {"grid: {optim.lr: [1]}\nrandom: {samples: 1, params: {optim.lr: {choice: [1]}}}\n", "optim.lr: is varied twice"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.body);
    EXPECT_NE(e.find("sweep spec specs/s.yaml"), std::string::npos) << c.body << " -> " << e;
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.body << " -> " << e;
  }
  EXPECT_NE(error_of("grid: {optim.lr: [1]}\n", false).find("base: is required"), std::string::npos);
  EXPECT_NE(error_of("base: /no/such/config.yaml\n", false).find("config file '/no/such/config.yaml' does not exist"),
            std::string::npos);
  EXPECT_NE(error_of("[1, 2]\n", false).find("expected a mapping with keys base"), std::string::npos);
  EXPECT_NE(error_of("grid: {a: [1\n", false).find("malformed YAML"), std::string::npos);
  try {
    load_sweep_spec("/no/such/spec.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sweep spec '/no/such/spec.yaml' cannot be read"), std::string::npos);
  }
}

}  // namespace
}  // namespace luong::sweep
