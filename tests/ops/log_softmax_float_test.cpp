// The float32 log-softmax fast path (kernels/cpu/softmax.cpp: lane-wise max, vectorised exp for the
// normaliser) against the float64 path, which uses libm, on rows as wide as a vocabulary.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/core/philox.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

TEST(LogSoftmaxFloat, WideRowsMatchFloat64AndKeepMinusInfinity) {
  const int64_t rows = 5, cols = 8003;  // not a multiple of the 16 lanes
  Generator g(3);
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (auto& x : v) x = 40.0 * g.uniform() - 20.0;
  v[7] = -std::numeric_limits<double>::infinity();  // a banned token
  const Tensor x32 = Tensor::from(v, {rows, cols}, DType::f32);
  NoGradGuard no_grad;
  const std::vector<double> got = log_softmax(Variable(x32)).data().to_vector();
  const std::vector<double> want = log_softmax(Variable(x32.to(DType::f64))).data().to_vector();
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
      continue;
    }
    worst = std::max(worst, std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i])));
  }
  EXPECT_LT(worst, 1e-6);
  // Each row still normalises: logsumexp of the output is 0.
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int64_t j = 0; j < cols; ++j) s += std::exp(got[static_cast<size_t>(r * cols + j)]);
    EXPECT_NEAR(s, 1.0, 1e-5) << "row " << r;
  }
}

}  // namespace
}  // namespace luong
