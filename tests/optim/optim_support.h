// Helpers for the optimizer tests: flat parameters from plain vectors, gradients set by hand, and a
// scalar reference of each update written straight from the papers' formulas in double.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "framework/autograd/flat_parameters.h"
#include "framework/optim/optimizer.h"

namespace luong::testing {

// One parameter vector (n,) of the given dtype, laid out in a FlatParameters on the CPU.
inline FlatParameters flat_params(const std::vector<double>& values, DType dtype) {
  Variable p(Tensor::from(values, {static_cast<int64_t>(values.size())}, dtype), true, "p");
  return FlatParameters({p}, Device::cpu());
}

inline void set_grad(FlatParameters& fp, const std::vector<double>& g) {
  fp.grad().copy_(Tensor::from(g, {static_cast<int64_t>(g.size())}, DType::f64));
}

// Relative closeness with an absolute floor of 1 (values here are O(1)).
inline void expect_close(const std::vector<double>& actual, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tol * std::max(1.0, std::abs(expected[i]))) << "element " << i;
}

// Adam, Kingma & Ba 2015 Algorithm 1, on one element; t counts from 1.
struct AdamRef {
  double m = 0, v = 0;
  double step(double p, double g, double lr, const OptimizerOptions& o, int t) {
    if (!o.decoupled) g += o.weight_decay * p;
    m = o.beta1 * m + (1 - o.beta1) * g;
    v = o.beta2 * v + (1 - o.beta2) * g * g;
    const double m_hat = m / (1 - std::pow(o.beta1, t)), v_hat = v / (1 - std::pow(o.beta2, t));
    return p - lr * (m_hat / (std::sqrt(v_hat) + o.eps) + (o.decoupled ? o.weight_decay * p : 0.0));
  }
};

}  // namespace luong::testing
