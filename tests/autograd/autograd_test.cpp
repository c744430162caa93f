// Graph semantics: accumulation across passes, no-grad, shared inputs, hooks, flat parameters, errors.
#include <gtest/gtest.h>

#include "framework/autograd/flat_parameters.h"
#include "framework/autograd/node.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"
#include "framework/optim/average_and_clip.h"
#include "tests/support/gradcheck.h"

namespace luong {
namespace {

using testing::max_abs_diff;

Variable leaf(std::vector<double> v, Shape s, const std::string& name = {}) {
  return Variable(Tensor::from(v, s, DType::f64), true, name);
}

TEST(Autograd, GradientsAccumulateOverTwoBackwardPasses) {
  Variable x = leaf({1, 2, 3}, {3});
  sum(mul(x, x)).backward();  // d/dx = 2x
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{2, 4, 6}));
  sum(mul_scalar(x, 3)).backward();  // += 3
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{5, 7, 9}));
}

TEST(Autograd, SharedSubexpressionReceivesAllContributions) {
  Variable x = leaf({0.5, -1}, {2});
  Variable t = tanh(x);
  Variable y = sum(add(mul(t, t), t));  // d/dx = (2t + 1)(1 - t^2)
  y.backward();
  auto g = x.grad().to_vector();
  for (int i = 0; i < 2; ++i) {
    const double tv = std::tanh(i == 0 ? 0.5 : -1.0);
    EXPECT_NEAR(g[static_cast<size_t>(i)], (2 * tv + 1) * (1 - tv * tv), 1e-12);
  }
}

TEST(Autograd, NoGradScopeRecordsNothing) {
  Variable x = leaf({1, 2}, {2});
  {
    NoGradGuard guard;
    Variable y = mul(x, x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_leaf());
  }
  EXPECT_TRUE(GradMode::enabled());
  Variable z = mul(x, x);
  EXPECT_TRUE(z.requires_grad());
  EXPECT_FALSE(z.is_leaf());
}

TEST(Autograd, BackwardOnNonScalarNeedsAGradient) {
  Variable x = leaf({1, 2}, {2});
  EXPECT_THROW(mul(x, x).backward(), Error);
  Variable y = mul(x, x);
  y.backward(Tensor::from({1, 10}, {2}, DType::f64));
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{2, 40}));
}

TEST(Autograd, GraphIsReleasedAfterBackward) {
  Variable x = leaf({1, 2}, {2});
  Variable y = sum(tanh(x));
  std::weak_ptr<Node> node = y.impl()->grad_fn;
  std::weak_ptr<VariableImpl> interior = node.lock()->inputs()[0];  // tanh's output
  y.backward();
  EXPECT_TRUE(interior.expired()) << "intermediate variables must be freed after backward";
  EXPECT_TRUE(node.lock()->inputs().empty()) << "edges must be dropped after backward";
}

// A node whose backward fails, as a real one may (a NaN check, a device error).
struct FailingBackward : Node {
  const char* name() const override { return "FailingBackward"; }
  void backward() override { LUONG_FAIL("FailingBackward: backward failed on purpose"); }
};

TEST(Autograd, APassThatThrewLeavesNoStateForTheNextPass) {
  // y's node is discovered by the first pass, which throws before running it; the second pass, from another
  // root, reaches y's node again and must count it afresh (engine.cpp's per-node bookkeeping is tagged with
  // its pass), giving the exact gradient.
  Variable x = leaf({0.5, -1}, {2});
  Variable y = mul(x, x);
  Variable failing = sum(Node::attach(std::make_shared<FailingBackward>(), {y}, y.data().clone()));
  EXPECT_THROW(failing.backward(), Error);
  const bool no_gradient = !x.grad().defined() || x.grad().to_vector() == std::vector<double>{0, 0};
  EXPECT_TRUE(no_gradient) << "no gradient reaches x through the failed pass";
  Variable t = tanh(y);
  sum(add(t, y)).backward();  // d/dx = (1 - tanh(x^2)^2 + 1) 2x
  auto g = x.grad().to_vector();
  for (int i = 0; i < 2; ++i) {
    const double xv = i == 0 ? 0.5 : -1.0, tv = std::tanh(xv * xv);
    EXPECT_NEAR(g[static_cast<size_t>(i)], (2 - tv * tv) * 2 * xv, 1e-12);
  }
}

