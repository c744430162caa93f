// Successive halving (`prune: {rule: asha}`) on hand-made rungs: the steps a trial trains to, which waiting trial of
// a rung goes on, and when none does.
#include "framework/sweep/successive_halving.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace luong::sweep {
namespace {

HalvingRule rule(int64_t min_steps, int64_t reduction) {
  HalvingRule r;
  r.min_steps = min_steps;
  r.reduction = reduction;
  return r;
}

TEST(SuccessiveHalving, RungsGrowByTheReductionUpToTheTrialsLimit) {
  EXPECT_EQ(rung_steps(rule(10, 2), 80), (std::vector<int64_t>{10, 20, 40, 80}));
  EXPECT_EQ(rung_steps(rule(10, 3), 100), (std::vector<int64_t>{10, 30, 90, 100}));
  EXPECT_EQ(rung_steps(rule(10, 3), 91), (std::vector<int64_t>{10, 30, 90, 91}));
  EXPECT_EQ(rung_steps(rule(10, 3), 90), (std::vector<int64_t>{10, 30, 90}));
  // A limit not above the first rung is the only rung.
  EXPECT_EQ(rung_steps(rule(10, 3), 10), (std::vector<int64_t>{10}));
  EXPECT_EQ(rung_steps(rule(10, 3), 4), (std::vector<int64_t>{4}));
  // Near the top of int64: no overflow on the way.
  const int64_t big = std::numeric_limits<int64_t>::max();
  const auto r = rung_steps(rule(big / 4, 3), big);
  EXPECT_EQ(r, (std::vector<int64_t>{big / 4, 3 * (big / 4), big}));
}

TEST(SuccessiveHalving, TheBestWaitingTrialOfTheTopFractionGoesOn) {
  // Five trials at a rung, reduction 2: the top two (by perplexity: trials 3 and 0) may go on.
  std::vector<RungEntry> rung = {{0, 12.0, true}, {1, 20.0, true}, {2, 15.0, true}, {3, 9.0, true}, {4, 30.0, true}};
  EXPECT_EQ(promotion(rung, rule(10, 2), "min"), 3u);
  rung[3].waiting = false;  // it went on: the next of the top two
  EXPECT_EQ(promotion(rung, rule(10, 2), "min"), 0u);
  rung[0].waiting = false;  // both went on: trial 2 (third) is not in the top two
  EXPECT_EQ(promotion(rung, rule(10, 2), "min"), std::nullopt);
  // With reduction 3, only the best of the five.
  rung[3].waiting = true;
  EXPECT_EQ(promotion(rung, rule(10, 3), "min"), 3u);
  // A score is better higher: the top two are trials 4 and 1.
  rung[3].waiting = rung[0].waiting = true;
  EXPECT_EQ(promotion(rung, rule(10, 2), "max"), 4u);
  EXPECT_EQ(rank_in_rung(rung, 4, "max"), 1u);
  EXPECT_EQ(rank_in_rung(rung, 3, "max"), 5u);
  EXPECT_EQ(rank_in_rung(rung, 2, "min"), 3u);
}

TEST(SuccessiveHalving, ARungSmallerThanTheReductionPromotesNone) {
  EXPECT_EQ(promotion({}, rule(10, 2), "min"), std::nullopt);
  EXPECT_EQ(promotion({{0, 5.0, true}}, rule(10, 2), "min"), std::nullopt);
  EXPECT_EQ(promotion({{0, 5.0, true}, {1, 6.0, true}}, rule(10, 3), "min"), std::nullopt);
  EXPECT_EQ(promotion({{0, 5.0, true}, {1, 6.0, true}, {2, 7.0, true}}, rule(10, 3), "min"), 0u);
}

TEST(SuccessiveHalving, TiesGoToTheEarlierTrialAndNanIsTheWorst) {
  EXPECT_EQ(promotion({{4, 7.0, true}, {2, 7.0, true}}, rule(10, 2), "min"), 2u);
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(promotion({{0, nan, true}, {1, 1e9, true}}, rule(10, 2), "min"), 1u);
  EXPECT_EQ(promotion({{0, nan, true}, {1, -5.0, true}}, rule(10, 2), "max"), 1u);
  // A diverged perplexity (infinite) is worse than any finite one; an infinite score is not a good score.
  EXPECT_EQ(promotion({{0, inf, true}, {1, 1e9, true}}, rule(10, 2), "min"), 1u);
  EXPECT_EQ(promotion({{0, inf, true}, {1, 0.5, true}}, rule(10, 2), "max"), 1u);
}

// A validation curve written out (step, value).
ValidCurve curve(std::vector<std::pair<int64_t, double>> points) { return points; }

// The schedule of four trials, rungs 10, 20, 40 (reduction 2), driven as the runner drives it with one trial at a
// time: which trial runs next, how far, and which wait.
TEST(HalvingSchedule, PromotesFromTheHighestRungFirstThenStartsNewTrials) {
  HalvingSchedule h(rule(10, 2), "min", 4);
  for (size_t i = 0; i < 4; ++i) h.set_max_steps(i, 40);
  EXPECT_EQ(h.rung_text(0, 20), "rung 2 of 3");
  EXPECT_EQ(h.due(), std::nullopt);
  EXPECT_EQ(h.start(0), 10);
  EXPECT_TRUE(h.reached_target(0, curve({{10, 30.0}})));
  EXPECT_TRUE(h.waiting(0));
  EXPECT_EQ(h.due(), std::nullopt);  // one trial at the rung: its top half is empty
  EXPECT_EQ(h.start(1), 10);
  EXPECT_TRUE(h.reached_target(1, curve({{10, 20.0}})));
  EXPECT_EQ(h.due(), 1u);  // the better of two
  EXPECT_EQ(h.start(1), 20);
  EXPECT_FALSE(h.waiting(1));
  EXPECT_EQ(h.reached(1), 10);
  EXPECT_TRUE(h.reached_target(1, curve({{10, 20.0}, {20, 15.0}})));
  EXPECT_EQ(h.due(), std::nullopt);  // trial 0 is not in the top half at 10 (trial 1 is), trial 1 alone at 20
  EXPECT_EQ(h.start(2), 10);
  EXPECT_TRUE(h.reached_target(2, curve({{10, 25.0}})));
  EXPECT_EQ(h.due(), std::nullopt);  // top 1 of 3 at 10 is trial 1, gone on
  EXPECT_EQ(h.start(3), 10);
  EXPECT_TRUE(h.reached_target(3, curve({{10, 5.0}})));
  // Rung 20 (looked at first) holds trial 1 alone: none goes on. At rung 10, 2 of 4 go on: trial 1 went, and trial 3,
  // the best there, is due.
  EXPECT_EQ(h.due(), 3u);
  EXPECT_EQ(h.start(3), 20);
  EXPECT_TRUE(h.reached_target(3, curve({{10, 5.0}, {20, 4.0}})));
  EXPECT_EQ(h.due(), 3u);  // two at 20 now: the better one goes on to 40, the last rung
  EXPECT_EQ(h.start(3), 40);
  EXPECT_FALSE(h.reached_target(3, curve({{10, 5.0}, {20, 4.0}, {40, 3.0}})));  // its limit: finished
  EXPECT_FALSE(h.waiting(3));
  EXPECT_EQ(h.due(), std::nullopt);
  // Someone passed rung 20 (trial 3): nothing more.
  EXPECT_EQ(h.last_chance(), std::nullopt);
  EXPECT_EQ(h.why_pruned(1, "valid_ppl"),
            "stopped at step 20 (rung 2 of 3): best valid_ppl 15 ranked 2 of the 2 trials that reached that step, and "
            "1 went on");
  EXPECT_EQ(h.why_pruned(0, "valid_ppl"),
            "stopped at step 10 (rung 1 of 3): best valid_ppl 30 ranked 4 of the 4 trials that reached that step, and "
            "2 went on");
}

TEST(HalvingSchedule, WhenNothingElseCanRunTheBestAtTheHighestRungGoesOn) {
  HalvingSchedule h(rule(10, 3), "max", 2);  // scores: higher is better
  h.set_max_steps(0, 90);
  h.set_max_steps(1, 90);
  h.start(0);
  h.reached_target(0, curve({{10, 5.0}}));
  h.start(1);
  h.reached_target(1, curve({{10, 7.0}}));
  EXPECT_EQ(h.due(), std::nullopt);  // two trials, reduction 3: no one is in the top third
  EXPECT_EQ(h.last_chance(), 1u);
  EXPECT_EQ(h.start(1), 30);
  h.reached_target(1, curve({{10, 7.0}, {30, 8.0}}));
  EXPECT_EQ(h.last_chance(), 1u);  // the highest rung with someone waiting is 30 now
  EXPECT_EQ(h.start(1), 90);
  EXPECT_FALSE(h.reached_target(1, curve({{10, 7.0}, {30, 8.0}, {90, 9.0}})));
  EXPECT_EQ(h.last_chance(), std::nullopt);  // trial 1 passed rung 10: trial 0 stays
  EXPECT_TRUE(h.waiting(0));
}

TEST(HalvingSchedule, AFailedTrialLeavesTheRungs) {
  HalvingSchedule h(rule(10, 2), "min", 3);
  for (size_t i = 0; i < 3; ++i) h.set_max_steps(i, 20);
  for (size_t i = 0; i < 2; ++i) {
    h.start(i);
    h.reached_target(i, curve({{10, 10.0 + static_cast<double>(i)}}));
  }
  EXPECT_EQ(h.due(), 0u);
  h.start(0);
  h.failed(0);  // its run to 20 failed
  h.start(2);
  h.reached_target(2, curve({{10, 50.0}}));
  // Trials 1 and 2 at rung 10: the top one of two is trial 1.
  EXPECT_EQ(h.due(), 1u);
}

TEST(HalvingSchedule, RestoresWhereAnEarlierSweepLeftATrial) {
  HalvingSchedule h(rule(10, 2), "min", 4);
  for (size_t i = 0; i < 4; ++i) h.set_max_steps(i, 40);
  h.restore(0, 20, true, curve({{10, 9.0}, {20, 8.0}}));  // waiting at 20
  EXPECT_TRUE(h.waiting(0));
  EXPECT_EQ(h.reached(0), 20);
  h.restore(1, 20, false, curve({{10, 12.0}}));  // stopped on its way from 10 to 20: it finishes that run first
  EXPECT_FALSE(h.waiting(1));
  EXPECT_EQ(h.reached(1), 10);
  EXPECT_EQ(h.start(1), 20);
  h.restore(2, 15, true, curve({{10, 11.0}, {15, 10.5}}));  // not a rung of this spec (min_steps changed)
  EXPECT_FALSE(h.waiting(2));
  EXPECT_EQ(h.reached(2), 10);
  EXPECT_EQ(h.start(2), 20);
  h.restore(3, 0, false, {});  // never started
  EXPECT_EQ(h.start(3), 10);
}

}  // namespace
}  // namespace luong::sweep
