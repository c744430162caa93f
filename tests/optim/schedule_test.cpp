#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "framework/optim/schedule.h"
#include "tests/support/error_of.h"

namespace luong {
namespace {

std::vector<double> lrs_by_epoch(const Schedule& s, int64_t epochs) {
  std::vector<double> out;
  for (int64_t e = 1; e <= epochs; ++e) out.push_back(s.lr(100 * e, e));
  return out;
}

using luong::testing::error_of;

TEST(Schedule, ConstantIsBaseLrAlways) {
  ScheduleOptions o;
  o.base_lr = 0.3;
  auto s = make_schedule("constant", o);
  for (int64_t step : {1, 10, 100000}) EXPECT_EQ(s->lr(step, step / 10 + 1), 0.3);
}

TEST(Schedule, LuongHalvesEveryEpochAfterK) {
  // The paper's 10-epoch run: 1.0 for 5 epochs, then halved each epoch.
  auto s = make_schedule("luong");
  EXPECT_EQ(lrs_by_epoch(*s, 10), (std::vector<double>{1, 1, 1, 1, 1, 0.5, 0.25, 0.125, 0.0625, 0.03125}));
  // The 12-epoch dropout run: decay after 8.
  ScheduleOptions o;
  o.decay_start = 8;
  auto s12 = make_schedule("luong", o);
  EXPECT_EQ(lrs_by_epoch(*s12, 12), (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.25, 0.125, 0.0625}));
  // Other base and factor; the lr does not depend on the step within an epoch.
  o.base_lr = 0.8;
  o.decay_start = 1;
  o.decay_factor = 0.25;
  auto s2 = make_schedule("luong", o);
  EXPECT_DOUBLE_EQ(s2->lr(1, 3), 0.8 / 16);
  EXPECT_EQ(s2->lr(1, 3), s2->lr(999, 3));
}

TEST(Schedule, PlateauDecaysAfterPatienceAndResetsOnImprovement) {
  ScheduleOptions o;
  o.base_lr = 1.0;
  o.plateau_patience = 2;
  o.min_lr = 0.2;
  auto s = make_schedule("plateau", o);
  // ppl sequence -> lr after each validation
  const std::vector<std::pair<double, double>> seq = {
      {10, 1.0},   // first is the best
      {9, 1.0},    // improvement
      {9.5, 1.0},  // bad 1
      {9.2, 0.5},  // bad 2 = patience: decay, count reset
      {9.1, 0.5},  // bad 1 (still worse than 9)
      {8, 0.5},    // improvement resets the count
      {8.5, 0.5},  // bad 1
      {7, 0.5},    // improvement
      {7.5, 0.5},  // bad 1
      {7.6, 0.25}, // bad 2: decay
      {7.6, 0.25}, {7.6, 0.2},  // decays stop at min_lr
      {7.6, 0.2}, {7.6, 0.2}};
  for (size_t i = 0; i < seq.size(); ++i) {
    s->on_validation(seq[i].first);
    EXPECT_DOUBLE_EQ(s->lr(1, 1), seq[i].second) << "after validation " << i;
  }
}

TEST(Schedule, PlateauStateResumesExactly) {
  ScheduleOptions o;
  o.plateau_patience = 3;
  const std::vector<double> ppl = {20, 18, 19, 19, 18.5, 21, 17, 17.5, 18, 18, 18, 18, 16, 16.5};
  auto straight = make_schedule("plateau", o);
  std::vector<double> expected;
  for (double p : ppl) straight->on_validation(p), expected.push_back(straight->lr(1, 1));

  auto first = make_schedule("plateau", o);
  for (size_t i = 0; i < 4; ++i) first->on_validation(ppl[i]);  // mid-count: best 18, bad 2
  StateDict sd;
  first->state(sd);
  EXPECT_EQ(sd.ints.at("bad_count"), 2);
  EXPECT_EQ(sd.floats.at("best_ppl"), 18);
  auto resumed = make_schedule("plateau", o);
  resumed->load_state(sd);
  for (size_t i = 4; i < ppl.size(); ++i) {
    resumed->on_validation(ppl[i]);
    EXPECT_EQ(resumed->lr(1, 1), expected[i]) << "validation " << i;
  }
  EXPECT_LT(expected.back(), 1.0);  // the sequence does decay
}

TEST(Schedule, WarmupRisesLinearlyThenDecaysAsInverseSqrt) {
  ScheduleOptions o;
  o.base_lr = 2.0;
  o.warmup_steps = 4;
  auto s = make_schedule("warmup", o);
  EXPECT_DOUBLE_EQ(s->lr(1, 1), 0.5);
  EXPECT_DOUBLE_EQ(s->lr(2, 1), 1.0);
  EXPECT_DOUBLE_EQ(s->lr(4, 1), 2.0);   // the peak
  EXPECT_DOUBLE_EQ(s->lr(16, 1), 1.0);  // sqrt(4 / 16)
  EXPECT_DOUBLE_EQ(s->lr(64, 2), 0.5);
  double best = 0;
  int64_t argbest = 0;
  for (int64_t t = 1; t <= 100; ++t)
    if (s->lr(t, 1) > best) best = s->lr(t, 1), argbest = t;
  EXPECT_EQ(argbest, 4);
}

TEST(Schedule, WarmupEqualsVaswaniFormula) {
  // lrate = d_model^-0.5 min(step^-0.5, step warmup^-1.5), with base_lr its peak d_model^-0.5 warmup^-0.5.
  const double d_model = 512, warmup = 4000;
  ScheduleOptions o;
  o.base_lr = 1.0 / std::sqrt(d_model * warmup);
  o.warmup_steps = 4000;
  auto s = make_schedule("warmup", o);
  for (double step : {1.0, 100.0, 3999.0, 4000.0, 4001.0, 20000.0, 1e6}) {
    const double ref = std::pow(d_model, -0.5) * std::min(std::pow(step, -0.5), step * std::pow(warmup, -1.5));
    EXPECT_NEAR(s->lr(static_cast<int64_t>(step), 1), ref, 1e-12 * ref) << "step " << step;
  }
}

TEST(Schedule, StateChecksTheScheduleName) {
  StateDict sd;
  make_schedule("luong")->state(sd);
  EXPECT_EQ(sd.strings.at("name"), "luong");
  EXPECT_NO_THROW(make_schedule("luong")->load_state(sd));
  const std::string msg = error_of([&] { make_schedule("warmup")->load_state(sd); });
  EXPECT_NE(msg.find("'luong'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'warmup'"), std::string::npos) << msg;
  StateDict plateau_sd;
  make_schedule("plateau")->state(plateau_sd);
  plateau_sd.ints.erase("bad_count");
  EXPECT_NE(error_of([&] { make_schedule("plateau")->load_state(plateau_sd); }).find("'bad_count'"),
            std::string::npos);
}

TEST(Schedule, RegistryListsAllAndNamesThemOnError) {
  EXPECT_EQ(ScheduleRegistry::instance().names(), (std::vector<std::string>{"constant", "luong", "plateau", "warmup"}));
  for (const auto& n : ScheduleRegistry::instance().names()) EXPECT_EQ(make_schedule(n)->name(), n);
  const std::string msg = error_of([] { make_schedule("cosine"); });
  EXPECT_NE(msg.find("unknown schedule 'cosine'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("constant, luong, plateau, warmup"), std::string::npos) << msg;
}

TEST(Schedule, RejectsBadOptions) {
  ScheduleOptions o;
  o.decay_factor = 1.5;
  EXPECT_NE(error_of([&] { make_schedule("luong", o); }).find("decay_factor"), std::string::npos);
  o = {};
  o.warmup_steps = 0;
  EXPECT_NE(error_of([&] { make_schedule("warmup", o); }).find("warmup_steps"), std::string::npos);
  o = {};
  o.plateau_patience = 0;
  EXPECT_NE(error_of([&] { make_schedule("plateau", o); }).find("plateau_patience"), std::string::npos);
  o = {};
  o.base_lr = 0;
  EXPECT_NE(error_of([&] { make_schedule("constant", o); }).find("base_lr"), std::string::npos);
}

}  // namespace
}  // namespace luong
