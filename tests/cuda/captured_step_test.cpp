// CapturedStep on a GPU: the benchmark's training step recorded once into a CUDA graph and replayed gives
// the bits of the same steps run eagerly (host-side clip and all), on rotating batches copied into the
// graph's input tensors. Skips without a device; tests/train/captured_step_test.cpp runs the CPU side.
#include <gtest/gtest.h>

#include "framework/ops/tensor_math.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/support/captured_step_fixture.h"
#include "tests/support/error_of.h"
#ifdef LUONG_WITH_CUDA
#include "framework/kernels/cuda/graph.h"
#endif

namespace luong::testing {
namespace {

TEST(CudaGraphStep, ReplaysGiveTheEagerStepsBitsOnRotatingBatchesForEveryAttention) {
  LUONG_REQUIRE_CUDA();
  for (const char* attention : {"general", "dot", "concat", "local-m", "local-p"}) {
    SCOPED_TRACE(attention);
    CapturedStepFixture f;
    f.attention = attention;
    const CapturedStepRun eager = f.run(Device::cuda(0), false, 5);
    const CapturedStepRun graphed = f.run(Device::cuda(0), true, 5);
    for (size_t i = 0; i < eager.losses.size(); ++i) {
      EXPECT_EQ(graphed.losses[i], eager.losses[i]) << "step " << i;
      EXPECT_EQ(graphed.norms[i], eager.norms[i]) << "step " << i;
    }
    EXPECT_NE(eager.losses[0], eager.losses[3]);
    EXPECT_EQ(graphed.params, eager.params);
    // And the CPU's float64 run agrees to rounding: the graph computes the model, not something else.
    const CapturedStepRun cpu = f.run(Device::cpu(), false, 5, DType::f64);
    EXPECT_LT(max_mixed_error(graphed.params, cpu.params), 1e-4);
  }
}

#ifdef LUONG_WITH_CUDA

TEST(CudaGraphStep, AStepThatReadsTheDeviceFailsToCaptureByNameAndTheStreamStaysUsable) {
  LUONG_REQUIRE_CUDA();
  Tensor t = Tensor::full({16}, 1.5, DType::f32, Device::cuda(0));
  cuda::Graph g(0);
  const std::string msg = error_of([&] { g.capture([&] { scale_(t, 2.0), t.to_vector(); }); });
  EXPECT_NE(msg.find("Tensor::to_vector / item reads a device value on the host"), std::string::npos) << msg;
  EXPECT_FALSE(g.captured());
  scale_(t, 2.0);  // eager work after the failed capture runs (and the abandoned capture ran nothing)
  EXPECT_EQ(t.to_vector()[0], 3.0);
  g.capture([&] { scale_(t, 2.0); });  // the same graph object captures once the step is fixed
  g.replay(), g.replay();
  EXPECT_EQ(t.to_vector()[0], 12.0);
}

TEST(CudaGraphStep, HostDataUploadedInTheStepIsReplayedFromTheGraphsOwnCopy) {
  LUONG_REQUIRE_CUDA();
  Tensor acc = Tensor::zeros({3}, DType::f64, Device::cuda(0));
  std::vector<double> host{1.0, 2.0, 3.0};
  cuda::Graph g(0);
  g.capture([&] { add_(acc, Tensor::from(host, {3}, DType::f64, Device::cuda(0))); });
  host = {100.0, 100.0, 100.0};  // frozen at capture: replays upload the captured bytes
  g.replay(), g.replay(), g.replay();
  EXPECT_EQ(acc.to_vector(), (std::vector<double>{3.0, 6.0, 9.0}));
}

#endif  // LUONG_WITH_CUDA

}  // namespace
}  // namespace luong::testing
