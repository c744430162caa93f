// Sweep specs that used to be accepted and misbehave later: a grid too large to expand, a base that is a
// directory, equal grid values spelled differently, repeated keys, an unknown fixed override; plus the
// results table's error cell and the --parallel message.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/sweep/results_table.h"
#include "framework/sweep/sweep_plan.h"
#include "models/nmt/nmt_config.h"
#include "tests/data/test_files.h"
#include "tests/support/run_luong.h"

namespace luong::sweep {
namespace {

const std::string kBase = std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml";

SweepSpec parse(const std::string& body) { return parse_sweep_spec("base: " + kBase + "\n" + body, "specs/s.yaml"); }

std::string error_of(const std::string& body) {
  return testing::error_of([&] { parse(body); });
}

// 7 keys x 10 values: 10^7 trials.
std::string huge_grid() {
  std::string g = "grid:\n";
  for (const char* k : {"optim.lr", "model.dropout", "model.init_range", "optim.clip_norm", "optim.beta1",
                        "optim.weight_decay", "eval.length_penalty"}) {
    g += std::string("  ") + k + ": [";
    for (int i = 0; i < 10; ++i) g += (i ? ", " : "") + std::to_string(i + 1);
    g += "]\n";
  }
  return g;
}

TEST(SweepLimits, HugeGridFailsFastNamingFileCountAndLimit) {
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = error_of(huge_grid());
  EXPECT_NE(msg.find("sweep spec specs/s.yaml:2: grid: the spec makes 10000000 trials (grid 10 x 10 x 10 x 10 x 10 "
                     "x 10 x 10), more than the limit of 10000"),
            std::string::npos)
      << msg;
  // Counted, not expanded: 10^7 trials would take many seconds and gigabytes.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(SweepLimits, HugeRandomSearchFailsFast) {
  const std::string msg = error_of("random: {samples: 100000000000, params: {optim.lr: {uniform: [0.1, 1]}}}\n");
  EXPECT_NE(msg.find("specs/s.yaml:2: random.samples: the spec makes 100000000000 trials (random.samples "
                     "100000000000), more than the limit of 10000"),
            std::string::npos)
      << msg;
  // Grid times samples counts too; a product past int64 does not wrap around.
  EXPECT_NE(error_of("grid: {optim.lr: [0.1, 0.2]}\nrandom: {samples: 5001, params: {model.dropout: {uniform: [0, "
                     "1]}}}\n")
                .find("10002 trials (grid 2 x random.samples 5001)"),
            std::string::npos);
  EXPECT_NE(error_of(huge_grid() + "random: {samples: 9223372036854775807, params: {seed: {choice: [1]}}}\n")
                .find("9223372036854775807 or more trials"),
            std::string::npos);
  // At the limit is fine.
  EXPECT_EQ(parse("random: {samples: 10000, params: {optim.lr: {uniform: [0.1, 1]}}}\n").random_samples, kMaxTrials);
}

TEST(SweepLimits, PlanRefusesAHandBuiltHugeSpec) {
  SweepSpec s;
  s.file = "code";
  for (int k = 0; k < 7; ++k) {
    GridAxis axis{"key" + std::to_string(k), {}};
    for (int i = 0; i < 10; ++i) axis.values.push_back(number_value(i));
    s.grid.push_back(axis);
  }
  EXPECT_EQ(trial_count(s), 10000000);
  EXPECT_ERROR_HAS(plan_trials(s), "sweep spec code: the spec makes 10000000 trials, more than the limit of 10000");
}

TEST(SweepLimits, BaseThatIsADirectoryIsAnError) {
  testing::TempDir dir;
  const std::string msg = testing::error_of([&] { parse_sweep_spec("base: " + dir.path().string() + "\n", "s.yaml"); });
  EXPECT_NE(msg.find("sweep spec s.yaml:1: base: config file '" + dir.path().string() +
                     "' is a directory, expected a YAML file"),
            std::string::npos)
      << msg;
  EXPECT_ERROR_HAS(load_sweep_spec(dir.path().string()), "is a directory, expected a YAML file");
}

TEST(SweepLimits, EqualGridValuesRunOnceFirstSpellingKept) {
  const SweepSpec s = parse(
      "grid:\n  optim.lr: [0.1, 0.10, 1e-1, 0.2]\n  model.input_feeding: [true, yes, false]\n"
      "  model.attention: [dot, 'dot', general, dot]\n");
  ASSERT_EQ(s.grid.size(), 3u);
  ASSERT_EQ(s.grid[0].values.size(), 2u);
  EXPECT_EQ(s.grid[0].values[0].yaml, "0.1");
  EXPECT_EQ(s.grid[0].values[1].yaml, "0.2");
  ASSERT_EQ(s.grid[1].values.size(), 2u);
  EXPECT_EQ(s.grid[1].values[0].yaml, "true");
  // A quoted 'dot' is the string dot, as `--set` reads it: the same value.
  ASSERT_EQ(s.grid[2].values.size(), 2u);
  const auto trials = plan_trials(parse("grid: {optim.lr: [0.1, 0.10]}\n"));
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].name, "lr-0.1");
}

