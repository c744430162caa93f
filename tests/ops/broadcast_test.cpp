// Broadcasting semantics and padding rules of individual ops, with hand-computed values.
#include <gtest/gtest.h>

#include "framework/ops/ops.h"
#include "tests/support/gradcheck.h"

namespace luong {
namespace {

Variable leaf(std::vector<double> v, Shape s) { return Variable(Tensor::from(v, s, DType::f64), true); }

TEST(Broadcast, SuffixOperandRepeatsOverLeadingDims) {
  Variable a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Variable b = leaf({10, 20, 30}, {3});
  Variable y = add(a, b);
  EXPECT_EQ(y.data().to_vector(), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  Variable z = sub(b, a);  // the smaller operand on the left
  EXPECT_EQ(z.data().to_vector(), (std::vector<double>{9, 18, 27, 6, 15, 24}));
  sum(mul(a, b)).backward();
  EXPECT_EQ(b.grad().to_vector(), (std::vector<double>{5, 7, 9}));  // summed over rows
  EXPECT_EQ(a.grad().to_vector(), (std::vector<double>{10, 20, 30, 10, 20, 30}));
}

TEST(Broadcast, ScalarTensorBroadcastsEverywhere) {
  Variable a = leaf({1, 2, 3}, {3});
  Variable s = leaf({2}, {});
  Variable y = div(a, s);
  EXPECT_EQ(y.data().to_vector(), (std::vector<double>{0.5, 1, 1.5}));
  sum(y).backward();
  EXPECT_DOUBLE_EQ(s.grad().item(), -(1 + 2 + 3) / 4.0);
}

TEST(Embedding, PaddingRowGetsNoGradient) {
  Variable w = leaf({1, 1, 2, 2, 3, 3}, {3, 2});
  Tensor ids = Tensor::from_ids({0, 2, 0, 1}, {2, 2});
  sum(embedding(w, ids, /*padding_idx=*/0)).backward();
  EXPECT_EQ(w.grad().to_vector(), (std::vector<double>{0, 0, 1, 1, 1, 1}));
}

TEST(Softmax, MaskedPositionsAreZeroAndRowsSumToOne) {
  Variable x = leaf({1, 2, 3, 1, 1, 1}, {2, 3});
  Tensor mask = Tensor::from({1, 1, 0, 1, 1, 1}, {2, 3}, DType::u8);
  auto p = softmax(x, mask).data().to_vector();
  EXPECT_EQ(p[2], 0.0);
  EXPECT_NEAR(p[0] + p[1], 1.0, 1e-15);
  EXPECT_NEAR(p[1] / p[0], std::exp(1.0), 1e-12);
  EXPECT_NEAR(p[3], 1.0 / 3, 1e-15);
}

TEST(CrossEntropy, CountsTokensAndIgnoresPadding) {
  Variable logits = leaf({0, 0, 0, 1, 2, 3, 5, 5, 5}, {3, 3});
  CrossEntropy ce = cross_entropy(logits, Tensor::from_ids({1, 2, 0}, {3}), /*ignore_index=*/0);
  EXPECT_EQ(ce.tokens, 2);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(ce.loss.data().item(), std::log(3.0) + (lse - 3), 1e-12);
  EXPECT_THROW(cross_entropy(logits, Tensor::from_ids({1, 3, 0}, {3}), 0), Error);  // 3 is outside V
}

TEST(Dropout, SameGeneratorStateGivesSameMaskAndScalesKeptUnits) {
  Variable x(Tensor::full({1000}, 1.0, DType::f64));
  Generator g1(5), g2(5);
  auto a = dropout(x, 0.3, g1).data().to_vector();
  auto b = dropout(x, 0.3, g2).data().to_vector();
  EXPECT_EQ(a, b);
  int kept = 0;
  for (double v : a) {
    // p travels as float32 to the kernel (same on CPU and CUDA), so the scale is 1 / (1 - float(0.3)).
    EXPECT_TRUE(v == 0.0 || std::abs(v - 1 / 0.7) < 1e-7);
    kept += v != 0.0;
  }
  EXPECT_NEAR(kept / 1000.0, 0.7, 0.05);
  auto c = dropout(x, 0.3, g1).data().to_vector();  // the generator advanced: a new mask
  EXPECT_NE(a, c);
  EXPECT_EQ(dropout(x, 0.3, g1, /*training=*/false).data().to_vector(), x.data().to_vector());
}

}  // namespace
}  // namespace luong

namespace luong {
namespace {

TEST(Dropout, MaskElementIIsThePhiloxUniformAtI) {
  // The kernel computes Philox blocks once per 4 elements; each element must still be exactly the
  // counter-based uniform philox_uniform_at(seed, offset, i), which the CUDA kernel also uses.
  Variable x(Tensor::full({37}, 1.0, DType::f64));
  Generator g(77, 5);
  const uint64_t offset = g.offset();
  auto y = dropout(x, 0.5, g).data().to_vector();
  for (uint64_t i = 0; i < 37; ++i)
    EXPECT_EQ(y[i] != 0.0, philox_uniform_at(77, offset, i) >= 0.5f) << "element " << i;
}

}  // namespace
}  // namespace luong
