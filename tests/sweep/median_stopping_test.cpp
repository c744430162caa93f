// The median stopping rule of `prune:` on hand-made validation curves: when it stops a trial, at which step,
// against which median, and every case where it must leave the trial alone.
#include "framework/sweep/median_stopping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace luong::sweep {
namespace {

PruneRule rule(const std::string& mode = "min", int64_t min_trials = 3, int64_t min_validations = 1) {
  PruneRule r;
  r.enabled = true;
  r.metric = mode == "min" ? "valid_ppl" : "valid_bleu";
  r.mode = mode;
  r.min_trials = min_trials;
  r.min_validations = min_validations;
  return r;
}

// Three finished perplexity curves: best values by step 10 are 20, 30, 40 (median 30); by step 20, 15, 25, 35.
const std::vector<ValidCurve> kFinished = {
    {{10, 20.0}, {20, 15.0}, {30, 12.0}}, {{10, 30.0}, {20, 25.0}, {30, 22.0}}, {{10, 40.0}, {20, 35.0}, {30, 32.0}}};

TEST(MedianStopping, StopsATrialWorseThanTheMedianAtItsLastValidation) {
  const auto v = median_stopping({{10, 31.0}}, kFinished, rule());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->step, 10);
  EXPECT_DOUBLE_EQ(v->value, 31.0);
  EXPECT_DOUBLE_EQ(v->median, 30.0);
  EXPECT_EQ(v->compared, 3u);
  EXPECT_EQ(describe(*v, rule()),
            "pruned at step 10: best valid_ppl 31 is worse than 30, the median of 3 finished trial(s) by that step");
  // At step 20 the median is 25: 26 is behind it, 25 (equal) and 24 are not.
  EXPECT_TRUE(median_stopping({{10, 29.0}, {20, 26.0}}, kFinished, rule()).has_value());
  EXPECT_FALSE(median_stopping({{10, 29.0}, {20, 25.0}}, kFinished, rule()).has_value());
  EXPECT_FALSE(median_stopping({{10, 29.0}, {20, 24.0}}, kFinished, rule()).has_value());
}

TEST(MedianStopping, ComparesTheTrialsBestValueNotItsLast) {
  // Its last validation (33) is behind the median at step 20 (25), but it reached 24 at step 10.
  EXPECT_FALSE(median_stopping({{10, 24.0}, {20, 33.0}}, kFinished, rule()).has_value());
}

TEST(MedianStopping, FinishedTrialsCountOnlyWhatTheyHadReachedByTheStep) {
  // By step 10 the finished trials had 20, 30, 40, whatever they reached later (12, 22, 32: median 22).
  EXPECT_TRUE(median_stopping({{10, 31.0}}, kFinished, rule()).has_value());
  // A finished trial that stopped before step 30 (its last record at 20) is not compared there: two are left.
  std::vector<ValidCurve> finished = kFinished;
  finished[0].pop_back();
  EXPECT_FALSE(median_stopping({{10, 45.0}, {20, 45.0}, {30, 40.0}}, finished, rule()).has_value());
  EXPECT_TRUE(median_stopping({{10, 45.0}, {20, 45.0}, {30, 40.0}}, finished, rule("min", 2)).has_value());
  // One that first validated after the step has nothing to compare there.
  EXPECT_FALSE(median_stopping({{5, 99.0}}, kFinished, rule()).has_value());
}

TEST(MedianStopping, WaitsForEnoughValidationsAndEnoughFinishedTrials) {
  EXPECT_FALSE(median_stopping({{10, 99.0}}, kFinished, rule("min", 3, 2)).has_value());
  EXPECT_TRUE(median_stopping({{10, 99.0}, {20, 99.0}}, kFinished, rule("min", 3, 2)).has_value());
  EXPECT_FALSE(median_stopping({{10, 99.0}}, kFinished, rule("min", 4)).has_value());
  EXPECT_FALSE(median_stopping({{10, 99.0}}, {}, rule("min", 1)).has_value());
  EXPECT_FALSE(median_stopping({}, kFinished, rule()).has_value());
  PruneRule off = rule();
  off.enabled = false;
  EXPECT_FALSE(median_stopping({{10, 99.0}}, kFinished, off).has_value());
}

TEST(MedianStopping, EvenCountsTakeTheMeanOfTheMiddleTwo) {
  std::vector<ValidCurve> finished = kFinished;
  finished.push_back({{10, 50.0}});  // by step 10: 20, 30, 40, 50: median 35
  EXPECT_FALSE(median_stopping({{10, 35.0}}, finished, rule()).has_value());
  const auto v = median_stopping({{10, 35.5}}, finished, rule());
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(v->median, 35.0);
  EXPECT_EQ(v->compared, 4u);
}

TEST(MedianStopping, HigherIsBetterInMaxMode) {
  const std::vector<ValidCurve> bleu = {{{10, 5.0}}, {{10, 10.0}}, {{10, 15.0}}};
  const auto v = median_stopping({{10, 9.0}}, bleu, rule("max"));
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(v->value, 9.0);
  EXPECT_DOUBLE_EQ(v->median, 10.0);
  EXPECT_FALSE(median_stopping({{10, 11.0}}, bleu, rule("max")).has_value());
  // Its best (12 at step 5... counted at the last step, 10) keeps it.
  EXPECT_FALSE(median_stopping({{5, 12.0}, {10, 1.0}}, bleu, rule("max")).has_value());
}

TEST(MedianStopping, ADivergedTrialIsBehindAndADivergedMedianStopsNothing) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(median_stopping({{10, nan}}, kFinished, rule()).has_value());
  EXPECT_TRUE(median_stopping({{10, inf}}, kFinished, rule()).has_value());
  const std::vector<ValidCurve> diverged = {{{10, inf}}, {{10, nan}}, {{10, 5.0}}};
  EXPECT_FALSE(median_stopping({{10, inf}}, diverged, rule()).has_value());
  EXPECT_FALSE(median_stopping({{10, 1e9}}, diverged, rule()).has_value());
}

}  // namespace
}  // namespace luong::sweep
