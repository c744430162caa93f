// Borrowed interior gradients (VariableImpl::grad_shared): the first gradient an interior variable receives
// through accumulate_grad is kept by reference. These graphs make a second contribution arrive while the
// borrowed tensor is still the gradient of another variable, so writing it in place would corrupt that one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"

namespace luong {
namespace {

Variable leaf(std::vector<double> v, Shape s) { return Variable(Tensor::from(v, s, DType::f64), true); }

const std::vector<double> kX = {0.3, -0.7, 1.1};

// a = 2x and b = 3x both receive s = a + b's gradient (one tensor, borrowed twice); tanh(a) and tanh(b) add
// into a's and b's gradients in place. The engine's order depends on how the loss is assembled, so every
// order of the loss's terms is run: in some, tanh(a) writes a's gradient while b's still is the same tensor.
TEST(SharedGradient, InPlaceAccumulationCopiesTheBorrowedTensorFirst) {
  std::vector<int> order = {0, 1, 2};
  do {
    Variable x = leaf(kX, {3});
    Variable a = mul_scalar(x, 2), b = mul_scalar(x, 3);
    const Variable terms[3] = {sum(add(a, b)), sum(tanh(a)), sum(tanh(b))};
    add(terms[order[0]], add(terms[order[1]], terms[order[2]])).backward();
    const auto g = x.grad().to_vector();
    for (size_t i = 0; i < kX.size(); ++i) {
      const double t2 = std::tanh(2 * kX[i]), t3 = std::tanh(3 * kX[i]);
      EXPECT_NEAR(g[i], 5 + 2 * (1 - t2 * t2) + 3 * (1 - t3 * t3), 1e-12)
          << "element " << i << ", terms in order " << order[0] << order[1] << order[2];
    }
  } while (std::next_permutation(order.begin(), order.end()));
}

// As above, with contributions the consumer computed itself (mul's g * c, accumulate_grad_owned): they are
// added into their own buffer, which is then adopted, never into the borrowed tensor.
TEST(SharedGradient, OwnedContributionIsAddedIntoItsOwnBufferNotTheBorrowedOne) {
  const std::vector<double> cv = {1.5, -2.0, 0.25};
  std::vector<int> order = {0, 1, 2};
  do {
    Variable x = leaf(kX, {3}), c = leaf(cv, {3});
    Variable a = mul_scalar(x, 2), b = mul_scalar(x, 3);
    const Variable terms[3] = {sum(add(a, b)), sum(mul(a, c)), sum(mul(b, c))};
    add(terms[order[0]], add(terms[order[1]], terms[order[2]])).backward();
    const auto g = x.grad().to_vector(), gc = c.grad().to_vector();
    for (size_t i = 0; i < kX.size(); ++i) {
      const std::string where = "element " + std::to_string(i) + ", terms in order " + std::to_string(order[0]) +
                                std::to_string(order[1]) + std::to_string(order[2]);
      EXPECT_NEAR(g[i], 5 + 5 * cv[i], 1e-12) << where;  // d/dx (2x + 3x + 2x c + 3x c)
      EXPECT_NEAR(gc[i], 5 * kX[i], 1e-12) << where;
    }
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(SharedGradient, VariableUsedTwiceByOneNodeGetsBothContributions) {
  Variable x = leaf(kX, {3});
  Variable a = mul_scalar(x, 2);
  Variable y = add(a, a);     // both contributions are the same tensor
  sum(mul(y, y)).backward();  // d/dx (4x)^2 = 32x
  const auto g = x.grad().to_vector();
  for (size_t i = 0; i < kX.size(); ++i) EXPECT_NEAR(g[i], 32 * kX[i], 1e-12) << "element " << i;
}

// Leaves keep their gradient past the pass, and optimizers scale it in place, so two leaves fed the same
// tensor by one add must not share it.
TEST(SharedGradient, LeavesGetTheirOwnCopies) {
  Variable p = leaf(kX, {3}), q = leaf({1, 2, 3}, {3});
  sum(add(p, q)).backward();
  EXPECT_NE(p.grad().data<double>(), q.grad().data<double>());
  Tensor pg = p.grad();
  scale_(pg, 10.0);
  EXPECT_EQ(q.grad().to_vector(), (std::vector<double>{1, 1, 1}));
}

// The root's gradient is borrowed from the caller, who may reuse the tensor: backward must not write it.
TEST(SharedGradient, BackwardLeavesTheCallersOutputGradientUnchanged) {
  Variable x = leaf(kX, {3});
  Variable y = mul_scalar(x, 2);
  Variable z = add(y, y);
  Tensor seed = Tensor::from({1.0, 2.0, 3.0}, {3}, DType::f64);
  z.backward(seed);
  EXPECT_EQ(seed.to_vector(), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{4, 8, 12}));
}

}  // namespace
}  // namespace luong
