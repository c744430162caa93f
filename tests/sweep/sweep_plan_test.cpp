// Planning trials: grid order, seeded random sampling, trial names.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "framework/sweep/sweep_plan.h"

namespace luong::sweep {
namespace {

const std::string kBase = std::string(LUONG_SOURCE_DIR) + "/configs/tiny.yaml";

SweepSpec parse(const std::string& body) { return parse_sweep_spec("base: " + kBase + "\n" + body, "s.yaml"); }

std::vector<std::string> names(const std::vector<Trial>& t) {
  std::vector<std::string> n;
  for (const auto& x : t) n.push_back(x.name);
  return n;
}

TEST(SweepPlan, GridIsTheCartesianProductLastAxisFastest) {
  const auto trials = plan_trials(parse(R"(
overrides: {train.max_steps: 20}
grid:
  model.attention: [dot, local-m]
  optim.lr: [0.001, 1e-4]
)"));
  EXPECT_EQ(names(trials), (std::vector<std::string>{"attention-dot_lr-0.001", "attention-dot_lr-1e-4",
                                                     "attention-local-m_lr-0.001", "attention-local-m_lr-1e-4"}));
  EXPECT_EQ(trials[1].sets, (std::vector<std::string>{"train.max_steps=20", "model.attention=dot", "optim.lr=1e-4"}));
  ASSERT_EQ(trials[2].varied.size(), 2u);
  EXPECT_EQ(trials[2].varied[0].key, "model.attention");
  EXPECT_EQ(trials[2].varied[0].value.label, "local-m");
  EXPECT_EQ(varied_keys(parse("grid: {a.b: [1], c.d: [2]}\nrandom: {samples: 1, params: {e.f: {choice: [3]}}}\n")),
            (std::vector<std::string>{"a.b", "c.d", "e.f"}));
}

TEST(SweepPlan, NoGridNoRandomIsOneBaseTrial) {
  const auto trials = plan_trials(parse("overrides: {train.max_steps: 5}\n"));
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].name, "base");
  EXPECT_EQ(trials[0].sets, (std::vector<std::string>{"train.max_steps=5"}));
}

TEST(SweepPlan, NamesAreSanitizedAndDisambiguated) {
  // Two keys ending in "dropout": the full key is used; odd characters become '-'.
  const auto trials = plan_trials(parse("grid: {model.dropout: [0.1], other.dropout: ['a b/c']}\n"));
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].name, "model.dropout-0.1_other.dropout-a-b-c");
  // Values that sanitize to the same name get distinct hashes.
  const auto clash = plan_trials(parse("grid: {model.init: ['a/b', 'a:b', 'a-b']}\n"));
  ASSERT_EQ(clash.size(), 3u);
  const std::vector<std::string> clash_names = names(clash);
  EXPECT_EQ(std::set<std::string>(clash_names.begin(), clash_names.end()).size(), 3u);
  for (const auto& n : clash_names) {
    EXPECT_EQ(n.rfind("init-a-b-", 0), 0u) << n;
    EXPECT_EQ(n.size(), std::string("init-a-b-").size() + 6) << n;
  }
  // The hash depends only on the values: the same spec always gives the same names.
  EXPECT_EQ(names(plan_trials(parse("grid: {model.init: ['a/b', 'a:b', 'a-b']}\n"))), clash_names);
  // A leading dot would make a hidden directory.
  EXPECT_EQ(plan_trials(parse("grid: {x: [.5]}\n"))[0].name, "x-.5");
}

TEST(SweepPlan, TpeTrialsAfterTheStartupOnesAreDrawnLaterAndNamedWhenDrawn) {
  const std::string params = "  params: {optim.lr: {loguniform: [1.0e-4, 1.0e-1]}, model.dropout: {uniform: [0, 1]}}\n";
  const auto random = plan_trials(parse("random:\n  samples: 5\n  seed: 4\n" + params));
  const auto tpe = plan_trials(parse("random:\n  samples: 5\n  seed: 4\n  sampler: tpe\n  startup: 2\n" + params));
  ASSERT_EQ(tpe.size(), 5u);
  for (size_t i = 0; i < 2; ++i) {  // the random sampler's first draws
    EXPECT_EQ(tpe[i].sets, random[i].sets);
    EXPECT_FALSE(tpe[i].drawn_later);
  }
  for (size_t i = 2; i < 5; ++i) {
    EXPECT_TRUE(tpe[i].drawn_later);
    EXPECT_EQ(tpe[i].name, "tpe-draw-" + std::to_string(i + 1));
    EXPECT_TRUE(tpe[i].sets.empty());
  }
  // Named as assign_names names it; a name taken (by a trial or a directory) gets the values' hash.
  Trial t;
  t.varied = {{"optim.lr", number_value(0.00123456)}, {"model.dropout", number_value(0.5)}};
  name_drawn_trial(t, [](const std::string&) { return false; });
  EXPECT_EQ(t.name, "lr-0.001235_dropout-0.5");
  name_drawn_trial(t, [](const std::string& name) { return name == "lr-0.001235_dropout-0.5"; });
  EXPECT_EQ(t.name.rfind("lr-0.001235_dropout-0.5-", 0), 0u) << t.name;
  EXPECT_EQ(t.name.size(), std::string("lr-0.001235_dropout-0.5-").size() + 6) << t.name;
}

