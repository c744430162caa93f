// N ranks with B examples each give the same weights as one process with the whole batch of N*B
// (ARCHITECTURE.md, "Distributed"): the model is built from engine ops, each rank takes its share of a
// fixed global batch (with padding, so token counts differ per rank), gradients are summed by the Reducer
// and divided by the global token count, and a few SGD steps are taken. Every rank also computes the
// single-process run on the full batch locally and compares, in float64.
#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/flat_parameters.h"
#include "framework/dist/parameter_sync.h"
#include "framework/dist/reducer.h"
#include "framework/dist/token_average.h"
#include "framework/ops/ops.h"
#include "framework/ops/tensor_math.h"
#include "tests/dist/dist_support.h"

namespace luong::testing {
namespace {

constexpr int64_t kVocab = 11, kEmbed = 5, kHidden = 7, kLen = 6, kBatch = 4, kPad = 0, kIgnore = -100;
constexpr int kSteps = 3;
constexpr double kLr = 0.5;

// The global batch: source ids (kBatch, kLen) padded with kPad, targets with kIgnore at padding. Row
// lengths 6, 5, 2, 1: on 2 ranks, rank 0 has 11 target tokens and rank 1 has 3.
struct Batch {
  std::vector<int64_t> src, tgt;
};

Batch global_batch() {
  const int64_t lengths[kBatch] = {6, 5, 2, 1};
  Batch b;
  for (int64_t i = 0; i < kBatch; ++i)
    for (int64_t t = 0; t < kLen; ++t) {
      const bool real = t < lengths[i];
      b.src.push_back(real ? 1 + (3 * i + 5 * t) % (kVocab - 1) : kPad);
      b.tgt.push_back(real ? (7 * i + 2 * t + 1) % kVocab : kIgnore);
    }
  return b;
}

// E (vocab, embed), W1 (embed, hidden), b1 (hidden), W2 (hidden, vocab): the same values on every rank.
std::vector<Variable> init_params() {
  Generator gen(2024);
  auto leaf = [&](const Shape& s, const char* name) {
    return Variable(Tensor::from(uniform_values(gen, shape_numel(s), -0.5, 0.5), s, DType::f64), true, name);
  };
  return {leaf({kVocab, kEmbed}, "emb"), leaf({kEmbed, kHidden}, "w1"), leaf({kHidden}, "b1"),
          leaf({kHidden, kVocab}, "w2")};
}

// Forward over rows [first, first + rows) of the batch: summed token loss and token count.
CrossEntropy forward(const std::vector<Variable>& p, const Batch& batch, int64_t first, int64_t rows) {
  const std::vector<int64_t> src(batch.src.begin() + first * kLen, batch.src.begin() + (first + rows) * kLen);
  const std::vector<int64_t> tgt(batch.tgt.begin() + first * kLen, batch.tgt.begin() + (first + rows) * kLen);
  Variable x = embedding(p[0], Tensor::from_ids(src, {rows, kLen}), kPad);  // (rows, len, embed)
  Variable h = tanh(add(matmul(x, p[1]), p[2]));                            // (rows, len, hidden)
  Variable logits = reshape(matmul(h, p[3]), {rows * kLen, kVocab});        // (rows * len, vocab)
  return cross_entropy(logits, Tensor::from_ids(tgt, {rows * kLen}), kIgnore);
}

TEST(DataParallel, RanksWithHalfBatchesEqualOneProcessWithTheWholeBatch) {
  auto pg = make_test_group();
  const int n = pg->size(), r = pg->rank();
  if (kBatch % n != 0) GTEST_SKIP() << "the global batch of " << kBatch << " does not split over " << n << " ranks";
  const Batch batch = global_batch();
  const int64_t rows = kBatch / n;

  // Distributed run. Ranks other than 0 start from different values: broadcast must fix that.
  std::vector<Variable> dist_params = init_params();
  if (r != 0)
    for (auto& p : dist_params) p.data().fill_(0.3 * r);
  FlatParameters dist(dist_params, Device::cpu());
  broadcast_parameters(dist, *pg);
  check_parameters_identical(dist, *pg);
  ReducerOptions opt;
  opt.first_bucket_mb = opt.bucket_mb = 200.0 / (1024.0 * 1024.0);  // several buckets
  Reducer reducer(dist, *pg, opt);
  std::vector<double> dist_loss;
  for (int step = 0; step < kSteps; ++step) {
    dist.zero_grad();
    CrossEntropy ce = forward(dist_params, batch, r * rows, rows);
    ce.loss.backward();
    reducer.finish();
    const StepTotals totals = all_reduce_step_totals(*pg, ce.loss.data().item(), ce.tokens);
    EXPECT_EQ(totals.tokens, 14);
    scale_gradients_by_tokens(dist, totals.tokens);
    add_(dist.data(), dist.grad(), -kLr);
    dist_loss.push_back(totals.loss_sum / static_cast<double>(totals.tokens));
  }
  check_parameters_identical(dist, *pg);

  // The same steps in one process on the whole batch, no communication.
  std::vector<Variable> ref_params = init_params();
  FlatParameters ref(ref_params, Device::cpu());
  const std::vector<double> initial = ref.data().to_vector();
  for (int step = 0; step < kSteps; ++step) {
    ref.zero_grad();
    CrossEntropy ce = forward(ref_params, batch, 0, kBatch);
    ce.loss.backward();
    ASSERT_EQ(ce.tokens, 14);
    scale_gradients_by_tokens(ref, ce.tokens);
    add_(ref.data(), ref.grad(), -kLr);
    const double loss = ce.loss.data().item() / static_cast<double>(ce.tokens);
    EXPECT_NEAR(dist_loss[static_cast<size_t>(step)], loss, 1e-12 * std::abs(loss)) << "step " << step;
  }

  const std::vector<double> got = dist.data().to_vector(), want = ref.data().to_vector();
  double max_rel = 0.0, max_change = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_rel = std::max(max_rel, std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i])));
    max_change = std::max(max_change, std::abs(want[i] - initial[i]));
  }
  EXPECT_LE(max_rel, 1e-6) << "on " << n << " ranks";
  EXPECT_GT(max_change, 1e-2) << "training did not move the parameters: the comparison would be vacuous";
}

}  // namespace
}  // namespace luong::testing
