// Finite-difference gradient checking in float64, shared by every test area.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "framework/autograd/variable.h"
#include "framework/core/philox.h"
#include "framework/ops/ops.h"

namespace luong::testing {

// A float64 leaf with uniform values in [lo, hi), from a fixed-seed generator.
inline Variable random_leaf(Generator& gen, const Shape& shape, double lo = -1.0, double hi = 1.0,
                            bool requires_grad = true) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : v) x = lo + (hi - lo) * gen.uniform();
  return Variable(Tensor::from(v, shape, DType::f64), requires_grad);
}

// Reduces any output to a scalar with fixed random weights, so every output element gets a distinct
// upstream gradient (a plain sum would hide errors that are uniform across elements).
inline Variable weighted_sum(const Variable& y, uint64_t seed = 99) {
  Generator gen(seed);
  Variable w = random_leaf(gen, y.shape(), -1.0, 1.0, false);
  return sum(mul(y, w));
}

struct GradCheckResult {
  double max_rel_error = 0.0;
  std::string worst;  // "input 1 element 7: analytic 0.3 numeric 0.31"
};

// Compares d f / d inputs from backward() with central differences. Relative error is
// |a - n| / max(1, |a|, |n|): relative for large gradients, absolute near zero.
inline GradCheckResult gradcheck(const std::function<Variable(const std::vector<Variable>&)>& f,
                                 std::vector<Variable> inputs, double eps = 1e-6) {
  for (auto& in : inputs) in.impl()->grad = Tensor();
  Variable out = f(inputs);
  EXPECT_EQ(out.data().numel(), 1) << "gradcheck needs a scalar function";
  out.backward();
  GradCheckResult r;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    Tensor analytic = inputs[i].grad();
    const int64_t n = inputs[i].data().numel();
    double* x = inputs[i].data().data<double>();
    for (int64_t j = 0; j < n; ++j) {
      const double orig = x[j];
      x[j] = orig + eps;
      double fp, fm;
      {
        NoGradGuard ng;
        fp = f(inputs).data().item();
        x[j] = orig - eps;
        fm = f(inputs).data().item();
      }
      x[j] = orig;
      const double num = (fp - fm) / (2 * eps);
      const double ana = analytic.defined() ? analytic.data<double>()[j] : 0.0;
      const double rel = std::abs(ana - num) / std::max({1.0, std::abs(ana), std::abs(num)});
      if (rel > r.max_rel_error || std::isnan(rel)) {
        r.max_rel_error = std::isnan(rel) ? 1e300 : rel;
        r.worst = "input " + std::to_string(i) + " element " + std::to_string(j) + ": analytic " +
                  std::to_string(ana) + " numeric " + std::to_string(num);
      }
    }
  }
  return r;
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto va = a.to_vector(), vb = b.to_vector();
  EXPECT_EQ(va.size(), vb.size());
  double m = 0;
  for (size_t i = 0; i < va.size() && i < vb.size(); ++i) m = std::max(m, std::abs(va[i] - vb[i]));
  return m;
}

}  // namespace luong::testing
