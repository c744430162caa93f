// The TPE sampler (`random.sampler: tpe`) on hand-made results: which trials it learns from and in what order, that
// its draws follow the good values, and that it finds a better optimum than random search on a known function.
#include "framework/sweep/tpe_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "framework/sweep/sweep_plan.h"

namespace luong::sweep {
namespace {

RandomParam log_lr() {
  RandomParam p;
  p.key = "optim.lr";
  p.dist = Distribution::loguniform;
  p.lo = 1e-5, p.hi = 1.0;
  return p;
}

RandomParam dropout() {
  RandomParam p;
  p.key = "model.dropout";
  p.dist = Distribution::uniform;
  p.lo = 0.0, p.hi = 0.6;
  return p;
}

RandomParam attention() {
  RandomParam p;
  p.key = "model.attention";
  p.dist = Distribution::choice;
  for (const char* a : {"dot", "general", "concat", "local-p"}) p.choices.push_back({a, a});
  return p;
}

double value_of(const std::vector<Assignment>& values, const std::string& key) {
  for (const auto& a : values)
    if (a.key == key) return std::stod(a.value.yaml);
  return std::nan("");
}

std::vector<Assignment> trial(double lr, const std::string& att) {
  return {{"optim.lr", number_value(lr)}, {"model.attention", {att, att}}};
}

TrialResult result(TrialStatus status, std::optional<double> ppl, int64_t steps = 0) {
  TrialResult r;
  r.status = status;
  r.valid_ppl = ppl;
  r.steps = steps;
  return r;
}

TEST(TpeSampler, TheBestQuarterIsBelow) {
  EXPECT_EQ(tpe_below_count(1), 1u);
  EXPECT_EQ(tpe_below_count(4), 1u);
  EXPECT_EQ(tpe_below_count(5), 2u);
  EXPECT_EQ(tpe_below_count(8), 2u);
  EXPECT_EQ(tpe_below_count(9), 3u);
}

TEST(TpeSampler, LearnsFromFinishedTrialsThenPrunedOnesByHowFarTheyGot) {
  SweepSpec spec;
  spec.metric = "valid_ppl", spec.mode = "min";
  spec.prune.enabled = true, spec.prune.metric = "valid_ppl", spec.prune.mode = "min";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<TrialResult> results = {
      result(TrialStatus::ok, 30.0),            // 0
      result(TrialStatus::pruned, 40.0, 100),   // 1
      result(TrialStatus::failed, 5.0),         // 2: left out, whatever it measured
      result(TrialStatus::ok, nan),             // 3: a diverged trial, after every finite one
      result(TrialStatus::ok, 20.0),            // 4
      result(TrialStatus::waiting, 35.0, 300),  // 5: further than 1, so before it
      result(TrialStatus::running, 1.0),        // 6: left out
      result(TrialStatus::pending, {}),         // 7: left out
      result(TrialStatus::interrupted, 2.0),    // 8: left out
      result(TrialStatus::pruned, 38.0, 100),   // 9: as far as 1, and better
      result(TrialStatus::ok, 20.0),            // 10: tied with 4, after it
      result(TrialStatus::ok, {}),              // 11: finished without the metric: left out
  };
  EXPECT_EQ(tpe_ranking(results, spec), (std::vector<size_t>{4, 10, 0, 3, 5, 9, 1}));
  // Trials still training come last, as if they were the worst, in the order given.
  EXPECT_EQ(tpe_ranking(results, spec, {7, 6}), (std::vector<size_t>{4, 10, 0, 3, 5, 9, 1, 7, 6}));
  spec.mode = "max";  // the finished ones the other way round (the NaN still last)
  EXPECT_EQ(tpe_ranking(results, spec), (std::vector<size_t>{0, 4, 10, 3, 5, 9, 1}));
  // With fewer results than a model needs the draw is random: nothing is said about the running ones.
  const std::vector<TrialResult> one = {result(TrialStatus::ok, 30.0), result(TrialStatus::running, {})};
  EXPECT_EQ(tpe_ranking(one, spec, {1}), (std::vector<size_t>{0}));
}

TEST(TpeSampler, DrawsFollowTheBestTrialsValues) {
  // The best three of twelve trials had a learning rate near 1e-3 and dot attention; the others are spread out.
  std::vector<std::vector<Assignment>> ranked = {trial(0.0011, "dot"), trial(0.0009, "dot"), trial(0.001, "dot")};
  const double spread[] = {1e-5, 3e-5, 1e-4, 0.01, 0.03, 0.1, 0.3, 0.9, 2e-5};
  const char* others[] = {"general", "concat", "local-p"};
  for (int k = 0; k < 9; ++k) ranked.push_back(trial(spread[k], others[k % 3]));
  const std::vector<RandomParam> params = {log_lr(), attention()};
  int near = 0, dot = 0;
  const int draws = 200;
  for (int d = 0; d < draws; ++d) {
    const auto v = tpe_draw(params, ranked, 7, static_cast<uint64_t>(d));
    ASSERT_EQ(v.size(), 2u);
    const double lr = value_of(v, "optim.lr");
    ASSERT_TRUE(lr >= 1e-5 && lr <= 1.0) << lr;
    near += lr > 3e-4 && lr < 3e-3;
    dot += v[1].value.yaml == "dot";
  }
  // At random a tenth of the log range (0.1) and a quarter of the draws (0.25) would be there.
  EXPECT_GT(near, draws * 7 / 10) << near;
  EXPECT_GT(dot, draws * 8 / 10) << dot;
  // The same results, seed and draw give the same values; another draw index others.
  EXPECT_EQ(tpe_draw(params, ranked, 7, 3)[0].value.yaml, tpe_draw(params, ranked, 7, 3)[0].value.yaml);
  EXPECT_NE(tpe_draw(params, ranked, 7, 3)[0].value.yaml, tpe_draw(params, ranked, 7, 4)[0].value.yaml);
}

TEST(TpeSampler, RunningTrialsCountedAsTheWorstKeepTheNextDrawAwayFromThem) {
  std::vector<std::vector<Assignment>> ranked = {trial(0.0011, "dot"), trial(0.0009, "dot")};
  for (double lr : {1e-5, 1e-4, 0.01, 0.1, 0.5, 3e-5}) ranked.push_back(trial(lr, "general"));
  // Three trials running at 1e-3 (drawn moments ago from the same results) join the rest, at the end.
  std::vector<std::vector<Assignment>> with_running = ranked;
  for (int k = 0; k < 3; ++k) with_running.push_back(trial(0.001, "dot"));
  const std::vector<RandomParam> params = {log_lr()};
  double apart = 0.0, apart_with_running = 0.0;
  for (uint64_t d = 0; d < 200; ++d) {
    apart += std::abs(std::log10(value_of(tpe_draw(params, ranked, 7, d), "optim.lr")) + 3.0);
    apart_with_running += std::abs(std::log10(value_of(tpe_draw(params, with_running, 7, d), "optim.lr")) + 3.0);
  }
  EXPECT_GT(apart_with_running, 1.5 * apart) << "mean decades from 1e-3: " << apart / 200 << " without, "
                                             << apart_with_running / 200 << " with the running trials";
}

TEST(TpeSampler, WithTooFewResultsItDrawsAtRandom) {
  const std::vector<RandomParam> params = {log_lr(), attention()};
  const std::vector<std::vector<Assignment>> one = {trial(0.001, "dot")};
  int dot = 0;
  for (int d = 0; d < 200; ++d) dot += tpe_draw(params, one, 7, static_cast<uint64_t>(d))[1].value.yaml == "dot";
  EXPECT_GT(dot, 25);  // about a quarter: not drawn towards the one result
  EXPECT_LT(dot, 80);
}

// A known function of a log learning rate and a dropout, minimal at 1e-3 and 0.25 (0 there), searched with 30 trials
// by random search and by TPE (its first 10 the same random ones), over 20 seeds.
double objective(const std::vector<Assignment>& v) {
  const double x = std::log10(value_of(v, "optim.lr")) + 3.0, y = value_of(v, "model.dropout") - 0.25;
  return x * x + 40.0 * y * y;
}

TEST(TpeSampler, FindsABetterOptimumThanRandomSearchOnAKnownFunction) {
  SweepSpec spec;
  spec.random_params = {log_lr(), dropout()};
  spec.random_samples = 30;
  double random_sum = 0.0, tpe_sum = 0.0;
  int tpe_better = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    spec.random_seed = seed;
    const auto random = sample_random(spec);
    double random_best = std::numeric_limits<double>::infinity();
    for (const auto& v : random) random_best = std::min(random_best, objective(v));
    std::vector<std::vector<Assignment>> tried(random.begin(), random.begin() + 10);
    for (uint64_t d = 10; d < 30; ++d) {
      std::vector<std::vector<Assignment>> ranked = tried;
      std::stable_sort(ranked.begin(), ranked.end(),
                       [](const auto& a, const auto& b) { return objective(a) < objective(b); });
      tried.push_back(tpe_draw(spec.random_params, ranked, seed, d));
    }
    double tpe_best = std::numeric_limits<double>::infinity();
    for (const auto& v : tried) tpe_best = std::min(tpe_best, objective(v));
    random_sum += random_best, tpe_sum += tpe_best;
    tpe_better += tpe_best < random_best;
  }
  EXPECT_LT(tpe_sum, random_sum / 2) << "mean best: TPE " << tpe_sum / 20 << ", random " << random_sum / 20;
  EXPECT_GE(tpe_better, 14) << "TPE better on " << tpe_better << " of 20 seeds";
}

}  // namespace
}  // namespace luong::sweep
