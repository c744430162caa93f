// No cudaMalloc in the steady-state training step: the CPU test of tests/train/steady_state_alloc_test.cpp
// on the GPU, where a call that reaches the driver also synchronises the device.
#include <gtest/gtest.h>

#include "tests/cuda/cuda_test_util.h"
#include "tests/support/steady_state_step.h"

namespace luong::testing {
namespace {

TEST(CudaSteadyStateAllocation, RepeatedStepsMakeNoCudaMalloc) {
  LUONG_REQUIRE_CUDA();
  for (const SteadyStateCase& c : {SteadyStateCase{"sgd", 0.0, 0.0}, SteadyStateCase{"adam", 0.3, 0.1}}) {
    const SteadyStateCounts n = run_steady_state_steps(Device::cuda(0), c, 9);
    EXPECT_EQ(n.after_steps, n.after_warmup) << c.optimizer << ": steady-state steps called cudaMalloc";
  }
}

}  // namespace
}  // namespace luong::testing
