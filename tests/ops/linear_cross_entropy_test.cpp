// The fused generator + loss (ops/linear_cross_entropy.cpp) against its composition matmul + add +
// cross_entropy: exact in float64, within float32 parity in float32 (which takes the vectorised exp of
// kernels/cpu/vec_math.h); plus the in-place kernels' thread-count determinism and the exp's accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "framework/core/capture_guard.h"
#include "framework/kernels/cpu/cross_entropy_inplace.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/vec_math.h"
#include "framework/ops/ops.h"
#include "tests/support/gradcheck.h"

namespace luong {
namespace {

using testing::max_abs_diff;
using testing::random_leaf;

struct Result {
  double loss = 0.0;
  int64_t tokens = 0;
  std::vector<Tensor> grads;
};

// inputs: x (N, H), W (H, V), b (V) or none; all float64 leaves, converted to `dtype` for the run.
// chunk_rows: the fused op's chunking (0 = its default); upstream: the gradient backward starts from.
Result run(bool fused, const std::vector<Variable>& in64, const std::vector<int64_t>& targets, double eps,
           DType dtype, int64_t chunk_rows = 0, double upstream = 1.0) {
  std::vector<Variable> in;
  for (const auto& v : in64) in.push_back(Variable(v.data().to(dtype), true));
  const Tensor t = Tensor::from_ids(targets, {static_cast<int64_t>(targets.size())});
  const Variable bias = in.size() > 2 ? in[2] : Variable();
  CrossEntropy ce;
  if (fused) {
    ce = linear_cross_entropy(in[0], in[1], bias, t, -1, eps, chunk_rows);
  } else {
    Variable logits = matmul(in[0], in[1]);
    if (bias.defined()) logits = add(logits, bias);
    ce = cross_entropy(logits, t, -1, eps);
  }
  if (upstream == 1.0)
    ce.loss.backward();
  else
    mul_scalar(ce.loss, upstream).backward();
  Result r{ce.loss.data().item(), ce.tokens, {}};
  for (const auto& v : in) r.grads.push_back(v.grad().to(DType::f64));
  return r;
}

double max_abs(const Tensor& t) {
  double m = 0.0;
  for (double v : t.to_vector()) m = std::max(m, std::fabs(v));
  return m;
}

TEST(LinearCrossEntropy, EqualsCompositionInFloat64) {
  Generator g(31);
  const std::vector<int64_t> targets{3, 0, 8, -1, 5, 0, 8};  // -1 = ignore
  for (bool with_bias : {true, false}) {
    for (double eps : {0.0, 0.1}) {
      // Reserved and pushed, not brace-initialised then grown: GCC 12 at -O3 reports a false out-of-bounds read
      // of the initializer list when the vector reallocates (-Warray-bounds, an error in CI).
      std::vector<Variable> in;
      in.reserve(3);
      in.push_back(random_leaf(g, {7, 5}, -2, 2));
      in.push_back(random_leaf(g, {5, 9}));
      if (with_bias) in.push_back(random_leaf(g, {9}));
      const Result fused = run(true, in, targets, eps, DType::f64);
      const Result composed = run(false, in, targets, eps, DType::f64);
      EXPECT_EQ(fused.tokens, 6);
      EXPECT_NEAR(fused.loss, composed.loss, 1e-12) << "bias " << with_bias << " eps " << eps;
      for (size_t k = 0; k < in.size(); ++k)
        EXPECT_LT(max_abs_diff(fused.grads[k], composed.grads[k]), 1e-13) << "input " << k << " eps " << eps;
    }
  }
}

// float32 at the generator's real width, on the vectorised exp path: within the float32 parity budget of
// the float64 composition (the same 1e-5 relative bound the PyTorch parity check uses).
// Chunked: one row at a time, uneven chunks (3 + 3 + 1, the ignored row inside one), all rows at once; with
// the trainer's upstream gradient 1 and with another one, which the op applies after the chunks.
TEST(LinearCrossEntropy, ChunksOfAnySizeEqualTheCompositionInFloat64) {
  Generator g(35);
  const std::vector<int64_t> targets{3, 0, 8, -1, 5, 0, 8};
  std::vector<Variable> in{random_leaf(g, {7, 5}, -2, 2), random_leaf(g, {5, 9}), random_leaf(g, {9})};
  for (double upstream : {1.0, -0.37}) {
    const Result composed = run(false, in, targets, 0.1, DType::f64, 0, upstream);
    for (int64_t chunk : {1, 3, 7, 100}) {
      const Result fused = run(true, in, targets, 0.1, DType::f64, chunk, upstream);
      EXPECT_NEAR(fused.loss, composed.loss, 1e-12) << "chunk " << chunk;
      for (size_t k = 0; k < in.size(); ++k)
        EXPECT_LT(max_abs_diff(fused.grads[k], composed.grads[k]), 1e-13)
            << "input " << k << " chunk " << chunk << " upstream " << upstream;
    }
  }
}

TEST(LinearCrossEntropy, NoRowsGiveZeroLossAndZeroGradients) {
  Generator g(36);
  Variable x = random_leaf(g, {0, 5}), w = random_leaf(g, {5, 9}), b = random_leaf(g, {9});
  CrossEntropy ce = linear_cross_entropy(x, w, b, Tensor::from_ids({}, {0}), -1, 0.1);
  EXPECT_EQ(ce.tokens, 0);
  EXPECT_EQ(ce.loss.data().item(), 0.0);
  ce.loss.backward();
  EXPECT_EQ(max_abs(w.grad()), 0.0);
  EXPECT_EQ(max_abs(b.grad()), 0.0);
}

// Rows whose target is ignored (a batch's padding) are left out of the generator's products on a CPU: the
// result equals the composition over the kept rows alone, whatever the ignored rows of x hold (here NaN and
// infinity, which any product reading them would carry into dW as NaN), their dx rows are exactly zero, and a batch
// with every row ignored gives zero loss and zero gradients.
TEST(LinearCrossEntropy, IgnoredRowsAreLeftOutOfEveryProduct) {
  Generator g(37);
  const int64_t N = 9, H = 5, V = 11;
  const std::vector<int64_t> targets{3, -1, 0, 10, -1, -1, 5, 0, -1};
  const std::vector<Variable> full{random_leaf(g, {N, H}, -2, 2), random_leaf(g, {H, V}), random_leaf(g, {V})};
  std::vector<double> x = full[0].data().to_vector(), x_kept;
  std::vector<int64_t> targets_kept;
  for (int64_t r = 0; r < N; ++r) {
    if (targets[static_cast<size_t>(r)] == -1) {
      for (int64_t c = 0; c < H; ++c) x[static_cast<size_t>(r * H + c)] = r == 1 ? std::nan("") : HUGE_VAL;
      continue;
    }
    x_kept.insert(x_kept.end(), x.begin() + r * H, x.begin() + (r + 1) * H);
    targets_kept.push_back(targets[static_cast<size_t>(r)]);
  }
  const int64_t kept = static_cast<int64_t>(targets_kept.size());
  const std::vector<Variable> in{Variable(Tensor::from(x, {N, H}, DType::f64), true), full[1], full[2]};
  const std::vector<Variable> in_kept{Variable(Tensor::from(x_kept, {kept, H}, DType::f64), true), full[1], full[2]};
  const Result composed = run(false, in_kept, targets_kept, 0.1, DType::f64);
  for (int64_t chunk : {1, 2, 100}) {
    const Result fused = run(true, in, targets, 0.1, DType::f64, chunk);
    EXPECT_EQ(fused.tokens, kept);
    EXPECT_NEAR(fused.loss, composed.loss, 1e-12) << "chunk " << chunk;
    for (const Tensor& grad : fused.grads)  // (max_abs_diff would pass over a NaN)
      for (double v : grad.to_vector()) ASSERT_TRUE(std::isfinite(v)) << "chunk " << chunk;
    EXPECT_LT(max_abs_diff(fused.grads[1], composed.grads[1]), 1e-13) << "dW, chunk " << chunk;
    EXPECT_LT(max_abs_diff(fused.grads[2], composed.grads[2]), 1e-13) << "db, chunk " << chunk;
    const std::vector<double> dx = fused.grads[0].to_vector(), dx_kept = composed.grads[0].to_vector();
    size_t next = 0;
    for (int64_t r = 0; r < N; ++r)
      for (int64_t c = 0; c < H; ++c) {
        const double got = dx[static_cast<size_t>(r * H + c)];
        if (targets[static_cast<size_t>(r)] == -1)
          EXPECT_EQ(got, 0.0) << "ignored row " << r << ", chunk " << chunk;
        else
          EXPECT_NEAR(got, dx_kept[next++], 1e-13) << "row " << r << ", chunk " << chunk;
      }
  }
  const Result none = run(true, in, std::vector<int64_t>(N, -1), 0.1, DType::f64);
  EXPECT_EQ(none.tokens, 0);
  EXPECT_EQ(none.loss, 0.0);
  for (const Tensor& grad : none.grads) EXPECT_EQ(max_abs(grad), 0.0);
}

// Row losses: -log softmax(x W + b)[target] per row, 0 for ignored rows, in row order, whether the rows are
// chunked or (on a CPU) packed without the ignored ones; the same from the unfused op.
TEST(LinearCrossEntropy, RowLossesAreEachRowsNegativeLogProbabilityOfItsTarget) {
  Generator g(41);
  const int64_t N = 7, H = 4, V = 9;
  const std::vector<int64_t> targets{2, -1, 8, 0, -1, 4, 4};
  const Variable x = random_leaf(g, {N, H}, -2, 2), w = random_leaf(g, {H, V}), b = random_leaf(g, {V});
  const Tensor t = Tensor::from_ids(targets, {N});
  NoGradGuard no_grad;
  const std::vector<double> logp = log_softmax(add(matmul(x, w), b)).data().to_vector();
  std::vector<double> expected(static_cast<size_t>(N), 0.0);
  for (int64_t r = 0; r < N; ++r)
    if (targets[static_cast<size_t>(r)] != -1)
      expected[static_cast<size_t>(r)] = -logp[static_cast<size_t>(r * V + targets[static_cast<size_t>(r)])];
  auto expect_rows = [&](const CrossEntropy& ce, const std::string& what) {
    ASSERT_EQ(ce.row_losses.shape(), Shape{N}) << what;
    const std::vector<double> got = ce.row_losses.to_vector();
    double sum = 0.0;
    for (int64_t r = 0; r < N; ++r) {
      EXPECT_NEAR(got[static_cast<size_t>(r)], expected[static_cast<size_t>(r)], 1e-12) << what << ", row " << r;
      sum += got[static_cast<size_t>(r)];
    }
    EXPECT_NEAR(sum, ce.loss.data().item(), 1e-12) << what;
  };
  for (int64_t chunk : {1, 3, 100}) expect_rows(linear_cross_entropy(x, w, b, t, -1, 0.0, chunk), "fused");
  expect_rows(cross_entropy(add(matmul(x, w), b), t, -1), "unfused");
}

TEST(LinearCrossEntropy, Float32WithinParityOfFloat64) {
  Generator g(32);
  const int64_t N = 37, H = 29, V = 8003;
  std::vector<Variable> in{random_leaf(g, {N, H}, -1, 1), random_leaf(g, {H, V}, -0.5, 0.5), random_leaf(g, {V})};
  std::vector<int64_t> targets(static_cast<size_t>(N));
  for (int64_t r = 0; r < N; ++r) targets[static_cast<size_t>(r)] = (r * 977) % V;
  targets[4] = -1;
  const Result f32 = run(true, in, targets, 0.1, DType::f32);
  const Result ref = run(false, in, targets, 0.1, DType::f64);
  EXPECT_NEAR(f32.loss, ref.loss, 1e-5 * std::fabs(ref.loss));
  for (size_t k = 0; k < in.size(); ++k)
    EXPECT_LT(max_abs_diff(f32.grads[k], ref.grads[k]), 1e-5 * max_abs(ref.grads[k])) << "input " << k;
}

TEST(LinearCrossEntropy, WithoutGradientRecordsNoGraph) {
  Generator g(33);
  std::vector<Variable> in{random_leaf(g, {4, 3}), random_leaf(g, {3, 6}), random_leaf(g, {6})};
  const Tensor t = Tensor::from_ids({1, 5, 0, 2}, {4});
  const double with_grad = linear_cross_entropy(in[0], in[1], in[2], t).loss.data().item();
  NoGradGuard no_grad;
  CrossEntropy ce = linear_cross_entropy(in[0], in[1], in[2], t);
  EXPECT_DOUBLE_EQ(ce.loss.data().item(), with_grad);
  EXPECT_TRUE(ce.loss.is_leaf());
}

TEST(LinearCrossEntropy, ErrorsNameTheProblem) {
  Generator g(34);
  Variable x = random_leaf(g, {3, 4}), w = random_leaf(g, {4, 5});
  try {
    linear_cross_entropy(x, w, Variable(), Tensor::from_ids({1, 7, 0}, {3}));
    FAIL() << "no error for a target outside the vocabulary";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target 7 at row 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(linear_cross_entropy(x, random_leaf(g, {3, 5}), Variable(), Tensor::from_ids({1, 2, 0}, {3})), Error);
  EXPECT_THROW(linear_cross_entropy(x, w, random_leaf(g, {4}), Tensor::from_ids({1, 2, 0}, {3})), Error);
  EXPECT_THROW(linear_cross_entropy(x, w, Variable(), Tensor::from_ids({1, 2, 0}, {3}), -100, 0.0, -1), Error);
}

// Under the capture guard only device targets go unread: host targets are still checked and counted, so a CPU
// step run as a "captured" one can neither read out of bounds nor lose its token count.
TEST(LinearCrossEntropy, HostTargetsAreCheckedAndCountedInsideACaptureScope) {
  Generator g(35);
  Variable x = random_leaf(g, {3, 4}), w = random_leaf(g, {4, 5});
  CaptureScope capture;
  EXPECT_EQ(linear_cross_entropy(x, w, Variable(), Tensor::from_ids({1, -100, 4}, {3})).tokens, 2);
  try {
    linear_cross_entropy(x, w, Variable(), Tensor::from_ids({1, 7, 0}, {3}));
    FAIL() << "no error for a target outside the vocabulary inside a capture scope";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target 7 at row 1"), std::string::npos) << e.what();
  }
}

TEST(LinearCrossEntropy, InPlaceKernelsAreBitwiseIdenticalForOneAndTwoThreads) {
  const int64_t rows = 40, cols = 3001;  // > kParallelGrain elements: the parallel path
  auto run_kernels = [&](int threads) {
    cpu::set_num_threads(threads);
    std::vector<float> z(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i))) * 6.0f;
    std::vector<int64_t> t(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) t[static_cast<size_t>(r)] = r == 7 ? -1 : (r * 131) % cols;
    std::vector<float> loss(static_cast<size_t>(rows)), bias(static_cast<size_t>(cols));
    for (int64_t j = 0; j < cols; ++j) bias[static_cast<size_t>(j)] = static_cast<float>(j % 7) * 0.25f;
    cpu::cross_entropy_inplace<float>(rows, cols, z.data(), bias.data(), t.data(), -1, 0.1f, loss.data(), true);
    z.insert(z.end(), loss.begin(), loss.end());
    return z;
  };
  const auto one = run_kernels(1), two = run_kernels(2);
  cpu::set_num_threads(2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float)));
}

