// End to end: a linear regression built from ops, trained by each optimizer with a schedule and gradient
// clipping exactly as the training loop will do it (zero grad, backward, clip, lr from schedule, step).
#include <gtest/gtest.h>

#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"
#include "framework/optim/average_and_clip.h"
#include "framework/optim/schedule.h"
#include "tests/optim/optim_support.h"

namespace luong::testing {
namespace {

struct Result {
  double first_loss, last_loss;
};

Result fit(const std::string& optimizer, const OptimizerOptions& oo, const std::string& schedule,
           const ScheduleOptions& so, int steps) {
  Generator gen(5);
  std::vector<double> x(16 * 3);
  for (auto& v : x) v = 2.0 * gen.uniform() - 1.0;
  const std::vector<double> w_true = {1.5, -2.0, 0.5};
  std::vector<double> y(16);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 3; ++c) y[r] += x[r * 3 + c] * w_true[c];
  Variable X(Tensor::from(x, {16, 3}));  // (16, 3)
  Variable Y(Tensor::from(y, {16, 1}));  // (16, 1)
  Variable W(Tensor::zeros({3, 1}), true, "w");  // (3, 1)
  Variable b(Tensor::zeros({1}), true, "b");     // (1,)
  FlatParameters params({W, b}, Device::cpu());
  auto opt = make_optimizer(optimizer, oo);
  auto sched = make_schedule(schedule, so);
  Result res{};
  for (int t = 1; t <= steps; ++t) {
    params.zero_grad();
    Variable d = sub(add(matmul(X, W), b), Y);  // (16, 1)
    Variable loss = mul_scalar(sum(mul(d, d)), 1.0 / 16);
    const double value = loss.data().item();
    if (t == 1) res.first_loss = value;
    res.last_loss = value;
    loss.backward();
    clip_grad_norm_(params.grad(), 1.0);
    opt->step(params, sched->lr(t, 1));
  }
  EXPECT_NEAR(W.data().to_vector()[0], w_true[0], 0.05);
  return res;
}

TEST(OptimEndToEnd, SgdWithMomentumFitsLinearRegression) {
  OptimizerOptions o;
  o.momentum = 0.9;
  ScheduleOptions s;
  s.base_lr = 0.05;
  const Result r = fit("sgd", o, "constant", s, 300);
  EXPECT_GT(r.first_loss, 1.0);
  EXPECT_LT(r.last_loss, 1e-4);
}

TEST(OptimEndToEnd, AdamWithWarmupFitsLinearRegression) {
  ScheduleOptions s;
  s.base_lr = 0.1;
  s.warmup_steps = 20;
  const Result r = fit("adam", OptimizerOptions{}, "warmup", s, 400);
  EXPECT_GT(r.first_loss, 1.0);
  EXPECT_LT(r.last_loss, 1e-4);
}

}  // namespace
}  // namespace luong::testing
