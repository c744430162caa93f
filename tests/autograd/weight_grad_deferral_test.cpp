// Deferred weight gradients (autograd/weight_grad_deferral.h): a weight used at every step of a recurrence
// gets its gradient from one stacked GEMM. The reference is the same recurrence with a separate leaf copy
// of each weight per step (one use each, so nothing is deferred), whose per-step gradients are summed.
#include "framework/autograd/weight_grad_deferral.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "framework/ops/ops.h"
#include "tests/support/gradcheck.h"

namespace luong {
namespace {

using testing::max_abs_diff;
using testing::random_leaf;
using testing::weighted_sum;

constexpr int64_t kB = 3, kI = 4, kH = 5, kT = 6;

struct Weights {
  Variable W, U, b;  // lstm (I, 4H), (H, 4H), (4H)
  Variable V;        // (2H, H), used through two slices per step, like W_c on [c; h]
  Variable P;        // (H, I), a plain matmul per step, like input feeding
};

Weights make_weights(uint64_t seed) {
  Generator gen(seed);
  return {random_leaf(gen, {kI, 4 * kH}, -0.5, 0.5), random_leaf(gen, {kH, 4 * kH}, -0.5, 0.5),
          random_leaf(gen, {4 * kH}, -0.5, 0.5), random_leaf(gen, {2 * kH, kH}, -0.5, 0.5),
          random_leaf(gen, {kH, kI}, -0.5, 0.5)};
}

Weights copy_of(const Weights& w) {
  auto leaf = [](const Variable& v) { return Variable(v.data().clone(), true); };
  return {leaf(w.W), leaf(w.U), leaf(w.b), leaf(w.V), leaf(w.P)};
}

// A decoder-like loop: an LSTM cell, a matmul with a full weight and one with a slice of a weight.
// weights_at(t) gives the weights step t uses.
// probe, when given, is added to step 1's input only: its gradient is final midway through backward.
Variable unroll(const std::function<const Weights&(int64_t)>& weights_at, const Variable& probe = Variable()) {
  Generator gen(3);
  LstmState s{random_leaf(gen, {kB, kH}, -1, 1, false), random_leaf(gen, {kB, kH}, -1, 1, false)};
  Variable feed = random_leaf(gen, {kB, kH}, -1, 1, false);
  std::vector<Variable> outs;
  for (int64_t t = 0; t < kT; ++t) {
    const Weights& w = weights_at(t);
    Variable x = add(random_leaf(gen, {kB, kI}, -1, 1, false), matmul(feed, w.P));
    if (t == 1 && probe.defined()) x = add(x, probe);
    s = lstm_cell(x, s, w.W, w.U, w.b);
    feed = tanh(add(matmul(s.h, slice(w.V, 0, kH, kH)), matmul(feed, slice(w.V, 0, 0, kH))));
    outs.push_back(feed);
  }
  return weighted_sum(stack(outs));
}

TEST(WeightGradDeferral, StackedGemmEqualsThePerStepSum) {
  const Weights shared = make_weights(1);
  const int64_t before = WeightGradDeferral::deferred_count();
  unroll([&](int64_t) -> const Weights& { return shared; }).backward();
  // W, U and b at every step (lstm_cell), P at every step: 4 per step at least.
  EXPECT_GE(WeightGradDeferral::deferred_count() - before, 4 * kT) << "not everything was deferred";

  const Weights start = make_weights(1);
  std::vector<Weights> per_step;
  for (int64_t t = 0; t < kT; ++t) per_step.push_back(copy_of(start));
  const int64_t before_ref = WeightGradDeferral::deferred_count();
  unroll([&](int64_t t) -> const Weights& { return per_step[static_cast<size_t>(t)]; }).backward();
  // The slices of V are still two uses per step: those two may be deferred, nothing else.
  EXPECT_LE(WeightGradDeferral::deferred_count() - before_ref, 2 * kT);

  auto summed = [&](Variable Weights::*member) {
    Tensor total = Tensor::zeros((shared.*member).data().shape(), DType::f64);
    for (const Weights& w : per_step) {
      const std::vector<double> g = (w.*member).grad().to_vector(), acc = total.to_vector();
      std::vector<double> s(g.size());
      for (size_t i = 0; i < g.size(); ++i) s[i] = g[i] + acc[i];
      total = Tensor::from(s, total.shape(), DType::f64);
    }
    return total;
  };
  EXPECT_LT(max_abs_diff(shared.W.grad(), summed(&Weights::W)), 1e-12);
  EXPECT_LT(max_abs_diff(shared.U.grad(), summed(&Weights::U)), 1e-12);
  EXPECT_LT(max_abs_diff(shared.b.grad(), summed(&Weights::b)), 1e-12);
  EXPECT_LT(max_abs_diff(shared.V.grad(), summed(&Weights::V)), 1e-12);
  EXPECT_LT(max_abs_diff(shared.P.grad(), summed(&Weights::P)), 1e-12);
}

TEST(WeightGradDeferral, GradientsAreNumericallyCorrect) {
  const Weights w0 = make_weights(2);
  const auto result = testing::gradcheck(
      [](const std::vector<Variable>& in) {
        const Weights w{in[0], in[1], in[2], in[3], in[4]};
        return unroll([&](int64_t) -> const Weights& { return w; });
      },
      {w0.W, w0.U, w0.b, w0.V, w0.P});
  EXPECT_LT(result.max_rel_error, 1e-7) << result.worst;
}

TEST(WeightGradDeferral, AWeightViewMadeOnceIsCompletedBeforeItsProducerRuns) {
  // A slice of V made once and used at every step is an interior variable with many consumers: its products
  // are deferred and must be added to its gradient when its last consumer has run, before the slice's own
  // backward hands that gradient on to V (the engine's flush of a node's waiting outputs). Reference: the
  // same recurrence slicing V at every step, each slice used once, so nothing of it is deferred.
  Generator gen(5);
  const Variable V = random_leaf(gen, {2 * kH, kH}, -0.5, 0.5);
  const Variable h0 = random_leaf(gen, {kB, kH}, -1, 1, false);
  auto run = [&](const Variable& weight, bool slice_once) {
    const Variable once = slice(weight, 0, kH, kH);
    Variable h = h0;
    std::vector<Variable> outs;
    for (int64_t t = 0; t < kT; ++t) {
      h = tanh(matmul(h, slice_once ? once : slice(weight, 0, kH, kH)));
      outs.push_back(h);
    }
    weighted_sum(stack(outs)).backward();
  };
  const int64_t before = WeightGradDeferral::deferred_count();
  run(V, true);
  EXPECT_GE(WeightGradDeferral::deferred_count() - before, kT) << "the view's products were not deferred";
  const Variable reference(V.data().clone(), true);
  run(reference, false);
  EXPECT_LT(max_abs_diff(V.grad(), reference.grad()), 1e-12);
}

TEST(WeightGradDeferral, HookSeesTheCompleteGradient) {
  const Weights w = make_weights(4);
  std::vector<double> at_hook;
  w.U.impl()->grad_ready_hook = [&](VariableImpl& v) { at_hook = v.grad.to_vector(); };
  unroll([&](int64_t) -> const Weights& { return w; }).backward();
  ASSERT_FALSE(at_hook.empty()) << "the hook did not fire";
  EXPECT_EQ(at_hook, w.U.grad().to_vector());  // nothing arrived after the hook
}

TEST(WeightGradDeferral, AccumulatesAcrossPassesAndAFailedPassLeavesNothingBehind) {
  const Weights w = make_weights(5);
  unroll([&](int64_t) -> const Weights& { return w; }).backward();
  const std::vector<double> once = w.U.grad().to_vector();
  std::vector<std::vector<double>> once_all;
  for (const Variable* v : {&w.W, &w.U, &w.b, &w.V, &w.P}) once_all.push_back(v->grad().to_vector());
  unroll([&](int64_t) -> const Weights& { return w; }).backward();
  const std::vector<double> twice = w.U.grad().to_vector();
  for (size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(twice[i], 2 * once[i], 1e-12 * (1 + std::abs(once[i])));

  // A pass that throws midway: the probe's hook fires after steps T-1..1 deferred their products and
  // before step 0's cell (U's last consumer) ran.
  const Weights f = make_weights(5);
  Variable probe(Tensor::zeros({kB, kI}, DType::f64), true);
  bool u_pending_at_throw = false;
  probe.impl()->grad_ready_hook = [&](VariableImpl&) {
    u_pending_at_throw = !f.U.grad().defined();
    throw std::runtime_error("hook failed");
  };
  EXPECT_THROW(unroll([&](int64_t) -> const Weights& { return f; }, probe).backward(), std::runtime_error);
  EXPECT_TRUE(u_pending_at_throw) << "the failure came too late to test anything";
  EXPECT_EQ(WeightGradDeferral::current(), nullptr);
  for (const Variable* v : {&f.W, &f.U, &f.b, &f.V, &f.P}) v->impl()->grad = Tensor();
  unroll([&](int64_t) -> const Weights& { return f; }).backward();
  // No stale products from the failed pass: the same bits as the first clean pass, for every weight.
  size_t i = 0;
  for (const Variable* v : {&f.W, &f.U, &f.b, &f.V, &f.P}) EXPECT_EQ(v->grad().to_vector(), once_all[i++]) << "weight " << i;
}

// What a backward pass's discovery records for a variable with `uses` consumers, under a pass number no
// engine pass reaches.
constexpr uint64_t kTestPass = ~uint64_t{0};
void count_uses(const Variable& v, int uses) {
  for (int i = 0; i < uses; ++i) v.impl()->pass_uses.count_edge(kTestPass);
}

// The deferral on its own: one step's gradient g feeding a matrix weight (dW += aᵀ g) and a bias
// (db += colsum g), as an LSTM cell's dz feeds dW, dU and db. g is stacked once for all of them, the stack
// is dropped once the last of them has flushed, and the results are the per-step sums.
TEST(WeightGradDeferral, SharesOneStackOfAStepGradientAndSumsBiasColumns) {
  Generator gen(7);
  auto leaf = [&](Shape s) { return random_leaf(gen, s, -1, 1); };
  Variable W = leaf({kI, 4 * kH}), U = leaf({kH, 4 * kH}), b = leaf({4 * kH}), lone = leaf({4 * kH});
  for (const Variable* v : {&W, &U, &b, &lone}) count_uses(*v, kT);
  std::vector<Tensor> x, h, g, g_lone;
  for (int64_t t = 0; t < kT; ++t) {
    x.push_back(leaf({kB, kI}).data()), h.push_back(leaf({kB, kH}).data());
    g.push_back(leaf({kB, 4 * kH}).data()), g_lone.push_back(leaf({kB, 4 * kH}).data());
  }
  const int64_t stacked_before = WeightGradDeferral::stacked_count();
  {
    WeightGradDeferral pass(kTestPass);
    for (int64_t t = 0; t < kT; ++t) {
      ASSERT_TRUE(pass.defer(W.impl(), x[t], g[t]));
      ASSERT_TRUE(pass.defer(U.impl(), h[t], g[t]));
      ASSERT_TRUE(pass.defer_column_sum(b.impl(), g[t]));
      ASSERT_TRUE(pass.defer_column_sum(lone.impl(), g_lone[t]));
    }
    EXPECT_FALSE(pass.defer_column_sum(W.impl(), g[0])) << "a matrix is not a bias";
    EXPECT_FALSE(pass.defer_column_sum(b.impl(), x[0])) << "rows of the wrong width";
    for (Variable* v : {&U, &b, &W, &lone}) pass.flush(*v->impl());
    EXPECT_TRUE(pass.empty());
  }
  // g: one stack for W, U and b; g_lone: one for its column sum alone.
  EXPECT_EQ(WeightGradDeferral::stacked_count() - stacked_before, 2);

  auto per_step_sum = [&](const std::vector<Tensor>& a, const std::vector<Tensor>& gs, int64_t k, int64_t n) {
    std::vector<double> out(static_cast<size_t>(k * n), 0.0);
    for (int64_t t = 0; t < kT; ++t) {
      const std::vector<double> av = a.empty() ? std::vector<double>() : a[t].to_vector(), gv = gs[t].to_vector();
      for (int64_t r = 0; r < kB; ++r)
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j) out[i * n + j] += (a.empty() ? 1.0 : av[r * k + i]) * gv[r * n + j];
    }
    return out;
  };
  auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    return worst;
  };
  EXPECT_LT(near(W.grad().to_vector(), per_step_sum(x, g, kI, 4 * kH)), 1e-12);
  EXPECT_LT(near(U.grad().to_vector(), per_step_sum(h, g, kH, 4 * kH)), 1e-12);
  EXPECT_LT(near(b.grad().to_vector(), per_step_sum({}, g, 1, 4 * kH)), 1e-12);
  EXPECT_LT(near(lone.grad().to_vector(), per_step_sum({}, g_lone, 1, 4 * kH)), 1e-12);
}

// A bias column sum, deferred or not, adds the same numbers in the same order: bitwise equal in float32.
TEST(WeightGradDeferral, DeferredBiasGradientIsBitwiseThePerStepAccumulation) {
  Generator gen(11);
  const Variable b(random_leaf(gen, {4 * kH}).data().to(DType::f32), true);
  std::vector<Tensor> dz;
  for (int64_t t = 0; t < kT; ++t) dz.push_back(random_leaf(gen, {kB, 4 * kH}, -1, 1).data().to(DType::f32));
  std::vector<float> reference(static_cast<size_t>(4 * kH), 0.0f);
  for (int64_t t = 0; t < kT; ++t) {
    const std::vector<double> d = dz[t].to_vector();
    for (int64_t r = 0; r < kB; ++r)
      for (int64_t j = 0; j < 4 * kH; ++j) reference[j] += static_cast<float>(d[r * 4 * kH + j]);
  }
  {
    count_uses(b, kT);
    WeightGradDeferral pass(kTestPass);
    for (int64_t t = 0; t < kT; ++t) ASSERT_TRUE(pass.defer_column_sum(b.impl(), dz[t]));
    pass.flush(*b.impl());
  }
  const std::vector<double> got = b.grad().to_vector();
  for (int64_t j = 0; j < 4 * kH; ++j) EXPECT_EQ(static_cast<float>(got[j]), reference[j]) << "column " << j;
}

}  // namespace
}  // namespace luong