TEST(VecMath, FastExpIsWithinTwoUlpsAndPropagatesNan) {
  double worst = 0.0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = -87.0f + 175.0f * static_cast<float>(i) / 200000.0f;
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::fabs(cpu::fast_exp(x) - want) / want);
  }
  EXPECT_LT(worst, 2.4e-7);  // two float32 ulps
  EXPECT_TRUE(std::isnan(cpu::fast_exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(cpu::fast_exp(0.0f), 1.0f);
  std::vector<float> x{3.0f, -1.0f, 2.0f, 0.5f}, y(4);
  const float s = cpu::exp_shifted_sum(x.data(), 3.0f, y.data(), 4);
  EXPECT_NEAR(s, std::exp(0.0) + std::exp(-4.0) + std::exp(-1.0) + std::exp(-2.5), 1e-6);
  EXPECT_EQ(cpu::row_max(x.data(), 4), 3.0f);
}

// row_max's two 8-float vectors and its scalar tail: the largest value found in every lane of either vector and in
// the tail, for every length up to three blocks of 16 and beyond; an all -inf row gives -inf.
TEST(VecMath, RowMaxFindsTheLargestValueInEveryPosition) {
  for (int64_t n = 1; n <= 50; ++n)
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) x[j] = -10.0f - static_cast<float>((j * 7) % 13);
      x[at] = 1.5f;
      ASSERT_EQ(cpu::row_max(x.data(), n), 1.5f) << "n " << n << ", largest at " << at;
    }
  const std::vector<float> low(40, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(cpu::row_max(low.data(), 40), -std::numeric_limits<float>::infinity());
}

TEST(VecMath, FastSigmoidAndTanhAreWithinFloatRounding) {
  double worst_sig = 0.0, worst_tanh = 0.0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = 20.0f * static_cast<float>(i) / 200000.0f;
    const double xd = x;
    const double sig = 1.0 / (1.0 + std::exp(-xd)), th = std::tanh(xd);
    worst_sig = std::max(worst_sig, std::fabs(cpu::fast_sigmoid(x) - sig) / sig);
    if (th != 0.0) worst_tanh = std::max(worst_tanh, std::fabs(cpu::fast_tanh(x) - th) / std::fabs(th));
  }
  EXPECT_LT(worst_sig, 4e-7);
  EXPECT_LT(worst_tanh, 4e-7);  // relative, including tiny |x| where 1 - 2 / (e^2x + 1) would cancel
  EXPECT_EQ(cpu::fast_tanh(0.0f), 0.0f);
  EXPECT_EQ(cpu::fast_tanh(30.0f), 1.0f);
  EXPECT_EQ(cpu::fast_tanh(-30.0f), -1.0f);
  EXPECT_TRUE(std::isnan(cpu::fast_tanh(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace luong
