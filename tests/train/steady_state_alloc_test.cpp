// No allocation in the steady-state training step (issue 9's lever): once a step of a given shape has run,
// the same step again takes every buffer from the caching allocator, so the system allocator is never
// called (no page faults, no memory handed back to be touched again). The CUDA twin is in tests/cuda/.
#include <gtest/gtest.h>

#include "tests/support/steady_state_step.h"

namespace luong::testing {
namespace {

class SteadyStateAllocation : public ::testing::TestWithParam<SteadyStateCase> {};

TEST_P(SteadyStateAllocation, RepeatedStepsMakeNoSystemAllocation) {
  const SteadyStateCounts n = run_steady_state_steps(Device::cpu(), GetParam(), 9);
  EXPECT_GT(n.after_warmup, 0);
  EXPECT_EQ(n.after_steps, n.after_warmup) << "steady-state steps reached the system allocator";
}

// The check can fail: with the cache emptied after every step, each step allocates again.
TEST(SteadyStateAllocationCheck, DetectsAStepThatAllocates) {
  const SteadyStateCounts n = run_steady_state_steps(Device::cpu(), SteadyStateCase{"sgd", 0.0, 0.0}, 3,
                                                     [] { allocator_for(Device::cpu()).empty_cache(); });
  EXPECT_GT(n.after_steps, n.after_warmup);
}

INSTANTIATE_TEST_SUITE_P(TrainingSteps, SteadyStateAllocation,
                         ::testing::Values(SteadyStateCase{"sgd", 0.0, 0.0}, SteadyStateCase{"adam", 0.3, 0.1}),
                         [](const auto& info) { return std::string(info.param.optimizer); });

}  // namespace
}  // namespace luong::testing
