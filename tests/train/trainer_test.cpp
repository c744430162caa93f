// The generic trainer on a small regression task: it learns, skips non-finite steps, stops after too many,
// stops early, and averages by tokens.
#include "framework/train/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "framework/dist/process_group.h"
#include "framework/io/checkpoint.h"
#include "framework/io/checkpoint_dir.h"
#include "framework/ops/ops.h"
#include "tests/support/gradcheck.h"
#include "tests/support/run_luong.h"
#include "tests/support/temp_dir.h"

namespace luong::testing {
namespace {

// Fits y = x . w_true with squared error; "tokens" are examples. poison_steps make the loss NaN.
class RegressionTask : public TrainTask {
 public:
  explicit RegressionTask(std::set<int64_t> poison_steps = {}) : poison_(std::move(poison_steps)) {
    Generator g(3);
    w_ = random_leaf(g, {4, 1}, -0.1, 0.1);
    flat_ = std::make_unique<FlatParameters>(std::vector<Variable>{w_}, Device::cpu());
    x_ = random_leaf(g, {32, 4}, -1, 1, false);
    Variable w_true(Tensor::from({1, -2, 0.5, 3}, {4, 1}, DType::f64));
    NoGradGuard ng;
    y_ = matmul(x_, w_true).detach();
  }
  FlatParameters& parameters() override { return *flat_; }
  bool next_batch() override {
    if (index_ == 4) {
      index_ = 0;
      ++epoch_;
      return false;
    }
    ++index_;
    return true;
  }
  StepResult forward_backward(int /*part*/) override {
    ++calls_;
    Variable xb = slice(x_, 0, (index_ - 1) * 8, 8), yb = slice(y_, 0, (index_ - 1) * 8, 8);
    Variable d = sub(matmul(xb, w_), yb);
    Variable loss = sum(mul(d, d));
    if (poison_.count(calls_)) loss = mul_scalar(loss, std::numeric_limits<double>::quiet_NaN());
    loss.backward();
    return {loss.data().item(), 8, 8};
  }
  ValidationResult validate(const std::function<bool()>& /*stop*/) override {
    validated_w_.push_back(w_.data().to_vector());
    NoGradGuard ng;
    Variable d = sub(matmul(x_, w_), y_);
    ValidationResult r{sum(mul(d, d)).data().item(), 32, {}};
    if (valid_override_ > 0) r.loss_sum = valid_override_ * 32;
    if (!scores_.empty()) r.extra["valid_score"] = scores_.at(validations_++);
    return r;
  }
  bool has_validation() const override { return true; }
  int64_t epoch() const override { return epoch_; }
  int64_t batches_per_epoch() const override { return 4; }
  void save_state(StateDict& out) const override {
    out.tensors["w"] = w_.data();
    out.ints["index"] = index_, out.ints["epoch"] = epoch_;  // the data position, for an exact resume
  }
  void load_state(const StateDict& in, const std::string&) override {
    w_.data().copy_(in.tensors.at("w"));
    index_ = in.ints.at("index"), epoch_ = in.ints.at("epoch");
  }

  Variable w_;
  double valid_override_ = 0;  // constant validation loss (to trigger early stopping)
  std::vector<double> scores_;  // "valid_score" of each validation in turn (none when empty)
  size_t validations_ = 0;
  int64_t calls_ = 0;
  std::vector<std::vector<double>> validated_w_;  // the weights each validation saw

