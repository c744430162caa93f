#include <gtest/gtest.h>

#include "tests/optim/optim_support.h"

namespace luong::testing {
namespace {

// Runs `steps` Adam updates with gradient g_t[i] = sin(1 + i + 2 t) and checks every step against AdamRef.
void check_against_reference(DType dtype, const OptimizerOptions& o, double tol) {
  const std::vector<double> p0 = {0.5, -1.5, 2.0, 0.1};
  FlatParameters fp = flat_params(p0, dtype);
  auto opt = make_optimizer("adam", o);
  std::vector<double> p = p0;
  std::vector<AdamRef> ref(p0.size());
  for (int t = 1; t <= 3; ++t) {
    std::vector<double> g;
    for (size_t i = 0; i < p.size(); ++i) g.push_back(std::sin(1.0 + static_cast<double>(i) + 2.0 * t));
    set_grad(fp, g);
    const double lr = 0.01 * t;
    opt->step(fp, lr);
    for (size_t i = 0; i < p.size(); ++i) p[i] = ref[i].step(p[i], g[i], lr, o, t);
    expect_close(fp.data().to_vector(), p, tol);
  }
  StateDict sd;
  opt->state(sd);
  EXPECT_EQ(sd.tensors.at("m").dtype(), dtype);
  EXPECT_EQ(sd.tensors.at("v").dtype(), dtype);
  std::vector<double> m, v;
  for (const auto& r : ref) m.push_back(r.m), v.push_back(r.v);
  expect_close(sd.tensors.at("m").to_vector(), m, tol);
  expect_close(sd.tensors.at("v").to_vector(), v, tol);
}

TEST(Adam, FirstStepIsLrTimesSignOfGradient) {
  // Bias correction makes m_hat = g and v_hat = g^2 at t = 1: p -= lr g / (|g| + eps).
  FlatParameters fp = flat_params({1.0, -1.0}, DType::f64);
  auto opt = make_optimizer("adam");
  set_grad(fp, {0.5, -3.0});
  opt->step(fp, 0.1);
  expect_close(fp.data().to_vector(), {1.0 - 0.1 * 0.5 / (0.5 + 1e-8), -1.0 + 0.1 * 3.0 / (3.0 + 1e-8)}, 1e-15);
}

TEST(Adam, MatchesPaperFormulasFloat64) { check_against_reference(DType::f64, OptimizerOptions{}, 1e-13); }

TEST(Adam, MatchesPaperFormulasFloat32WithFloat32State) {
  OptimizerOptions o;
  o.beta1 = 0.8;
  o.beta2 = 0.99;
  check_against_reference(DType::f32, o, 2e-6);
}

TEST(Adam, DecoupledWeightDecayShrinksParametersOutsideTheAdaptiveScaling) {
  OptimizerOptions o;
  o.weight_decay = 0.1;
  o.decoupled = true;
  FlatParameters fp = flat_params({2.0}, DType::f64);
  auto opt = make_optimizer("adam", o);
  set_grad(fp, {0.0});
  opt->step(fp, 0.01);  // zero gradient: only p -= lr wd p = 2 - 0.002
  expect_close(fp.data().to_vector(), {1.998}, 1e-15);
  check_against_reference(DType::f64, o, 1e-13);
}

TEST(Adam, CoupledWeightDecayGoesThroughTheMoments) {
  OptimizerOptions o;
  o.weight_decay = 0.1;
  o.decoupled = false;
  FlatParameters fp = flat_params({2.0}, DType::f64);
  auto opt = make_optimizer("adam", o);
  set_grad(fp, {0.0});
  opt->step(fp, 0.01);  // g = wd p = 0.2, normalised by sqrt(v_hat) = 0.2: a full lr-sized step
  expect_close(fp.data().to_vector(), {2.0 - 0.01 * 0.2 / (0.2 + 1e-8)}, 1e-15);
  check_against_reference(DType::f64, o, 1e-13);
}

TEST(Adam, RejectsBadOptions) {
  auto expect_error_naming = [](OptimizerOptions o, const std::string& key) {
    try {
      make_optimizer("adam", o);
      ADD_FAILURE() << "no error for bad " << key;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  OptimizerOptions o;
  o.beta1 = 1.0;
  expect_error_naming(o, "beta1");
  o = {};
  o.beta2 = -0.1;
  expect_error_naming(o, "beta2");
  o = {};
  o.eps = 0;
  expect_error_naming(o, "eps");
  o = {};
  o.weight_decay = -1;
  expect_error_naming(o, "weight_decay");
}

}  // namespace
}  // namespace luong::testing