TEST(SweepPlan, RandomSearchWithASeedPicksTheSameTrials) {
  const std::string params = R"(
  params:
    optim.lr: {loguniform: [1.0e-4, 1.0e-1]}
    model.dropout: {uniform: [0.1, 0.5]}
    model.attention: {choice: [dot, general, concat]}
)";
  auto with_seed = [&](int seed) { return parse("random:\n  samples: 6\n  seed: " + std::to_string(seed) + params); };
  const auto a = plan_trials(with_seed(11)), b = plan_trials(with_seed(11)), c = plan_trials(with_seed(12));
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].sets, b[i].sets);
    EXPECT_EQ(a[i].name, b[i].name);
  }
  int same = 0;
  for (size_t i = 0; i < std::min(a.size(), c.size()); ++i) same += a[i].sets == c[i].sets;
  EXPECT_EQ(same, 0) << "a different seed must give different trials";

  // Values lie within their distributions, names use the rounded label, --set the full value.
  std::set<std::string> attentions;
  for (const auto& t : a) {
    const double lr = std::stod(t.varied[0].value.yaml), dropout = std::stod(t.varied[1].value.yaml);
    EXPECT_GE(lr, 1e-4);
    EXPECT_LT(lr, 1e-1);
    EXPECT_GE(dropout, 0.1);
    EXPECT_LT(dropout, 0.5);
    attentions.insert(t.varied[2].value.yaml);
    EXPECT_EQ(t.sets[0], "optim.lr=" + t.varied[0].value.yaml);
    EXPECT_NE(t.name.find("lr-" + t.varied[0].value.label + "_dropout-" + t.varied[1].value.label), std::string::npos)
        << t.name;
    EXPECT_LE(t.varied[0].value.label.size(), std::string("0.0001234").size()) << t.varied[0].value.label;
    EXPECT_GT(t.varied[0].value.yaml.size(), t.varied[0].value.label.size());  // full precision on --set
  }
  EXPECT_GE(attentions.size(), 2u);
  for (const auto& v : attentions) EXPECT_TRUE(v == "dot" || v == "general" || v == "concat") << v;
}

TEST(SweepPlan, LogUniformCoversTheDecadesEvenly) {
  // 400 draws from loguniform[1e-4, 1e-0]: each of the four decades gets about a quarter.
  const SweepSpec s = parse("random: {samples: 400, seed: 3, params: {optim.lr: {loguniform: [1.0e-4, 1.0]}}}\n");
  int decade[4] = {0, 0, 0, 0};
  for (const auto& draw : sample_random(s)) {
    const double v = std::stod(draw[0].value.yaml);
    ++decade[std::min(3, static_cast<int>(std::floor(std::log10(v) + 4)))];
  }
  for (int d : decade) EXPECT_NEAR(d, 100, 35);
}

TEST(SweepPlan, GridTimesRandomAndDuplicatesDropped) {
  const auto trials = plan_trials(parse(R"(
grid: {model.attention: [dot, general]}
random: {samples: 3, seed: 1, params: {model.input_feeding: {choice: [true, false]}}}
)"));
  // 2 grid points x 3 draws from a 2-value choice: at most 2 x 2 distinct trials survive.
  EXPECT_LE(trials.size(), 4u);
  EXPECT_GE(trials.size(), 2u);
  std::set<std::vector<std::string>> sets;
  for (const auto& t : trials) EXPECT_TRUE(sets.insert(t.sets).second) << t.name;
  EXPECT_EQ(trials[0].varied[0].value.yaml, "dot");
  EXPECT_EQ(trials.back().varied[0].value.yaml, "general");
}

}  // namespace
}  // namespace luong::sweep
