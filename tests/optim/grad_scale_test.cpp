// The trainer's gradient factor applied inside the optimizer's update (Optimizer::step's grad_scale, with
// measure_average_and_clip) instead of by a pass over the gradient (average_and_clip_): same decision, same
// update bits, the gradient buffer left as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/optim/average_and_clip.h"
#include "tests/optim/optim_support.h"
#include "tests/support/random_floats.h"

namespace luong::testing {
namespace {

std::vector<double> random_values(int64_t n, uint64_t seed, double scale) {
  std::vector<double> v;
  for (float x : random_floats(n, seed)) v.push_back(scale * x);
  return v;
}

// The values a gradient of this dtype holds after set_grad(g).
std::vector<double> as_stored(DType dtype, const std::vector<double>& g) {
  return Tensor::from(g, {static_cast<int64_t>(g.size())}, dtype).to_vector();
}

TEST(GradScale, MeasureDecidesAsAverageAndClipAndLeavesTheBufferAlone) {
  for (auto [tokens, clip] : {std::pair<int64_t, double>{4, 0.0}, {2, 1.0}, {0, 5.0}, {1000, 0.01}}) {
    Tensor g = Tensor::from(random_values(1001, 7, 3.0), {1001}, DType::f32);
    const std::vector<double> before = g.to_vector();
    const AveragedGradient m = measure_average_and_clip(g, tokens, clip);
    EXPECT_EQ(g.to_vector(), before) << "measure wrote the gradient";
    Tensor scaled = g.clone();
    const AveragedGradient a = average_and_clip_(scaled, tokens, clip);
    EXPECT_TRUE(m.finite && a.finite);
    EXPECT_EQ(m.norm, a.norm);
    EXPECT_EQ(a.factor, 1.0) << "average_and_clip_ applied the factor itself";
    const double expected_factor = (tokens > 0 ? 1.0 / static_cast<double>(tokens) : 1.0) *
                                   (clip > 0 && m.norm > clip ? clip / (m.norm + 1e-12) : 1.0);
    EXPECT_DOUBLE_EQ(m.factor, expected_factor) << tokens << " tokens, clip " << clip;
  }
  Tensor bad = Tensor::from(std::vector<double>{1.0, std::nan(""), 2.0}, {3}, DType::f32);
  const AveragedGradient m = measure_average_and_clip(bad, 3, 1.0);
  EXPECT_FALSE(m.finite);
  EXPECT_THROW(measure_average_and_clip(bad, -1, 1.0), Error);
}

// For every optimizer setting the trainer can run, float32 and float64: a step with grad_scale f on the raw
// gradient has the bits of a step with grad_scale 1 on the gradient average_and_clip_ scaled, step after step
// (momentum and Adam's moments included).
TEST(GradScale, AStepWithTheFactorHasTheBitsOfAStepOnTheScaledGradient) {
  struct Setting {
    std::string name;
    OptimizerOptions options;
  };
  std::vector<Setting> settings(6);
  settings[0] = {"sgd", {}};
  settings[1] = {"sgd", {}}, settings[1].options.momentum = 0.9;
  settings[2] = {"sgd", {}}, settings[2].options.weight_decay = 1e-3;
  settings[3] = {"adam", {}};
  settings[4] = {"adam", {}}, settings[4].options.weight_decay = 0.01;
  settings[5] = {"adam", {}}, settings[5].options.weight_decay = 0.01, settings[5].options.decoupled = false;
  const int64_t n = 4099;  // not a multiple of any vector width
  for (DType dtype : {DType::f32, DType::f64})
    for (const Setting& s : settings) {
      FlatParameters fused = flat_params(random_values(n, 1, 1.0), dtype);
      FlatParameters separate = flat_params(random_values(n, 1, 1.0), dtype);
      auto fused_opt = make_optimizer(s.name, s.options), separate_opt = make_optimizer(s.name, s.options);
      for (int step = 0; step < 3; ++step) {
        const std::vector<double> g = random_values(n, 100 + step, 40.0);  // summed over 64 tokens: clipped
        set_grad(fused, g);
        set_grad(separate, g);
        const AveragedGradient m = measure_average_and_clip(fused.grad(), 64, 0.5);
        ASSERT_NE(m.factor, 1.0);
        fused_opt->step(fused, 0.7, m.factor);
        average_and_clip_(separate.grad(), 64, 0.5);
        separate_opt->step(separate, 0.7);
        const std::vector<double> a = fused.data().to_vector(), b = separate.data().to_vector();
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(a[static_cast<size_t>(i)], b[static_cast<size_t>(i)])
              << s.name << " momentum " << s.options.momentum << " decay " << s.options.weight_decay << " " << dtype
              << " step " << step << " element " << i;
        EXPECT_EQ(fused.grad().to_vector(), as_stored(dtype, g)) << "the update wrote the gradient";
      }
    }
}

TEST(GradScale, RejectsANegativeOrNonFiniteScale) {
  FlatParameters fp = flat_params({1.0, 2.0}, DType::f32);
  set_grad(fp, {1.0, 1.0});
  auto opt = make_optimizer("sgd");
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    try {
      opt->step(fp, 0.1, bad);
      FAIL() << "no error for grad_scale " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("gradient scale must be finite and >= 0"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(opt->steps(), 0);
  EXPECT_EQ(fp.data().to_vector(), (std::vector<double>{1.0, 2.0}));
}

}  // namespace
}  // namespace luong::testing
