// train.freeze's mechanism (optim/frozen_parameters.h): the trained spans of the flat buffers (neighbours
// merged), the frozen parameters' gradients off while it lives, and updates of the trained spans only, which
// leave frozen values as they were (AdamW's weight decay moves a parameter without a gradient).
#include "framework/optim/frozen_parameters.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "framework/core/error.h"
#include "framework/optim/average_and_clip.h"
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

TEST(FrozenParameters, TrainedSpansAreTheRestWithNeighboursMerged) {
  FlatParameters fp = four_parameters();  // offsets 0, 2, 5, 9
  const FrozenParameters middle(fp, {2, 1, 2});
  EXPECT_EQ(middle.numel(), 7);
  EXPECT_EQ(middle.trained_spans(), (std::vector<FlatSpan>{{0, 2}, {9, 1}}));
  EXPECT_THROW(FrozenParameters(fp, {4}), Error);  // no such parameter
}

TEST(FrozenParameters, TurnsTheFrozenGradientsOffWhileItLives) {
  FlatParameters fp = four_parameters();
  {
    const FrozenParameters frozen(fp, {3, 1, 3});
    EXPECT_EQ(frozen.trained_spans(), (std::vector<FlatSpan>{{0, 2}, {5, 4}}));
    std::vector<bool> on;
    for (const auto& p : fp.params()) on.push_back(p.requires_grad());
    EXPECT_EQ(on, (std::vector<bool>{true, false, true, false}));
  }
  for (const auto& p : fp.params()) EXPECT_TRUE(p.requires_grad()) << "back on once the object is gone";
}

// The trainer's norm over the trained spans: the frozen slots are neither read nor zeroed. The frozen
// parameters hold stale gradients (10..19 from four_parameters) behind a pending zero: read, they would add
// to the norm; zeroed, they would lose their pending mark.
TEST(FrozenParameters, TheNormOverTheTrainedSpansNeitherReadsNorZeroesTheFrozenSlots) {
  FlatParameters fp = four_parameters();
  const FrozenParameters frozen(fp, {1, 3});  // trained: gradients 10, 11 and 15..18
  fp.zero_grad();
  // This pass's gradients of the trained parameters, as backward writes them.
  fp.grad_span({0, 2}).copy_(Tensor::from({10, 11}, {2}, DType::f32));
  fp.grad_span({5, 4}).copy_(Tensor::from({15, 16, 17, 18}, {4}, DType::f32));
  const double squares = 10 * 10 + 11 * 11 + 15 * 15 + 16 * 16 + 17 * 17 + 18 * 18;
  for (auto [tokens, clip] : {std::pair<int64_t, double>{1, 0.0}, {2, 3.0}}) {
    const AveragedGradient g = measure_average_and_clip(fp, tokens, clip, frozen.trained_spans());
    ASSERT_TRUE(g.finite);
    EXPECT_DOUBLE_EQ(g.norm, std::sqrt(squares) / static_cast<double>(tokens));
    const double average = 1.0 / static_cast<double>(tokens);
    EXPECT_DOUBLE_EQ(g.factor, clip > 0 ? average * clip / (g.norm + 1e-12) : average);
  }
  EXPECT_TRUE(fp.params()[1].impl()->grad_zero_pending && fp.params()[3].impl()->grad_zero_pending)
      << "a frozen slot was zeroed";
  // No spans: the whole buffer, whose frozen slots read as zero.
  EXPECT_DOUBLE_EQ(measure_average_and_clip(fp, 1, 0.0).norm, std::sqrt(squares));
  EXPECT_FALSE(fp.params()[1].impl()->grad_zero_pending);
}

// The optimizer over the trained spans: frozen values (and their state) are never written, weight decay
// included, and every trained value gets exactly the bits of a whole-buffer update.
TEST(FrozenParameters, UpdatesOfTheTrainedSpansLeaveFrozenValuesAndMatchAWholeUpdate) {
  for (const char* name : {"adam", "sgd"}) {
    SCOPED_TRACE(name);
    FlatParameters fp = four_parameters(), whole = four_parameters();
    const FrozenParameters frozen(fp, {1, 3});  // values 2-4 and 9
    OptimizerOptions o;
    o.weight_decay = 0.5, o.momentum = std::string(name) == "sgd" ? 0.9 : 0.0;
    const auto opt = make_optimizer(name, o), whole_opt = make_optimizer(name, o);
    for (int step = 0; step < 3; ++step) {
      opt->step(fp, 0.1, 0.5, frozen.trained_spans());
      whole_opt->step(whole, 0.1, 0.5);
    }
    const std::vector<double> after = fp.data().to_vector(), want = whole.data().to_vector();
    for (int i : {2, 3, 4, 9}) EXPECT_EQ(after[static_cast<size_t>(i)], i) << "frozen value " << i;
    for (int i : {0, 1, 5, 6, 7, 8}) {
      EXPECT_EQ(after[static_cast<size_t>(i)], want[static_cast<size_t>(i)]) << "trained value " << i;
      EXPECT_NE(after[static_cast<size_t>(i)], i) << "trained value " << i;
    }
    EXPECT_NE(want[3], 3.0);  // a whole update moves the frozen values: the spans are what keeps them
  }
  FlatParameters fp = four_parameters();
  const auto sgd = make_optimizer("sgd");
  EXPECT_THROW(sgd->step(fp, 0.1, 1.0, std::vector<FlatSpan>{{8, 3}}), Error);  // past the end
}

}  // namespace
}  // namespace luong::testing
