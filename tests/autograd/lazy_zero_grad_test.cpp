// FlatParameters::zero_grad marks each gradient as a pending zero instead of clearing the buffer
// (VariableImpl::grad_zero_pending). The buffer still holds the last step's values, so every path that
// writes a gradient must overwrite rather than add, and every reader must see zeros where nothing arrived.
// Each test fills the buffer with a previous pass first, so stale values would show.
#include <gtest/gtest.h>

#include <functional>

#include "framework/autograd/flat_parameters.h"
#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"
#include "tests/support/gradcheck.h"

namespace luong {
namespace {

using testing::random_leaf;
using testing::weighted_sum;

constexpr int64_t kB = 3, kI = 4, kH = 5, kT = 4, kV = 6;

struct Params {
  Variable W, U, b;  // an LSTM cell used at every step: its weight gradients take the deferred, stacked GEMM
  Variable P;        // a matmul weight used once: accumulate_weight_grad's direct GEMM
  Variable E;        // an embedding table: a scatter into a zeroed slot (grad_slot)
  Variable unused;   // in the flat buffer, never in the graph
  std::vector<Variable> all() const { return {W, U, b, P, E, unused}; }
};

Params make_params() {
  Generator gen(11);
  return {random_leaf(gen, {kI, 4 * kH}, -0.5, 0.5), random_leaf(gen, {kH, 4 * kH}, -0.5, 0.5),
          random_leaf(gen, {4 * kH}, -0.5, 0.5),     random_leaf(gen, {kH, kH}, -0.5, 0.5),
          random_leaf(gen, {kV, kI}, -0.5, 0.5),     random_leaf(gen, {3}, -0.5, 0.5)};
}

// One pass over a small recurrence that reaches every kind of gradient writer; seed varies the inputs.
void run_pass(const Params& p, uint64_t seed) {
  Generator gen(seed);
  LstmState s{random_leaf(gen, {kB, kH}, -1, 1, false), random_leaf(gen, {kB, kH}, -1, 1, false)};
  std::vector<Variable> outs;
  for (int64_t t = 0; t < kT; ++t) {
    const int64_t i = static_cast<int64_t>(seed) + t;
    Tensor ids = Tensor::from_ids({i % kV, (2 * t + 1) % kV, 0}, {kB});
    s = lstm_cell(embedding(p.E, ids), s, p.W, p.U, p.b);
    outs.push_back(s.h);
  }
  add(weighted_sum(stack(outs)), weighted_sum(matmul(s.h, p.P))).backward();
}

std::vector<std::vector<double>> grads_of(const Params& p) {
  std::vector<std::vector<double>> out;
  for (const Variable& v : p.all()) out.push_back(v.grad().to_vector());
  return out;
}

// The gradients of one pass from buffers that really are zero: a new model with the same values.
std::vector<std::vector<double>> reference(uint64_t seed, int passes = 1) {
  Params p = make_params();
  FlatParameters flat(p.all(), Device::cpu());
  for (int i = 0; i < passes; ++i) run_pass(p, seed);
  return grads_of(p);
}

TEST(LazyZeroGrad, NextPassOverwritesTheStaleValuesOfEveryKindOfWriter) {
  Params p = make_params();
  FlatParameters flat(p.all(), Device::cpu());
  run_pass(p, 1);
  run_pass(p, 2);  // the buffer now holds a sum the next pass must not see
  flat.zero_grad();
  run_pass(p, 3);
  const auto got = grads_of(p), want = reference(3);
  const char* names[] = {"W", "U", "b", "P", "E", "unused"};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "parameter " << names[i];
  EXPECT_EQ(got[5], std::vector<double>(3, 0.0));
}

TEST(LazyZeroGrad, SecondPassAfterZeroGradAccumulates) {
  Params p = make_params();
  FlatParameters flat(p.all(), Device::cpu());
  run_pass(p, 1);
  flat.zero_grad();
  run_pass(p, 4);
  run_pass(p, 4);
  const auto got = grads_of(p), want = reference(4, 2);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "parameter " << i;
}

TEST(LazyZeroGrad, FlatBufferReadsZerosWhereNothingArrived) {
  Params p = make_params();
  FlatParameters flat(p.all(), Device::cpu());
  run_pass(p, 1);
  flat.zero_grad();
  EXPECT_EQ(sum_squares(flat.grad()), 0.0);  // read straight after zero_grad: all zeros
  run_pass(p, 1);
  flat.zero_grad();
  Variable x(Tensor::from({1.0, 2.0}, {1, 2}, DType::f64));
  sum(matmul(x, slice(p.P, 0, 0, 2))).backward();  // only P gets a gradient: rows 0..1 ones-like, the rest 0
  std::vector<double> want(static_cast<size_t>(flat.numel()), 0.0);
  const int64_t p_at = flat.offset(3);
  for (int64_t col = 0; col < kH; ++col) {
    want[static_cast<size_t>(p_at + col)] = 1.0;
    want[static_cast<size_t>(p_at + kH + col)] = 2.0;
  }
  EXPECT_EQ(flat.grad().to_vector(), want);
}

// grad_span, the reader of part of the buffer (a reducer bucket, the trained spans): it writes the pending
// zeros of the parameters it overlaps only, so the others' first contributions are still written, not added
// to zeros written early.
TEST(LazyZeroGrad, AGradSpanZeroesOnlyTheParametersItOverlaps) {
  Params p = make_params();
  FlatParameters flat(p.all(), Device::cpu());
  run_pass(p, 1);
  flat.zero_grad();
  const int64_t from = flat.offset(2) - 1, to = flat.offset(3) + 1;  // U's last value to P's first
  Tensor span = flat.grad_span({from, to - from});
  EXPECT_EQ(span.to_vector(), std::vector<double>(static_cast<size_t>(to - from), 0.0));
  std::vector<bool> pending;
  for (const Variable& v : p.all()) pending.push_back(v.impl()->grad_zero_pending);
  EXPECT_EQ(pending, (std::vector<bool>{true, false, false, false, true, true}));  // W U b P E unused
  run_pass(p, 3);
  const auto got = grads_of(p), want = reference(3);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "parameter " << i;
  EXPECT_THROW(flat.grad_span({flat.numel() - 1, 2}), Error);
  EXPECT_THROW(flat.grad_span({-1, 1}), Error);
}

TEST(LazyZeroGrad, GradReadyHookSeesTheFinalGradientNotTheStaleOne) {
  Params p = make_params();
  FlatParameters flat(p.all(), Device::cpu());
  run_pass(p, 1);
  flat.zero_grad();
  std::vector<std::vector<double>> at_hook(6);
  const auto all = p.all();
  for (size_t i = 0; i < all.size(); ++i)
    Variable(all[i]).set_grad_ready_hook([&, i](VariableImpl& v) { at_hook[i] = v.grad.to_vector(); });
  run_pass(p, 5);
  const auto want = reference(5);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(at_hook[i], want[i]) << "parameter " << i;
}

}  // namespace
}  // namespace luong