TEST(SweepLimits, RepeatedKeysAreErrors) {
  EXPECT_ERROR_HAS(parse("grid: {optim.lr: [1]}\ngrid: {optim.lr: [2]}\n"), "specs/s.yaml:3: duplicate key 'grid'");
  EXPECT_ERROR_HAS(parse("overrides:\n  optim.lr: 1\n  optim:\n    lr: 2\n"),
                   "specs/s.yaml:5: overrides: duplicate key 'optim.lr'");
  EXPECT_ERROR_HAS(parse("overrides:\n  optim: {lr: 1}\n  optim: {eps: 2}\n"),
                   "specs/s.yaml:4: overrides: duplicate key 'optim'");
}

TEST(SweepLimits, UnknownOrBadFixedOverrideIsASpecError) {
  const ConfigSchema schema = nmt::nmt_schema();
  EXPECT_ERROR_HAS(
      check_spec_keys(parse("overrides:\n  optim.lrr: 0.1\ngrid: {model.layers: [1, 2]}\n"), schema),
      "sweep spec specs/s.yaml:3: overrides.optim.lrr: unknown key 'optim.lrr'; did you mean 'lr'? (valid keys under "
      "'optim': name, lr,");
  EXPECT_ERROR_HAS(check_spec_keys(parse("overrides:\n  optim: {lr: 0}\n"), schema),
                   "sweep spec specs/s.yaml:3: overrides.optim.lr: value 0.0 is out of range (0, inf)");
  EXPECT_ERROR_HAS(check_spec_keys(parse("overrides:\n  model.layers: two\n"), schema),
                   "specs/s.yaml:3: overrides.model.layers: expected integer, got 'two'");
  EXPECT_ERROR_HAS(check_spec_keys(parse("overrides:\n  model: 3\n"), schema),
                   "specs/s.yaml:3: overrides.model: is a section");
  EXPECT_ERROR_HAS(check_spec_keys(parse("grid:\n  optim.lrr: [1]\n"), schema),
                   "specs/s.yaml:3: grid.optim.lrr: unknown key 'optim.lrr'");
  EXPECT_ERROR_HAS(check_spec_keys(parse("random: {samples: 1, params: {modle.layers: {choice: [1]}}}\n"), schema),
                   "specs/s.yaml:2: random.params.modle.layers: unknown key 'modle.layers'");
  // Varied values are checked per trial, so one bad value fails only its trials.
  check_spec_keys(parse("overrides: {train.max_steps: 5}\ngrid: {model.layers: [0, 1]}\n"), schema);
}

TEST(SweepLimits, DryRunRefusesAnUnknownOverride) {
  testing::TempDir dir;
  const std::string spec = dir.file("s.yaml", "base: " + kBase + "\noverrides:\n  optim.lrr: 0.1\n");
  const auto r = testing::run_luong("sweep " + spec + " --out " + dir.path("out") + " --dry-run");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("luong: error: sweep spec " + spec + ":3: overrides.optim.lrr: unknown key 'optim.lrr'"),
            std::string::npos)
      << r.output;
}

// Perplexities over different tokens (other BPE merges, lowercasing, vocabularies) do not rank trials: a
// warning says so and names the metrics that do; a sweep by BLEU, or one that keeps the tokens, gets none.
TEST(SweepLimits, RankingTrialsThatTokeniseDifferentlyByPerplexityIsWarnedAbout) {
  testing::TempDir dir;
  const std::string warning = "varies data.bpe_merges, so its trials' perplexities are over different tokens";
  const std::string by_ppl = dir.file("ppl.yaml", "base: " + kBase + "\ngrid:\n  data.bpe_merges: [0, 50]\n");
  auto r = testing::run_luong("sweep " + by_ppl + " --out " + dir.path("out") + " --dry-run");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("sweep warning: " + by_ppl + " " + warning), std::string::npos) << r.output;
  const std::string lowercase = dir.file(
      "lc.yaml", "base: " + kBase + "\nrandom: {samples: 2, params: {data.lowercase: {choice: [true, false]}}}\n");
  r = testing::run_luong("sweep " + lowercase + " --out " + dir.path("out") + " --dry-run");
  EXPECT_NE(r.output.find("varies data.lowercase"), std::string::npos) << r.output;
  const std::string by_bleu =
      dir.file("bleu.yaml",
               "base: " + kBase +
                   "\noverrides: {train.valid_bleu: true}\ngrid:\n  data.bpe_merges: [0, 50]\nmetric: valid_bleu\n");
  const std::string same_tokens = dir.file("lr.yaml", "base: " + kBase + "\ngrid:\n  optim.lr: [0.1, 0.2]\n");
  for (const std::string& spec : {by_bleu, same_tokens}) {
    r = testing::run_luong("sweep " + spec + " --out " + dir.path("out") + " --dry-run");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("sweep warning"), std::string::npos) << spec << "\n" << r.output;
  }
}

