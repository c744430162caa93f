#include <gtest/gtest.h>

#include "tests/optim/optim_support.h"

namespace luong::testing {
namespace {

TEST(Sgd, PlainStepsMatchHandComputedValues) {
  FlatParameters fp = flat_params({1.0, -2.0, 0.5}, DType::f64);
  auto opt = make_optimizer("sgd");
  set_grad(fp, {0.5, -1.0, 2.0});
  opt->step(fp, 0.1);  // p - 0.1 g
  expect_close(fp.data().to_vector(), {0.95, -1.9, 0.3}, 1e-15);
  set_grad(fp, {1.0, 1.0, -1.0});
  opt->step(fp, 0.5);  // the lr comes from the caller each step
  expect_close(fp.data().to_vector(), {0.45, -2.4, 0.8}, 1e-15);
  EXPECT_EQ(opt->steps(), 2);
  // The gradient is read, never modified (clipping and all-reduce own it).
  EXPECT_EQ(fp.grad().to_vector(), (std::vector<double>{1.0, 1.0, -1.0}));
}

TEST(Sgd, MomentumAccumulatesVelocity) {
  OptimizerOptions o;
  o.momentum = 0.9;
  FlatParameters fp = flat_params({1.0, 0.0}, DType::f64);
  auto opt = make_optimizer("sgd", o);
  // Constant gradient (1, -2): m = 1, 1.9, 2.71 times g; p -= 0.1 m.
  const std::vector<std::vector<double>> expected = {{0.9, 0.2}, {0.71, 0.58}, {0.439, 1.122}};
  for (const auto& e : expected) {
    set_grad(fp, {1.0, -2.0});
    opt->step(fp, 0.1);
    expect_close(fp.data().to_vector(), e, 1e-14);
  }
}

TEST(Sgd, WeightDecayIsAddedToTheGradient) {
  OptimizerOptions o;
  o.weight_decay = 0.5;
  FlatParameters fp = flat_params({2.0, -4.0}, DType::f64);
  auto opt = make_optimizer("sgd", o);
  set_grad(fp, {0.0, 1.0});
  opt->step(fp, 0.1);  // p - 0.1 (g + 0.5 p): 2 - 0.1, -4 - 0.1 (1 - 2)
  expect_close(fp.data().to_vector(), {1.9, -3.9}, 1e-15);
  opt->step(fp, 0.1);  // 1.9 - 0.095, -3.9 - 0.1 (1 - 1.95)
  expect_close(fp.data().to_vector(), {1.805, -3.805}, 1e-15);
}

TEST(Sgd, MomentumWithWeightDecayInFloat32KeepsFloat32State) {
  OptimizerOptions o;
  o.momentum = 0.5;
  o.weight_decay = 0.1;
  const std::vector<double> p0 = {0.3, -1.2, 2.5, 0.0, -0.7};
  FlatParameters fp = flat_params(p0, DType::f32);
  auto opt = make_optimizer("sgd", o);
  std::vector<double> p = p0, m(p0.size(), 0.0);
  for (int t = 1; t <= 3; ++t) {
    std::vector<double> g;
    for (size_t i = 0; i < p.size(); ++i) g.push_back(0.25 * t - 0.4 * static_cast<double>(i));
    set_grad(fp, g);
    opt->step(fp, 0.2);
    for (size_t i = 0; i < p.size(); ++i) {
      m[i] = 0.5 * m[i] + g[i] + 0.1 * p[i];
      p[i] -= 0.2 * m[i];
    }
    expect_close(fp.data().to_vector(), p, 1e-6);
  }
  StateDict sd;
  opt->state(sd);
  ASSERT_TRUE(sd.tensors.count("momentum"));
  EXPECT_EQ(sd.tensors.at("momentum").dtype(), DType::f32);
  expect_close(sd.tensors.at("momentum").to_vector(), m, 1e-6);
}

TEST(Sgd, PlainSgdKeepsNoState) {
  FlatParameters fp = flat_params({1.0}, DType::f32);
  auto opt = make_optimizer("sgd");
  set_grad(fp, {1.0});
  opt->step(fp, 0.1);
  StateDict sd;
  opt->state(sd);
  EXPECT_TRUE(sd.tensors.empty());
  EXPECT_EQ(sd.ints.at("step"), 1);
}

TEST(Sgd, RejectsBadOptionsAndLearningRates) {
  OptimizerOptions o;
  o.momentum = 1.0;
  EXPECT_THROW(
      try { make_optimizer("sgd", o); } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("momentum"), std::string::npos) << e.what();
        throw;
      },
      Error);
  FlatParameters fp = flat_params({1.0}, DType::f32);
  auto opt = make_optimizer("sgd");
  EXPECT_THROW(opt->step(fp, -1.0), Error);
  EXPECT_THROW(opt->step(fp, std::nan("")), Error);
}

}  // namespace
}  // namespace luong::testing
