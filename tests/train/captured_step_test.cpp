// CapturedStep on the CPU: the benchmark's whole training step runs inside a CaptureScope (so nothing in it
// reads a device value on the host, which a CUDA graph capture could not hold) and gives the same bits as
// the eager step with the trainer's host-side clip. The capture guard itself, the device-side clip, and the
// CUDA graph version of the same comparison (tests/cuda/captured_step_test.cpp) complete it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/core/capture_guard.h"
#include "framework/ops/tensor_math.h"
#include "tests/support/captured_step_fixture.h"
#include "tests/support/error_of.h"
#include "tests/support/random_floats.h"

namespace luong::testing {
namespace {

TEST(CaptureGuard, HostReadsOfTensorsFailInsideACaptureScopeAndNameTheRead) {
  Tensor t = Tensor::full({3}, 2.0, DType::f32, Device::cpu());
  EXPECT_EQ(t.to_vector()[0], 2.0);  // outside a scope: fine
  {
    CaptureScope scope;
    EXPECT_TRUE(capturing());
    EXPECT_NE(error_of([&] { t.to_vector(); }).find("Tensor::to_vector / item reads a device value on the host"),
              std::string::npos);
    EXPECT_NE(error_of([&] { t.to(DType::f64); }).find("a dtype conversion"), std::string::npos);
    EXPECT_NE(error_of([&] { sum_squares(t); }).find("sum_squares reads a device value"), std::string::npos);
    EXPECT_NE(error_of([&] { sum_all(t); }).find("sum_all"), std::string::npos);
    // Kept on the device: allowed.
    EXPECT_NO_THROW(sum_all_scalar(t));
  }
  EXPECT_FALSE(capturing());
  EXPECT_EQ(sum_all_scalar(t).item(), 6.0);
}

TEST(CaptureGuard, TheTrainersHostSideClipIsRefusedInsideACapturedStep) {
  Tensor g = Tensor::full({4}, 1.0, DType::f32, Device::cpu());
  CapturedStep step(Device::cpu(), [&] { average_and_clip_(g, 2, 5.0); });
  EXPECT_NE(error_of([&] { step.run(); }).find("sum_squares reads a device value on the host"), std::string::npos);
  EXPECT_FALSE(capturing());  // the scope closed with the exception
}

TEST(DeviceSideClip, GivesTheHostClipsBitsWhetherOrNotItClips) {
  for (double clip : {0.0, 0.05, 1e9}) {
    for (int64_t tokens : {int64_t{0}, int64_t{7}}) {
      const std::vector<float> v = random_floats(257, 3);
      Tensor a = Tensor::from(std::vector<double>(v.begin(), v.end()), {257}, DType::f32, Device::cpu());
      Tensor b = a.clone();
      const AveragedGradient host = average_and_clip_(a, tokens, clip);
      Tensor stats = Tensor::zeros({3}, DType::f64, Device::cpu());
      average_and_clip_on_device_(b, tokens, clip, stats);
      const AveragedGradient dev = read_averaged_gradient(stats);
      EXPECT_TRUE(dev.finite);
      EXPECT_EQ(dev.norm, host.norm) << "clip " << clip << " tokens " << tokens;
      EXPECT_EQ(a.to_vector(), b.to_vector()) << "clip " << clip << " tokens " << tokens;
    }
  }
}

TEST(DeviceSideClip, ANonFiniteGradientIsZeroedAndReportedSoSgdLeavesTheParameters) {
  Tensor g = Tensor::from({1.0, std::numeric_limits<double>::quiet_NaN(), 2.0}, {3}, DType::f32, Device::cpu());
  Tensor stats = Tensor::zeros({3}, DType::f64, Device::cpu());
  average_and_clip_on_device_(g, 3, 5.0, stats);
  const AveragedGradient r = read_averaged_gradient(stats);
  EXPECT_FALSE(r.finite);
  EXPECT_TRUE(std::isnan(r.norm));
  EXPECT_EQ(g.to_vector(), (std::vector<double>{0.0, 0.0, 0.0}));
  Tensor bad = Tensor::zeros({2}, DType::f64, Device::cpu());
  EXPECT_NE(error_of([&] { average_and_clip_on_device_(g, 3, 5.0, bad); }).find("stats must be 3 float64"),
            std::string::npos);
}

class CapturedStepByAttention : public ::testing::TestWithParam<std::string> {};

TEST_P(CapturedStepByAttention, TheWholeTrainingStepIsCaptureSafeAndGivesTheEagerStepsBits) {
  CapturedStepFixture f;
  f.attention = GetParam();
  const CapturedStepRun eager = f.run(Device::cpu(), false, 5);
  const CapturedStepRun captured = f.run(Device::cpu(), true, 5);
  ASSERT_EQ(eager.losses.size(), 5u);
  for (size_t i = 0; i < eager.losses.size(); ++i) {
    EXPECT_EQ(captured.losses[i], eager.losses[i]) << "step " << i;
    EXPECT_EQ(captured.norms[i], eager.norms[i]) << "step " << i;
    EXPECT_TRUE(captured.finite[i]);
  }
  EXPECT_GT(eager.norms[0], f.clip);            // the clip engaged
  EXPECT_NE(eager.losses[0], eager.losses[3]);  // the parameters moved: same batch, lower loss
  EXPECT_EQ(captured.params, eager.params);
}

INSTANTIATE_TEST_SUITE_P(EveryAttention, CapturedStepByAttention,
                         ::testing::Values("general", "dot", "concat", "local-m", "local-p"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace luong::testing
