// ops/weight_gemm: which operands a PackedWeightScope packs (parameters and their slices, not activations),
// that packed copies live exactly as long as the outermost scope, and that products, gradients and a
// whole model's training step agree with the unpacked (OpenBLAS) path in float32.
#include <gtest/gtest.h>

#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/ops/ops.h"
#include "framework/ops/weight_gemm.h"
#include "tests/support/gradcheck.h"
#include "tests/support/tiny_nmt_step.h"

namespace luong {
namespace {

using testing::max_abs_diff;
using testing::random_leaf;

#define LUONG_REQUIRE_PACKED_GEMM() \
  if (!cpu::packed_gemm_enabled()) GTEST_SKIP() << "packed GEMM unavailable (no AVX-512F) or turned off"

// Turns the packed path on or off for one test and restores it.
class PackedGemmSetting {
 public:
  explicit PackedGemmSetting(bool on) : before_(cpu::set_packed_gemm_enabled(on)) {}
  ~PackedGemmSetting() { cpu::set_packed_gemm_enabled(before_); }

 private:
  bool before_;
};

Variable float_leaf(const Shape& s, uint64_t seed, bool requires_grad) {
  Generator g(seed);
  return Variable(random_leaf(g, s).data().to(DType::f32), requires_grad);
}

TEST(PackedWeightScope, PacksAParameterOnceAndDropsItWithTheOutermostScope) {
  LUONG_REQUIRE_PACKED_GEMM();
  NoGradGuard no_grad;
  const Variable x = float_leaf({4, 40}, 1, false), w = float_leaf({40, 50}, 2, true);
  matmul(x, w);
  EXPECT_EQ(packed_weight_cache_entries(), 0) << "outside a scope nothing is packed";
  {
    PackedWeightScope outer;
    matmul(x, w);
    matmul(x, w);
    EXPECT_EQ(packed_weight_cache_entries(), 1) << "one packed copy, reused";
    {
      PackedWeightScope inner;
      matmul(x, w);
      EXPECT_EQ(packed_weight_cache_entries(), 1);
    }
    EXPECT_EQ(packed_weight_cache_entries(), 1) << "an inner scope's end keeps the outer one's copies";
  }
  EXPECT_EQ(packed_weight_cache_entries(), 0);
}

TEST(PackedWeightScope, PacksSlicesOfParametersButNotActivations) {
  LUONG_REQUIRE_PACKED_GEMM();
  const Variable x = float_leaf({4, 20}, 3, false), w = float_leaf({40, 50}, 4, true);
  const Variable plain = float_leaf({20, 50}, 5, false);  // a leaf that is not a parameter
  EXPECT_TRUE(is_parameter_view(w));
  EXPECT_TRUE(is_parameter_view(slice(w, 0, 20, 20)));
  EXPECT_TRUE(is_parameter_view(reshape(slice(w, 0, 20, 20), {50, 20})));
  EXPECT_FALSE(is_parameter_view(tanh(w)));
  EXPECT_FALSE(is_parameter_view(plain));
  EXPECT_FALSE(is_parameter_view(slice(plain, 0, 0, 10)));
  {
    NoGradGuard no_grad;  // slices are plain leaves then, with no graph back to the weight
    EXPECT_TRUE(is_parameter_view(slice(w, 0, 20, 20)));
    EXPECT_TRUE(is_parameter_view(reshape(slice(w, 0, 20, 20), {50, 20})));
    EXPECT_FALSE(is_parameter_view(tanh(w)));
    EXPECT_FALSE(is_parameter_view(slice(tanh(w), 0, 0, 10)));
  }
  PackedWeightScope scope;
  matmul(x, tanh(slice(w, 0, 0, 20)));
  matmul(x, plain);
  EXPECT_EQ(packed_weight_cache_entries(), 0);
  matmul(x, slice(w, 0, 20, 20));
  EXPECT_EQ(packed_weight_cache_entries(), 1);
}

TEST(PackedWeightScope, LeavesProductsWithManyRowsToTheBlas) {
  LUONG_REQUIRE_PACKED_GEMM();
  NoGradGuard no_grad;
  const Variable w = float_leaf({40, 50}, 8, true);
  PackedWeightScope scope;
  matmul(float_leaf({257, 40}, 9, false), w);  // one call per pass: not worth a copy kept for the scope
  EXPECT_EQ(packed_weight_cache_entries(), 0);
  matmul(float_leaf({256, 40}, 10, false), w);
  EXPECT_EQ(packed_weight_cache_entries(), 1);
}

// matmul forward and backward, packed against OpenBLAS, with shapes off the kernel's blocks.
TEST(PackedWeightScope, MatmulAndItsGradientsAgreeWithTheUnpackedPath) {
  LUONG_REQUIRE_PACKED_GEMM();
  auto run = [](bool packed) {
    PackedGemmSetting setting(packed);
    const Variable x = float_leaf({19, 300}, 6, true), w = float_leaf({300, 45}, 7, true);
    std::vector<Tensor> out;
    {
      PackedWeightScope scope;
      Variable y = matmul(x, w);
      Variable loss = sum(mul(y, y));
      out.push_back(y.data().clone());
      loss.backward();  // the engine's own scope packs w^T for dx
    }
    out.push_back(x.grad().clone());
    out.push_back(w.grad().clone());
    return out;
  };
  const auto packed = run(true), plain = run(false);
  for (size_t i = 0; i < plain.size(); ++i) {
    double scale = 0.0;
    for (double v : plain[i].to_vector()) scale = std::max(scale, std::fabs(v));
    EXPECT_LE(max_abs_diff(packed[i], plain[i]), 1e-5 * scale) << "output " << i;
  }
}

// The whole training step of the NMT model (encoder lstm_sequence, decoder lstm_cell steps, W_f, W_c, the
// attention), packed against unpacked: same loss and gradients to float32 rounding.
TEST(PackedWeightScope, ModelTrainingStepAgreesWithTheUnpackedPath) {
  LUONG_REQUIRE_PACKED_GEMM();
  auto run = [&](bool packed) {
    PackedGemmSetting setting(packed);
    std::vector<Tensor> out = testing::tiny_nmt_loss_and_gradients();
    EXPECT_EQ(packed_weight_cache_entries(), 0) << "every scope ended";
    return out;
  };
  const auto packed = run(true), plain = run(false);
  ASSERT_EQ(packed.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    double scale = 1e-3;
    for (double v : plain[i].to_vector()) scale = std::max(scale, std::fabs(v));
    EXPECT_LE(max_abs_diff(packed[i], plain[i]), 2e-6 * scale) << (i == 0 ? "loss" : "gradient ") << i;
  }
}

}  // namespace
}  // namespace luong
