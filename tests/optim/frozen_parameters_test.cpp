// train.freeze's mechanism (optim/frozen_parameters.h): the frozen parameters' spans of the flat buffers
// (neighbours merged), their gradients off while it lives, zeroed and nothing else, and their values put back after an
// update that moved them (AdamW's weight decay does without a gradient).
#include "framework/optim/frozen_parameters.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "framework/optim/optimizer.h"

namespace luong::testing {
namespace {

// Four parameters of 2, 3, 4 and 1 values, 0..9 in the flat buffer, gradients 10..19.
FlatParameters four_parameters() {
  std::vector<Variable> ps;
  double next = 0;
  for (int64_t n : {2, 3, 4, 1}) {
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(next++);
    ps.emplace_back(Tensor::from(v, {n}, DType::f32), true, "p");
  }
  FlatParameters fp(ps, Device::cpu());
  std::vector<double> g;
  for (int i = 0; i < 10; ++i) g.push_back(10 + i);
  fp.grad().copy_(Tensor::from(g, {10}, DType::f64));
  return fp;
}

TEST(FrozenParameters, ZeroesTheFrozenGradientsAndNoOthers) {
  FlatParameters fp = four_parameters();
  const FrozenParameters frozen(fp, {2, 0});  // values 0-1 and 5-8
  EXPECT_EQ(frozen.numel(), 6);
  frozen.zero_grads(fp);
  EXPECT_EQ(fp.grad().to_vector(), (std::vector<double>{0, 0, 12, 13, 14, 0, 0, 0, 0, 19}));
}

TEST(FrozenParameters, TurnsTheFrozenGradientsOffWhileItLives) {
  FlatParameters fp = four_parameters();
  {
    const FrozenParameters frozen(fp, {3, 1, 3});
    std::vector<bool> on;
    for (const auto& p : fp.params()) on.push_back(p.requires_grad());
    EXPECT_EQ(on, (std::vector<bool>{true, false, true, false}));
  }
  for (const auto& p : fp.params()) EXPECT_TRUE(p.requires_grad()) << "back on once the object is gone";
}

TEST(FrozenParameters, NeighboursBecomeOneSpanAndRepeatsCountOnce) {
  FlatParameters fp = four_parameters();
  const FrozenParameters frozen(fp, {1, 2, 1});  // values 2-8
  EXPECT_EQ(frozen.numel(), 7);
  frozen.zero_grads(fp);
  EXPECT_EQ(fp.grad().to_vector(), (std::vector<double>{10, 11, 0, 0, 0, 0, 0, 0, 0, 19}));
  EXPECT_THROW(FrozenParameters(fp, {4}), Error);  // no such parameter
}

TEST(FrozenParameters, AnUpdateWithWeightDecayLeavesTheFrozenValuesAsTheyWere) {
  FlatParameters fp = four_parameters();
  FrozenParameters frozen(fp, {1, 3});  // values 2-4 and 9
  frozen.hold(fp);
  frozen.zero_grads(fp);
  OptimizerOptions o;
  o.weight_decay = 0.5;
  const auto adam = make_optimizer("adam", o);
  for (int step = 0; step < 3; ++step) {
    adam->step(fp, 0.1, 1.0);
    frozen.restore(fp);
  }
  const std::vector<double> after = fp.data().to_vector();
  for (int i : {2, 3, 4, 9}) EXPECT_EQ(after[static_cast<size_t>(i)], i) << "frozen value " << i;
  for (int i : {0, 1, 5, 6, 7, 8}) EXPECT_NE(after[static_cast<size_t>(i)], i) << "trained value " << i;
  // Without the restore the decay alone moves a frozen value: the copy is what keeps it.
  adam->step(fp, 0.1, 1.0);
  EXPECT_NE(fp.data().to_vector()[3], 3.0);
}

}  // namespace
}  // namespace luong::testing
