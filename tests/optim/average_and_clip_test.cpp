// average_and_clip_: the gradient half of the trainer's update, and the lane-blocked sum of squares its
// norm comes from.
#include "framework/optim/average_and_clip.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "framework/core/error.h"
#include "framework/core/philox.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/ops/tensor_math.h"
#include "tests/support/threads_guard.h"

namespace luong::testing {
namespace {

Tensor vec(const std::vector<double>& v, DType dtype = DType::f64) {
  return Tensor::from(v, {static_cast<int64_t>(v.size())}, dtype);
}

TEST(AverageAndClip, AveragesOverTokensAndReportsTheAveragedNorm) {
  Tensor g = vec({6, 8});  // summed over 4 tokens: average (1.5, 2), norm 2.5
  const AveragedGradient r = average_and_clip_(g, 4, 0.0);
  EXPECT_TRUE(r.finite);
  EXPECT_DOUBLE_EQ(r.norm, 2.5);
  EXPECT_EQ(g.to_vector(), (std::vector<double>{1.5, 2.0}));
}

TEST(AverageAndClip, ClipsTheAverageToTheMaxNormAndReportsTheNormBeforeClipping) {
  Tensor g = vec({6, 8});
  const AveragedGradient r = average_and_clip_(g, 2, 1.0);  // average (3, 4), norm 5 > 1
  EXPECT_DOUBLE_EQ(r.norm, 5.0);
  const std::vector<double> v = g.to_vector();
  EXPECT_NEAR(v[0], 0.6, 1e-12);
  EXPECT_NEAR(v[1], 0.8, 1e-12);
  Tensor below = vec({0.6, 0.8});
  average_and_clip_(below, 0, 5.0);  // tokens 0: already an average; norm 1 < 5: untouched
  EXPECT_EQ(below.to_vector(), (std::vector<double>{0.6, 0.8}));
}

TEST(AverageAndClip, NonFiniteGradientIsReportedAndLeftUntouched) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    Tensor g = vec({1.0, bad, 3.0}, DType::f32);
    const std::vector<double> before = g.to_vector();
    EXPECT_FALSE(average_and_clip_(g, 10, 1.0).finite) << bad;
    const std::vector<double> after = g.to_vector();
    EXPECT_EQ(after[0], before[0]);
    EXPECT_EQ(after[2], before[2]);
  }
  // The largest finite floats square to about 1e77: far from overflowing the double sum.
  Tensor huge = vec({3.4e38, -3.4e38, 3.4e38}, DType::f32);
  const AveragedGradient r = average_and_clip_(huge, 1, 1.0);
  EXPECT_TRUE(r.finite);
  EXPECT_NEAR(r.norm / (3.4e38 * std::sqrt(3.0)), 1.0, 1e-6);
}

TEST(AverageAndClip, RejectsANegativeOrNonFiniteClipNorm) {
  Tensor g = vec({1.0});
  EXPECT_THROW(average_and_clip_(g, 1, -1.0), Error);
  EXPECT_THROW(average_and_clip_(g, 1, std::nan("")), Error);
}

// -1 is what a loss inside a captured step returns for device targets; taken as "no averaging" it would train
// on a summed gradient without a word.
TEST(AverageAndClip, RejectsANegativeTokenCount) {
  Tensor g = vec({1.0});
  try {
    average_and_clip_(g, -1, 5.0);
    FAIL() << "no error for tokens -1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokens must be >= 0"), std::string::npos) << e.what();
  }
  Tensor stats = Tensor::zeros({3}, DType::f64);
  EXPECT_THROW(average_and_clip_on_device_(g, -1, 5.0, stats), Error);
}

// The sum of squares is accumulated in 32 lanes inside fixed blocks. Every length around the lane and block
// boundaries agrees with a long-double reference, and the bits do not depend on the thread count.
TEST(SumSquares, LaneBlockedSumIsAccurateAndThreadCountIndependent) {
  const luong::testing::ThreadsGuard threads_guard;
  Generator gen(7);
  for (int64_t n : {int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, cpu::kReduceBlock - 1, cpu::kReduceBlock,
                    cpu::kReduceBlock + 1, cpu::kParallelGrain * 3 + 17}) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = gen.uniform() * 2.0 - 1.0;
    const Tensor t = vec(v, DType::f32);
    const std::vector<double> stored = t.to_vector();  // the float-rounded values
    long double ref = 0;
    for (double x : stored) ref += static_cast<long double>(x) * x;
    std::vector<double> by_threads;
    for (int threads : {1, 2}) {
      cpu::set_num_threads(threads);
      by_threads.push_back(sum_squares(t));
    }
    EXPECT_NEAR(by_threads[0], static_cast<double>(ref), 1e-12 * static_cast<double>(ref)) << "n = " << n;
    EXPECT_EQ(by_threads[0], by_threads[1]) << "n = " << n;
  }
}

}  // namespace
}  // namespace luong::testing