// --dry-run prints each trial's command so that a shell reads it back as the very arguments the sweep would
// run (spaces, quotes, '$' in a value), and with --json as a list of arguments.
TEST(SweepLimits, DryRunCommandsReadBackThroughAShell) {
  testing::TempDir dir;
  const std::string spec = dir.file("s.yaml", "base: " + kBase +
                                                  "\ngrid:\n  data.train_src: [\"/x/it's a $HOME src\"]\n"
                                                  "  model.attention: [general]\n");
  const auto text = testing::run_luong("sweep " + spec + " --out " + dir.path("out") + " --dry-run 2>/dev/null");
  ASSERT_EQ(text.status, 0) << text.output;
  const auto js = testing::run_luong("sweep " + spec + " --out " + dir.path("out") + " --dry-run --json 2>/dev/null");
  ASSERT_EQ(js.status, 0) << js.output;
  const nlohmann::json plan = nlohmann::json::parse(js.output);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0]["valid"], true) << plan;
  const auto command = plan[0]["command"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(command.begin(), command.end(), "data.train_src='/x/it''s a $HOME src'"), command.end())
      << js.output;
  // The text's second line, word-split by sh, gives the same argument list.
  const std::string line = text.output.substr(text.output.find('\n') + 3);
  const std::string words =
      dir.file("words.sh", "for w in " + line.substr(0, line.find('\n')) + "; do printf '%s\\n' \"$w\"; done\n");
  const auto split = testing::run_luong_shell("sh " + words);
  std::string expected;
  for (const auto& w : command) expected += w + "\n";
  EXPECT_EQ(split.output, expected);
  EXPECT_FALSE(std::filesystem::exists(dir.path("out")));
}

TEST(SweepLimits, OutMustBeADirectory) {
  testing::TempDir dir;
  const std::string spec = dir.file("s.yaml", "base: " + kBase + "\n");
  const std::string file = dir.file("afile", "x");
  auto r = testing::run_luong("sweep " + spec + " --out " + file);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("luong: error: --out " + file + " exists and is not a directory"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("trial(s)"), std::string::npos) << "refused before the sweep's banner: " << r.output;
  r = testing::run_luong("sweep " + spec + " --out ''");
  EXPECT_NE(r.output.find("luong: error: --out is empty"), std::string::npos) << r.output;
}

TEST(SweepLimits, ParallelZeroSaysAtLeastOne) {
  testing::TempDir dir;
  const std::string spec = dir.file("s.yaml", "base: " + kBase + "\n");
  const auto r = testing::run_luong("sweep " + spec + " --out " + dir.path("out") + " -j 0");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--parallel: must be >= 1 (trials at once), got 0"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("179769"), std::string::npos) << r.output;
}

TEST(SweepLimits, ErrorCellShowsTheLogsErrorLine) {
  TrialResult r;
  r.name = "base", r.status = TrialStatus::failed;
  r.error =
      "luong train: exit status 1 (no --json summary line); last lines of out/trials/base/train.log:\n"
      "luong 0.1.0: 1 process(es), backend local\n"
      "luong: error: file '/x/train.src' cannot be read: No such file or directory\n";
  const ResultsTable md = make_table({r}, {}, false, false);
  EXPECT_EQ(md.rows[0].back(), "luong: error: file '/x/train.src' cannot be read: No such file or directory");
  EXPECT_EQ(make_table({r}, {}, false, true).rows[0].back(), r.error);  // the CSV keeps everything
  r.error = "luong train: killed by signal 9; last lines of log:\n" + std::string(300, 'x') + " error: long\n";
  const std::string cell = make_table({r}, {}, false, false).rows[0].back();
  EXPECT_EQ(cell.size(), 160u);
  EXPECT_EQ(cell.substr(157), "...");
}

}  // namespace
}  // namespace luong::sweep