 private:
  std::set<int64_t> poison_;
  std::unique_ptr<FlatParameters> flat_;
  Variable x_, y_;
  int64_t index_ = 0, epoch_ = 1;
};

struct Fixture {
  std::unique_ptr<ProcessGroup> group = make_process_group("local", Device::cpu());
  std::unique_ptr<Optimizer> sgd = make_optimizer("sgd");
  std::unique_ptr<Schedule> schedule = make_schedule("constant", ScheduleOptions{0.1});
};

TrainerOptions quiet(int64_t max_steps) {
  TrainerOptions o;
  o.max_steps = max_steps;
  o.quiet = true;
  o.log_every = 0;
  o.clip_norm = 0;
  return o;
}

TEST(Trainer, LearnsTheRegression) {
  Fixture s;
  RegressionTask task;
  const double before = task.validate({}).loss_sum;
  Trainer t(task, *s.sgd, *s.schedule, *s.group, quiet(200));
  const TrainSummary r = t.run();
  EXPECT_EQ(r.steps, 200);
  EXPECT_LT(task.validate({}).loss_sum, before * 1e-4);
  EXPECT_EQ(r.epochs_completed, 49);  // 4 batches per epoch
}

// The parameters after each of steps 1..n, each from a run of its own (a deterministic task).
std::vector<std::vector<double>> trajectory(int64_t n) {
  std::vector<std::vector<double>> out;
  for (int64_t k = 1; k <= n; ++k) {
    Fixture s;
    RegressionTask task;
    Trainer(task, *s.sgd, *s.schedule, *s.group, quiet(k)).run();
    out.push_back(task.w_.data().to_vector());
  }
  return out;
}

TEST(Trainer, WithAnAverageValidatesTheAverageAndTrainsOnTheParameters) {
  const int64_t n = 12;
  const std::vector<std::vector<double>> p = trajectory(n);
  // The recurrence of optim/weight_average.h, in double: the first update copies, the n-th moves by
  // 1 - min(decay, (1 + n) / (10 + n)).
  const double decay = 0.8;
  std::vector<std::vector<double>> expected_average;
  std::vector<double> a = p[0];
  expected_average.push_back(a);
  for (int64_t k = 1; k < n; ++k) {
    const double w = 1.0 - std::min(decay, (1.0 + static_cast<double>(k)) / (10.0 + static_cast<double>(k)));
    for (size_t i = 0; i < a.size(); ++i) a[i] += w * (p[static_cast<size_t>(k)][i] - a[i]);
    expected_average.push_back(a);
  }
  Fixture s;
  RegressionTask task;
  TrainerOptions o = quiet(n);
  o.ema_decay = decay;
  o.valid_every = 4;
  Trainer(task, *s.sgd, *s.schedule, *s.group, o).run();
  // The optimizer's trajectory is the one without an average; the validations at steps 4, 8 and 12 saw the
  // average (and not the parameters: they differ by far more than rounding).
  EXPECT_EQ(task.w_.data().to_vector(), p.back());
  ASSERT_EQ(task.validated_w_.size(), 3u);
  for (size_t v = 0; v < 3; ++v) {
    const std::vector<double>& want = expected_average[4 * v + 3];
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(task.validated_w_[v][i], want[i], 1e-14) << "validation " << v << ", weight " << i;
      EXPECT_GT(std::abs(task.validated_w_[v][i] - p[4 * v + 3][i]), 1e-6) << "validation " << v << ", weight " << i;
    }
  }
}

TEST(Trainer, AnAveragedRunsCheckpointHoldsTheAverageAndResumesExactly) {
  const double decay = 0.8;
  TempDir dir;
  auto options = [&](const std::string& run, int64_t steps, double ema_decay) {
    TrainerOptions o = quiet(steps);
    o.ema_decay = ema_decay;
    o.run_dir = dir.path(run);
    o.checkpoint_every = 3;
    o.keep_checkpoints = 0;
    o.resume = "auto";
    return o;
  };
  Fixture s;
  RegressionTask straight;
  Trainer(straight, *s.sgd, *s.schedule, *s.group, options("straight", 9, decay)).run();
  const Checkpoint end = load_checkpoint(checkpoint_path(dir.path("straight"), 9));
  // model/ ("w" here) is the average; ema/training_params the parameters, which the optimizer continues from.
  EXPECT_EQ(end.state.tensors.at("ema/training_params").to_vector(), straight.w_.data().to_vector());
  EXPECT_NE(end.state.tensors.at("w").to_vector(), straight.w_.data().to_vector());
  EXPECT_EQ(end.state.ints.at("ema/updates"), 9);
  EXPECT_EQ(end.state.tensors.at("w").to_vector(), straight.validated_w_.back());  // the final validation's

  for (int64_t stop_at : {3, 5}) {  // resumed from a checkpoint, and from a later step than the newest one
    Fixture r;
    const std::string run = "stopped" + std::to_string(stop_at);
    RegressionTask first;
    Trainer(first, *r.sgd, *r.schedule, *r.group, options(run, stop_at, decay)).run();
    RegressionTask resumed;
    Fixture r2;
    Trainer(resumed, *r2.sgd, *r2.schedule, *r2.group, options(run, 9, decay)).run();
    const Checkpoint again = load_checkpoint(checkpoint_path(dir.path(run), 9));
    EXPECT_EQ(again.state.tensors.at("w").to_vector(), end.state.tensors.at("w").to_vector()) << run;
    EXPECT_EQ(again.state.tensors.at("ema/training_params").to_vector(),
              end.state.tensors.at("ema/training_params").to_vector())
        << run;
    EXPECT_EQ(resumed.w_.data().to_vector(), straight.w_.data().to_vector()) << run;
  }

  // Resumed without an average, the run continues from the training parameters (not from the average that
  // model/ holds), as a run that never kept one.
  Fixture r3, r4;
  RegressionTask plain;
  Trainer(plain, *r3.sgd, *r3.schedule, *r3.group, quiet(12)).run();
  RegressionTask dropped;
  Trainer(dropped, *r4.sgd, *r4.schedule, *r4.group, options("straight", 12, 0.0)).run();
  EXPECT_EQ(dropped.w_.data().to_vector(), plain.w_.data().to_vector());
  const Checkpoint after = load_checkpoint(checkpoint_path(dir.path("straight"), 12));
  EXPECT_EQ(after.state.tensors.count("ema/training_params"), 0u);
  EXPECT_EQ(after.state.tensors.at("w").to_vector(), plain.w_.data().to_vector());
}

TEST(Trainer, NonFiniteLossSkipsTheUpdate) {
  Fixture s;
  RegressionTask task({3});
  TrainerOptions o = quiet(3);
  Trainer t(task, *s.sgd, *s.schedule, *s.group, o);
  std::vector<double> before_third;
  // Run 3 steps: the third is poisoned, so parameters after it equal those after step 2.
  RegressionTask reference;
  Trainer t2(reference, *s.sgd, *s.schedule, *s.group, quiet(2));
  t2.run();
  t.run();
  EXPECT_EQ(task.w_.data().to_vector(), reference.w_.data().to_vector());
}

TEST(Trainer, TooManyNonFiniteStepsStopWithAClearError) {
  Fixture s;
  RegressionTask task({2, 3, 4});
  TrainerOptions o = quiet(10);
  o.max_bad_steps = 3;
  Trainer t(task, *s.sgd, *s.schedule, *s.group, o);
  try {
    t.run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 consecutive steps had a NaN/Inf loss"), std::string::npos) << e.what();
  }
}

TEST(Trainer, EarlyStoppingAfterPatienceValidations) {
  Fixture s;
  RegressionTask task;
  task.valid_override_ = 1.0;  // never improves after the first validation
  TrainerOptions o = quiet(1000);
  o.valid_every = 5;
  o.early_stopping = 2;
  Trainer t(task, *s.sgd, *s.schedule, *s.group, o);
  const TrainSummary r = t.run();
  EXPECT_EQ(r.steps, 15);  // best at 5, no improvement at 10 and 15
  EXPECT_NE(r.stop_reason.find("early stopping"), std::string::npos);
}

// train.valid_metric: bleu in the generic trainer: a higher-is-better score from the task picks best.h5 and counts
// the patience, while the perplexity (which improves at every validation here) only gets recorded.
TEST(Trainer, AHigherIsBetterMetricPicksTheBestCheckpointAndCountsThePatience) {
  Fixture s;
  TempDir dir;
  RegressionTask task;
  task.scores_ = {1.0, 3.0, 2.0, 2.5, 2.0, 9.0};
  TrainerOptions o = quiet(1000);
  o.run_dir = dir.path("run");
  o.valid_every = 5;
  o.early_stopping = 3;
  o.valid_metric = "valid_score";
  o.valid_metric_higher_is_better = true;
  const TrainSummary r = Trainer(task, *s.sgd, *s.schedule, *s.group, o).run();
  EXPECT_EQ(r.steps, 25);  // best at 10; no improvement at 15, 20, 25
  EXPECT_NE(r.stop_reason.find("early stopping"), std::string::npos) << r.stop_reason;
  ASSERT_TRUE(r.best_valid_score.has_value());
  EXPECT_EQ(*r.best_valid_score, 3.0);
  EXPECT_EQ(r.last_valid_extra.at("valid_score"), 2.0);
  EXPECT_EQ(load_checkpoint(best_checkpoint_path(o.run_dir)).state.ints.at("trainer/step"), 10);

  // Resuming keeps the best score and the patience: the run stays stopped, and another metric is refused.
  RegressionTask again;
  again.scores_ = {100.0};
  o.resume = "auto";
  EXPECT_NE(Trainer(again, *s.sgd, *s.schedule, *s.group, o).run().stop_reason.find("already done (early stopping"),
            std::string::npos);
  RegressionTask longer;  // patience raised: one more validation (step 30), below the best, so best.h5 stays
  longer.scores_ = {2.9};
  o.early_stopping = 5;
  o.max_steps = 30;
  EXPECT_EQ(Trainer(longer, *s.sgd, *s.schedule, *s.group, o).run().steps, 30);
  EXPECT_EQ(load_checkpoint(best_checkpoint_path(o.run_dir)).state.ints.at("trainer/step"), 10);
  o.valid_metric = "valid_ppl";
  o.valid_metric_higher_is_better = false;
  try {
    Trainer(again, *s.sgd, *s.schedule, *s.group, o).run();
    FAIL() << "resumed with another validation metric";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("picks its best checkpoint by score"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("this one by ppl"), std::string::npos) << e.what();
  }
}

// The plateau schedule takes lower as better; a higher-is-better metric reaches it negated.
TEST(Trainer, APlateauScheduleDecaysWhenAHigherIsBetterMetricStopsRising) {
  Fixture s;
  RegressionTask task;
  task.scores_ = {1.0, 3.0, 2.0, 4.0};
  ScheduleOptions so;
  so.base_lr = 0.1;
  so.decay_factor = 0.5;
  const auto plateau = make_schedule("plateau", so);
  TrainerOptions o = quiet(20);
  o.valid_every = 5;
  o.valid_metric = "valid_score";
  o.valid_metric_higher_is_better = true;
  Trainer(task, *s.sgd, *plateau, *s.group, o).run();
  EXPECT_DOUBLE_EQ(plateau->lr(20, 1), 0.05);  // one decay: at the 2.0 after the 3.0
}

TEST(Trainer, NeedsAStepOrEpochLimit) {
  Fixture s;
  RegressionTask task;
  TrainerOptions o = quiet(0);
  EXPECT_THROW(Trainer(task, *s.sgd, *s.schedule, *s.group, o), Error);
}

}  // namespace
}  // namespace luong::testing
