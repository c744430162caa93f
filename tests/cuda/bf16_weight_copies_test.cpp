// ops/weight_gemm's bf16 copies on CUDA: under bf16 GEMM precision, a PackedWeightScope converts each
// parameter to bf16 once and reuses the copy for every product in the scope, either way round. The copy must
// change nothing: products and a whole model's training step are bitwise those of converting per product;
// copies live exactly as long as the outermost scope (a weight updated between scopes is converted afresh);
// activations and the other precisions keep none.
#include <gtest/gtest.h>

#include "tests/cuda/cuda_test_util.h"

#ifdef LUONG_WITH_CUDA
#include "framework/autograd/flat_parameters.h"
#include "framework/core/precision.h"
#include "framework/kernels/cuda/kernels.h"
#include "framework/ops/ops.h"
#include "framework/ops/weight_gemm.h"
#include "models/nmt/model.h"
#include "tests/support/scoped_setting.h"

namespace luong::testing {
namespace {

// Turns the copies on or off for one test and restores the setting.
struct Bf16CopiesSetting : ScopedSetting<bool> {
  explicit Bf16CopiesSetting(bool on) : ScopedSetting(set_bf16_weight_copies_enabled, on) {}
};

Variable cuda_leaf(const Shape& s, uint64_t seed, bool requires_grad) {
  return Variable(random_tensor(s, DType::f32, Device::cuda(0), seed), requires_grad);
}

// x op(w) through weight_gemm, as a host vector.
std::vector<double> product(const Variable& x, const Variable& w, bool trans_w) {
  const int64_t m = x.size(0), k = x.size(1), n = trans_w ? w.size(0) : w.size(1);
  Tensor c = random_tensor({m, n}, DType::f32, Device::cuda(0), 99);
  weight_gemm<float>(trans_w, m, n, k, x.data().data<float>(), w.data(), 0.5f, c.data<float>(), is_parameter_view(w));
  return c.to_vector();
}

TEST(CudaBf16WeightCopies, ProductsEqualConvertingPerProductAndTheCopyIsReused) {
  LUONG_REQUIRE_CUDA();
  const GemmPrecisionGuard bf16(GemmPrecision::bf16);
  // Odd sizes, off cuBLAS's tiles; w (k, n) for x w and (n, k) for x w^T.
  const Variable x = cuda_leaf({37, 53}, 1, false), w = cuda_leaf({53, 71}, 2, true), wt = cuda_leaf({71, 53}, 3, true);
  std::vector<double> plain, plain_t;
  {
    const Bf16CopiesSetting off(false);
    PackedWeightScope scope;
    plain = product(x, w, false);
    plain_t = product(x, wt, true);
    EXPECT_EQ(packed_weight_cache_entries(), 0) << "copies turned off";
  }
  PackedWeightScope scope;
  EXPECT_EQ(product(x, w, false), plain);
  EXPECT_EQ(product(x, w, false), plain) << "the reused copy";
  EXPECT_EQ(packed_weight_cache_entries(), 1);
  EXPECT_EQ(product(x, wt, true), plain_t);
  EXPECT_EQ(packed_weight_cache_entries(), 2);
  product(cuda_leaf({11, 53}, 4, false), wt, true);  // another input, the same copy
  EXPECT_EQ(packed_weight_cache_entries(), 2);
  const Variable y = cuda_leaf({11, 71}, 5, false);
  std::vector<double> plain_wt;  // y w^T: cuBLAS reads w's one copy transposed
  {
    const Bf16CopiesSetting off(false);
    plain_wt = product(y, w, true);
  }
  EXPECT_EQ(product(y, w, true), plain_wt);
  EXPECT_EQ(packed_weight_cache_entries(), 2) << "one copy per weight, whichever way round it is read";
}

TEST(CudaBf16WeightCopies, LiveAsLongAsTheOutermostScopeSoAnUpdatedWeightIsConvertedAgain) {
  LUONG_REQUIRE_CUDA();
  const GemmPrecisionGuard bf16(GemmPrecision::bf16);
  const Variable x = cuda_leaf({8, 40}, 5, false), w = cuda_leaf({40, 24}, 6, true);
  {
    PackedWeightScope outer;
    product(x, w, false);
    {
      PackedWeightScope inner;
      product(x, w, false);
    }
    EXPECT_EQ(packed_weight_cache_entries(), 1) << "an inner scope's end keeps the outer one's copy";
  }
  EXPECT_EQ(packed_weight_cache_entries(), 0);
  // New values in w's own storage, as an optimizer step writes them.
  Tensor values = w.data();
  values.copy_(random_tensor(w.shape(), DType::f32, Device::cpu(), 7));
  std::vector<double> fresh;
  {
    const Bf16CopiesSetting off(false);
    fresh = product(x, w, false);
  }
  PackedWeightScope scope;
  EXPECT_EQ(product(x, w, false), fresh) << "a new scope reads the updated weight, not a stale copy";
}

TEST(CudaBf16WeightCopies, OnlyParametersUnderBf16KeepACopy) {
  LUONG_REQUIRE_CUDA();
  const Variable x = cuda_leaf({8, 40}, 8, false), w = cuda_leaf({40, 24}, 9, true);
  const Variable activation = cuda_leaf({40, 24}, 10, false);
  PackedWeightScope scope;
  for (GemmPrecision p : {GemmPrecision::fp32, GemmPrecision::tf32}) {
    const GemmPrecisionGuard guard(p);
    product(x, w, false);
  }
  EXPECT_EQ(packed_weight_cache_entries(), 0) << "fp32 and tf32 read the float32 weight itself";
  const GemmPrecisionGuard bf16(GemmPrecision::bf16);
  product(x, activation, false);
  EXPECT_EQ(packed_weight_cache_entries(), 0) << "an activation changes from product to product";
  product(x, w, false);
  EXPECT_EQ(packed_weight_cache_entries(), 1);
}

// The NMT model's training step (encoder lstm_sequence, decoder lstm_cell steps with input feeding, W_c,
// the generator, backward) in bf16 on CUDA: the same loss and gradients, bit for bit, with and without copies.
TEST(CudaBf16WeightCopies, ModelTrainingStepIsBitwiseUnchanged) {
  LUONG_REQUIRE_CUDA();
  const GemmPrecisionGuard bf16(GemmPrecision::bf16);
  nmt::ModelConfig c;
  c.src_vocab = 23, c.tgt_vocab = 19, c.pad_id = 0, c.layers = 2, c.hidden_size = 40, c.embedding_size = 24;
  c.dropout = 0.0, c.attention = "general";
  const Device gpu = Device::cuda(0);
  const Tensor src = Tensor::from_ids({3, 5, 2, 6, 4, 7, 8, 0, 9, 10, 11, 12}, {3, 4}, gpu);
  const Tensor tgt_in = Tensor::from_ids({1, 4, 3, 1, 5, 0, 1, 6, 7}, {3, 3}, gpu);
  const Tensor tgt_out = Tensor::from_ids({4, 3, 2, 5, 2, 0, 6, 7, 2}, {3, 3}, gpu);
  auto run = [&](bool copies) {
    const Bf16CopiesSetting setting(copies);
    Generator init(5);
    nmt::NmtModel m(c, init, DType::f32);
    std::vector<Variable> params = m.parameters();
    FlatParameters flat(params, gpu);
    CrossEntropy ce = m.forward_loss(src, {4, 3, 4}, tgt_in, tgt_out);
    ce.loss.backward();
    std::vector<std::vector<double>> out{ce.loss.data().to_vector(), flat.grad().to_vector()};
    EXPECT_EQ(packed_weight_cache_entries(), 0) << "every scope ended";
    return out;
  };
  const auto with = run(true), without = run(false);
  EXPECT_EQ(with[0], without[0]) << "loss";
  EXPECT_EQ(with[1], without[1]) << "gradients";
}

}  // namespace
}  // namespace luong::testing

#else  // !LUONG_WITH_CUDA

TEST(CudaBf16WeightCopies, NeedsACudaBuild) { LUONG_REQUIRE_CUDA(); }

#endif
