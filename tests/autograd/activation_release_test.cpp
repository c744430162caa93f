// An interior variable's data is released once no Variable refers to it (VariableImpl, variable.h): the
// graph keeps only what each node saved for its backward. These tests watch an impl through a weak_ptr
// (the consumers' edges keep it alive) and check that gradients are unchanged by the release.
#include <gtest/gtest.h>

#include <cmath>

#include "framework/memory/allocator.h"
#include "framework/ops/ops.h"
#include "tests/support/gradcheck.h"

namespace luong {
namespace {

using testing::max_abs_diff;
using testing::random_leaf;

bool holds_data(const std::weak_ptr<VariableImpl>& w) {
  auto impl = w.lock();
  return impl && impl->data.defined();
}

TEST(ActivationRelease, AnInputNoBackwardReadsIsFreedWithItsLastHandle) {
  Generator g(41);
  Variable x = random_leaf(g, {3, 4});
  std::weak_ptr<VariableImpl> watched;
  Variable loss;
  {
    Variable y = mul_scalar(x, 2.0);  // reshape saves nothing of y, so nothing else needs y's data
    watched = y.impl();
    loss = sum(reshape(y, {12}));
    EXPECT_TRUE(holds_data(watched));
  }
  ASSERT_FALSE(watched.expired()) << "the reshape node's edge keeps the impl for the graph";
  EXPECT_FALSE(holds_data(watched)) << "no handle and no saved reader: the data should be gone";
  EXPECT_EQ(watched.lock()->data.shape(), (Shape{3, 4})) << "the shape stays for the gradient";
  loss.backward();
  for (double v : x.grad().to_vector()) EXPECT_DOUBLE_EQ(v, 2.0);
}

TEST(ActivationRelease, SavedOperandsOutliveTheReleaseAndGradientsAreExact) {
  // tanh(x) W: matmul saves tanh(x) (for dW) and tanh saves its output; both are released from the impl
  // but live on in the saved tensors, so backward reads correct values.
  Generator g(42);
  Variable x = random_leaf(g, {5, 3}), w = random_leaf(g, {3, 2});
  auto f = [](const std::vector<Variable>& in) {
    Variable h = tanh(in[0]);  // released when f returns, while the graph lives on
    return sum(mul(matmul(h, in[1]), matmul(h, in[1])));
  };
  std::weak_ptr<VariableImpl> watched;
  Variable loss;
  {
    Variable h = tanh(x);
    watched = h.impl();
    loss = sum(mul(matmul(h, w), matmul(h, w)));
  }
  EXPECT_FALSE(holds_data(watched));
  loss.backward();
  const Tensor gx = x.grad().clone(), gw = w.grad().clone();
  x.impl()->grad = Tensor(), w.impl()->grad = Tensor();
  Variable kept_h = tanh(x);  // the same function with the intermediate held by the caller throughout
  sum(mul(matmul(kept_h, w), matmul(kept_h, w))).backward();
  EXPECT_EQ(max_abs_diff(gx, x.grad()), 0.0);
  EXPECT_EQ(max_abs_diff(gw, w.grad()), 0.0);
  EXPECT_TRUE(kept_h.data().defined()) << "a handle the caller holds keeps its data";
  const testing::GradCheckResult check = testing::gradcheck(f, {x, w});
  EXPECT_LT(check.max_rel_error, 1e-7) << check.worst;
}

TEST(ActivationRelease, AnotherHandleOrAReassignmentDecides) {
  Generator g(43);
  Variable x = random_leaf(g, {4});
  Variable a = exp(x);
  std::weak_ptr<VariableImpl> watched = a.impl();
  Variable loss = sum(a);
  Variable copy = a;
  a = Variable();  // copy-assignment away from it: one handle left
  EXPECT_TRUE(holds_data(watched));
  Variable moved = std::move(copy);
  EXPECT_TRUE(holds_data(watched)) << "a move hands the data on";
  moved = mul_scalar(moved, 3.0);  // reassigning the last handle releases it
  EXPECT_FALSE(holds_data(watched));
  (void)loss;
}

TEST(ActivationRelease, LeavesAndUnrecordedResultsKeepTheirData) {
  Generator g(44);
  std::weak_ptr<VariableImpl> leaf_impl, plain_impl;
  Variable loss;
  {
    Variable p = random_leaf(g, {3});
    leaf_impl = p.impl();
    loss = sum(mul(p, p));
    NoGradGuard no_grad;
    Variable q = exp(p);  // not recorded: a leaf result, nothing consumes it
    plain_impl = q.impl();
  }
  EXPECT_TRUE(holds_data(leaf_impl)) << "a leaf's data belongs to its owner, whatever holds it";
  EXPECT_TRUE(plain_impl.expired());
  loss.backward();
}

// The fused generator + loss materialises one chunk of logits at a time: the allocator's peak over the
// forward stays far below the (N, V) buffer the unchunked op needs.
TEST(ActivationRelease, LinearCrossEntropyPeakIsAChunkNotTheWholeLogits) {
  Generator g(45);
  const int64_t rows = 256, hidden = 16, vocab = 2000;
  Variable x(random_leaf(g, {rows, hidden}).data().to(DType::f32), true);
  Variable w(random_leaf(g, {hidden, vocab}).data().to(DType::f32), true);
  std::vector<int64_t> ids(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) ids[static_cast<size_t>(r)] = (r * 37) % vocab;
  const Tensor targets = Tensor::from_ids(ids, {rows});
  const int64_t logits_bytes = rows * vocab * 4;
  auto peak_growth = [&](int64_t chunk_rows) {
    Allocator& a = allocator_for(Device::cpu());
    a.reset_peak();
    const int64_t before = a.stats().allocated;
    CrossEntropy ce = linear_cross_entropy(x, w, Variable(), targets, -100, 0.0, chunk_rows);
    const int64_t growth = a.stats().peak - before;
    ce.loss.backward();
    return growth;
  };
  const int64_t whole = peak_growth(rows), chunked = peak_growth(16);
  EXPECT_GE(whole, logits_bytes);
  EXPECT_LT(chunked, logits_bytes / 4) << "whole " << whole << " bytes, chunked " << chunked;
}

}  // namespace
}  // namespace luong
