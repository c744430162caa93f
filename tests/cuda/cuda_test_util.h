// Shared helpers of the CUDA tests: skipping without a device, random tensors on any device, comparisons.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "framework/core/cuda_info.h"
#include "framework/core/philox.h"
#include "framework/tensor/tensor.h"

namespace luong::testing {

// Skips the calling test, naming why, when this build or this machine cannot run CUDA code.
#ifdef LUONG_WITH_CUDA
#define LUONG_REQUIRE_CUDA()                                                                   \
  do {                                                                                         \
    if (!::luong::cuda_available()) GTEST_SKIP() << "no CUDA device visible on this machine"; \
  } while (0)
#else
#define LUONG_REQUIRE_CUDA() GTEST_SKIP() << "built without CUDA (configure with -DLUONG_CUDA=ON)"
#endif

// n uniform values in [lo, hi) from a fixed-seed Philox stream.
inline std::vector<double> uniform_values(int64_t n, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator gen(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * gen.uniform();
  return v;
}

inline Tensor random_tensor(const Shape& shape, DType dtype, Device device, uint64_t seed, double lo = -1.0,
                            double hi = 1.0) {
  return Tensor::from(uniform_values(shape_numel(shape), seed, lo, hi), shape, dtype, device);
}

// max over elements of |a - b| / max(1, |b|): relative for large values, absolute near zero.
inline double max_mixed_error(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::isinf(a[i]) || std::isinf(b[i])) {
      if (a[i] != b[i]) return INFINITY;
      continue;
    }
    const double e = std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i]));
    worst = std::max(worst, std::isnan(e) ? INFINITY : e);
  }
  return worst;
}
inline double max_mixed_error(const Tensor& a, const Tensor& b) {
  return max_mixed_error(a.to_vector(), b.to_vector());
}

// True when both tensors hold exactly the same values (compared after conversion to double).
inline bool bitwise_equal(const Tensor& a, const Tensor& b) { return a.to_vector() == b.to_vector(); }

}  // namespace luong::testing
