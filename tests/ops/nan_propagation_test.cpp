// A NaN must reach the output of every normalising op. A row max that skips NaN used to take an all-NaN row
// for a fully masked one and return zeros (log-softmax: log-probabilities of 0), so a diverged model
// translated silently instead of failing. Runs on the CPU, and on CUDA too when a device is visible (the CUDA
// kernels mirror the CPU's NaN handling).
#include <gtest/gtest.h>

#include <cmath>

#include "framework/core/cuda_info.h"
#include "framework/ops/ops.h"

namespace luong {
namespace {

std::vector<Device> devices() {
  std::vector<Device> d{Device::cpu()};
  if (cuda_available()) d.push_back(Device::cuda(0));
  return d;
}

bool all_nan(const std::vector<double>& v, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (!std::isnan(v[i])) return false;
  return true;
}

TEST(NaNPropagation, SoftmaxRowsWithANaNAreNaN) {
  const double nan = std::nan("");
  // Row 0 all NaN, row 1 one NaN among finite values, row 2 finite (must stay finite).
  const std::vector<double> x{nan, nan, nan, nan, 0.5, nan, -1.0, 2.0, 0.1, 0.2, 0.3, 0.4};
  const Tensor mask = Tensor::from({1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1}, {3, 4}, DType::u8);
  NoGradGuard no_grad;
  for (Device dev : devices())
    for (DType dt : {DType::f32, DType::f64})
      for (bool log : {false, true})
        for (bool masked : {false, true}) {
          const Variable in(Tensor::from(x, {3, 4}, dt, dev));
          const Tensor m = masked ? mask.to(dev) : Tensor();
          const std::vector<double> y = (log ? log_softmax(in, m) : softmax(in, m)).data().to_vector();
          const std::string what = std::string(log ? "log_softmax" : "softmax") + (masked ? " masked " : " ") +
                                   (dt == DType::f32 ? "f32 " : "f64 ") + dev.name();
          EXPECT_TRUE(all_nan(y, 0, 4)) << what << ": all-NaN row";
          EXPECT_TRUE(all_nan(y, 4, 8)) << what << ": row with one NaN";
          for (size_t i = 8; i < 12; ++i) EXPECT_TRUE(std::isfinite(y[i])) << what << ": finite row, element " << i;
        }
}

TEST(NaNPropagation, AttentionStepWithANaNScoreIsNaN) {
  const int64_t B = 2, S = 3, H = 2;
  std::vector<double> q{std::nan(""), 1.0, 0.5, -0.5};  // row 0's query is poisoned
  std::vector<double> k(static_cast<size_t>(B * S * H), 0.25);
  const Tensor mask = Tensor::from({1, 1, 0, 1, 1, 1}, {B, S}, DType::u8);
  NoGradGuard no_grad;
  for (Device dev : devices())
    for (DType dt : {DType::f32, DType::f64}) {
      const Variable qv(Tensor::from(q, {B, H}, dt, dev)), kv(Tensor::from(k, {B, S, H}, dt, dev));
      const AttentionStep a = attention_step(qv, kv, kv, mask.to(dev));
      const std::vector<double> c = a.context.data().to_vector(), w = a.weights.data().to_vector();
      EXPECT_TRUE(all_nan(c, 0, 2) && all_nan(w, 0, 3)) << "row 0";
      for (size_t i = 2; i < 4; ++i) EXPECT_TRUE(std::isfinite(c[i])) << "row 1 context " << i;
      for (size_t i = 3; i < 6; ++i) EXPECT_TRUE(std::isfinite(w[i])) << "row 1 weight " << i;
    }
}

}  // namespace
}  // namespace luong
