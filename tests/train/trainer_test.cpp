// The generic trainer on a small regression task: it learns, skips non-finite steps, stops after too many,
// stops early, and averages by tokens.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "framework/dist/process_group.h"
#include "framework/ops/ops.h"
#include "framework/train/trainer.h"
#include "tests/support/gradcheck.h"
#include "tests/support/run_luong.h"

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
  ValidationResult validate() override {
    NoGradGuard ng;
    Variable d = sub(matmul(x_, w_), y_);
    ValidationResult r{sum(mul(d, d)).data().item(), 32, {}};
    if (valid_override_ > 0) r.loss_sum = valid_override_ * 32;
    return r;
  }
  bool has_validation() const override { return true; }
  int64_t epoch() const override { return epoch_; }
  int64_t batches_per_epoch() const override { return 4; }
  void save_state(StateDict& out) const override { out.tensors["w"] = w_.data(); }
  void load_state(const StateDict& in, const std::string&) override { w_.data().copy_(in.tensors.at("w")); }

  Variable w_;
  double valid_override_ = 0;  // constant validation loss (to trigger early stopping)
  int64_t calls_ = 0;

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
  const double before = task.validate().loss_sum;
  Trainer t(task, *s.sgd, *s.schedule, *s.group, quiet(200));
  const TrainSummary r = t.run();
  EXPECT_EQ(r.steps, 200);
  EXPECT_LT(task.validate().loss_sum, before * 1e-4);
  EXPECT_EQ(r.epochs_completed, 49);  // 4 batches per epoch
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

TEST(Trainer, NeedsAStepOrEpochLimit) {
  Fixture s;
  RegressionTask task;
  TrainerOptions o = quiet(0);
  EXPECT_THROW(Trainer(task, *s.sgd, *s.schedule, *s.group, o), Error);
}

}  // namespace
}  // namespace luong::testing