TEST(Autograd, HooksFireOncePerParameterInReverseOrder) {
  // Three parameters used in sequence: backward reaches the last-used one first.
  Variable w1 = leaf({0.5, 0.1, 0.2, 0.3}, {2, 2}, "w1");
  Variable w2 = leaf({0.4, -0.1, 0.2, 0.3}, {2, 2}, "w2");
  Variable w3 = leaf({0.1, 0.9, -0.2, 0.3}, {2, 2}, "w3");
  std::vector<std::string> fired;
  for (Variable* w : {&w1, &w2, &w3}) w->set_grad_ready_hook([&](VariableImpl& p) { fired.push_back(p.name); });
  Variable x(Tensor::from({1, 2}, {1, 2}, DType::f64));
  for (int pass = 0; pass < 2; ++pass) {
    fired.clear();
    // w1 is used twice (at the start and again at the end): its hook must wait for both uses.
    Variable h = tanh(matmul(x, w1));
    h = tanh(matmul(h, w2));
    h = tanh(matmul(h, w3));
    h = matmul(h, w1);
    sum(h).backward();
    EXPECT_EQ(fired, (std::vector<std::string>{"w3", "w2", "w1"})) << "pass " << pass;
  }
}

TEST(Autograd, HookSeesTheFinalGradient) {
  Variable w = leaf({1, 2}, {2}, "w");
  std::vector<double> seen;
  w.set_grad_ready_hook([&](VariableImpl& p) { seen = p.grad.to_vector(); });
  sum(add(mul(w, w), mul_scalar(w, 3))).backward();  // 2w + 3
  EXPECT_EQ(seen, (std::vector<double>{5, 7}));
}

TEST(PassUses, CountsBelongToOnePassAndTheLastDeliveryCompletes) {
  PassUses uses;
  EXPECT_EQ(uses.in(1), 0) << "a variable no pass has seen";
  for (int i = 0; i < 3; ++i) uses.count_edge(1);
  EXPECT_EQ(uses.in(1), 3);
  EXPECT_EQ(uses.in(2), 0) << "counts of pass 1 read as none in pass 2";
  EXPECT_FALSE(uses.deliver());
  EXPECT_FALSE(uses.deliver());
  EXPECT_TRUE(uses.deliver()) << "the third of three edges is the last";
  // A later pass counts afresh.
  uses.count_edge(2);
  EXPECT_EQ(uses.in(2), 1);
  EXPECT_EQ(uses.in(1), 0);
  EXPECT_TRUE(uses.deliver());
}

TEST(FlatParameters, ParamsAndGradsAreViewsIntoOneBuffer) {
  Variable a = leaf({1, 2, 3, 4}, {2, 2}, "a");
  Variable b = leaf({5, 6}, {2}, "b");
  FlatParameters flat({a, b}, Device::cpu());
  EXPECT_EQ(flat.numel(), 6);
  EXPECT_EQ(flat.data().to_vector(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(a.data().shares_storage(flat.data()));
  EXPECT_TRUE(b.grad().shares_storage(flat.grad()));
  // Backward writes straight into the flat gradient.
  Variable x(Tensor::from({1, 1}, {1, 2}, DType::f64));
  sum(add(matmul(x, a), b)).backward();
  EXPECT_EQ(flat.grad().to_vector(), (std::vector<double>{1, 1, 1, 1, 1, 1}));
  // The optimizer-style update on the flat span is visible through the parameters.
  add_(flat.data(), flat.grad(), -0.5);
  EXPECT_EQ(a.data().to_vector(), (std::vector<double>{0.5, 1.5, 2.5, 3.5}));
  flat.zero_grad();
  EXPECT_EQ(b.grad().to_vector(), (std::vector<double>{0, 0}));
}

TEST(TensorMath, ClipGradNormScalesToMaxNorm) {
  Tensor g = Tensor::from({3, 4}, {2}, DType::f64);  // norm 5
  EXPECT_DOUBLE_EQ(clip_grad_norm_(g, 1.0), 5.0);
  EXPECT_NEAR(global_norm(g), 1.0, 1e-9);
  Tensor small = Tensor::from({0.3, 0.4}, {2}, DType::f64);
  clip_grad_norm_(small, 1.0);
  EXPECT_EQ(small.to_vector(), (std::vector<double>{0.3, 0.4}));  // untouched below the threshold
  Tensor bad = Tensor::from({1.0, std::nan("")}, {2}, DType::f32);
  EXPECT_TRUE(has_non_finite(bad));
}

TEST(Errors, ShapeMismatchNamesOpAndBothShapes) {
  Variable a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Variable b = leaf({1, 2, 3, 4}, {2, 2});
  try {
    matmul(a, b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matmul: cannot multiply (2, 3) by (2, 2)"), std::string::npos) << e.what();
  }
  try {
    add(a, b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("add: shapes (2, 3) and (2, 2) do not broadcast"), std::string::npos)
        << e.what();
  }
  try {
    embedding(b, Tensor::from_ids({0, 7}, {2}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("id 7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace luong
