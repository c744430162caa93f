// kernels/cpu/bf16_gemm: the bf16 GEMM that gemm() uses under train.precision = bf16, for each of its kernels (AMX
// tiles, AVX512-BF16 vectors) that the CPU offers; each test runs once per kernel. Checked against
// a float64 reference computed from the bf16-rounded inputs (so the only difference allowed is float32 accumulation),
// for all four operand layouts on shapes that cross every edge (rows and columns not multiples of the 32 x 32 block or
// the 16-wide tile, depths not multiples of the 32-deep tile row, one-element products), with alpha 1 and not, beta 0
// (C never read), 1 (the tiles start from C) and another value; stores never leave C; the bits do not depend on the
// thread count; gemm() and gemm_batched() route bf16 products here and agree with the emulation (rounded copies through
// sgemm); the packing rounds ties, overflow, infinities and NaN like the emulation; products deeper than 2048, run in
// depth slices, have the bits of one pass. A kernel the CPU or OS does not offer is skipped.
#include "framework/kernels/cpu/bf16_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/precision.h"
#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/ops/ops.h"
#include "framework/ops/weight_gemm.h"
#include "tests/support/gemm_operands.h"
#include "tests/support/gradcheck.h"
#include "tests/support/random_floats.h"
#include "tests/support/scoped_setting.h"
#include "tests/support/threads_guard.h"
#include "tests/support/tiny_nmt_step.h"

namespace luong::cpu {

// Test names and failure messages say which kernel ran.
void PrintTo(Bf16Kernel kernel, std::ostream* os) { *os << bf16_kernel_name(kernel); }

namespace {

// Chooses a kernel for the process and restores the previous choice.
struct KernelSetting : luong::testing::ScopedSetting<Bf16Kernel> {
  explicit KernelSetting(Bf16Kernel kernel) : ScopedSetting(set_bf16_kernel, kernel) {}
};

// Each test runs with the kernel of its parameter chosen, or is skipped where the CPU lacks it.
class Bf16Gemm : public ::testing::TestWithParam<Bf16Kernel> {
 protected:
  void SetUp() override {
    if (!bf16_kernel_supported(GetParam()))
      GTEST_SKIP() << "this CPU or OS does not offer " << bf16_kernel_name(GetParam());
    setting_.emplace(GetParam());
    ASSERT_EQ(bf16_kernel(), GetParam());
  }
  void TearDown() override { setting_.reset(); }

 private:
  std::optional<KernelSetting> setting_;
};

INSTANTIATE_TEST_SUITE_P(Kernels, Bf16Gemm, ::testing::Values(Bf16Kernel::amx, Bf16Kernel::avx512_bf16),
                         [](const ::testing::TestParamInfo<Bf16Kernel>& info) {
                           return std::string(info.param == Bf16Kernel::amx ? "Amx" : "Avx512Bf16");
                         });

using luong::testing::random_floats;

using Shape3 = luong::testing::GemmShape;
using luong::testing::op_a;
using luong::testing::op_b;

constexpr float kGuard = 12345.0f;

// Every element of C within float32 accumulation error of the float64 product of the rounded inputs: (k + 2) units
// of 2^-23 of the sum of the magnitudes that went into it.
void expect_close_to_rounded_product(const Shape3& s, float alpha, const std::vector<float>& a,
                                     const std::vector<float>& b, float beta, const std::vector<float>& c0,
                                     const std::vector<float>& c) {
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (int64_t p = 0; p < s.k; ++p) {
        const double prod = static_cast<double>(round_to_bf16(op_a(s, a, i, p))) * round_to_bf16(op_b(s, b, p, j));
        sum += prod;
        magnitude += std::fabs(prod);
      }
      const size_t at = static_cast<size_t>(i * s.n + j);
      const double prior = beta == 0.0f ? 0.0 : static_cast<double>(beta) * c0[at];
      const double expected = static_cast<double>(alpha) * sum + prior;
      const double bound = (s.k + 2) * std::ldexp(1.0, -23) * (std::fabs(alpha) * magnitude + std::fabs(prior));
      ASSERT_NEAR(c[at], expected, bound + 1e-30)
          << "m " << s.m << " n " << s.n << " k " << s.k << " ta " << s.ta << " tb " << s.tb << " at (" << i << ", "
          << j << ") alpha " << alpha << " beta " << beta;
    }
}

TEST_P(Bf16Gemm, MatchesTheProductOfRoundedInputsForEveryLayoutAndEdge) {
  const std::vector<Shape3> shapes = {{false, false, 1, 1, 1},      {false, false, 17, 33, 31},
                                      {false, false, 33, 15, 33},   {false, false, 70, 100, 300},
                                      {false, false, 64, 96, 256},  {false, false, 5, 40, 1000},
                                      {false, false, 40, 70, 2500},    // deeper than 2048: run in depth slices
                                      {false, false, 33, 560, 1000}};  // 18 column blocks: groups of 16 and 2
  uint64_t seed = 1;
  for (Shape3 base : shapes)
    for (int layout = 0; layout < 4; ++layout) {
      Shape3 s = base;
      s.ta = layout & 1, s.tb = layout & 2;
      const auto a = random_floats(s.m * s.k, seed++), b = random_floats(s.k * s.n, seed++);
      const auto c0 = random_floats(s.m * s.n, seed++);
      for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, 1.0f}, {-1.25f, -0.75f}}) {
        std::vector<float> c = c0;
        c.push_back(kGuard);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        if (beta == 0.0f) std::fill(c.begin(), c.end() - 1, nan);  // beta 0 must not read C
        bf16_gemm(s.ta, s.tb, s.m, s.n, s.k, alpha, a.data(), b.data(), beta, c.data());
        EXPECT_EQ(c.back(), kGuard) << "a store left C";
        c.pop_back();
        expect_close_to_rounded_product(s, alpha, a, b, beta, c0, c);
      }
    }
}

// The packing's conversion (VCVTNE2PS2BF16) is the emulation's scalar round_to_bf16 on the values where rounding is
// subtle: ties (to even, both ways), the largest floats (rounding up to infinity), infinities and NaN; denormal inputs
// read as zero. Each value is multiplied by 1 alone, in A and in B, in both layouts, so C holds exactly the rounded
// value.
TEST_P(Bf16Gemm, PackingRoundsLikeTheEmulation) {
  const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
  const std::vector<float> values = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -(1.0f + 0x1p-8f), 1.0f + 0x1p-8f + 0x1p-23f,
                                     big, -big, 0x1.fefffep127f, inf, -inf, std::nanf(""), -0.0f, 3.1415926f, 1e-30f,
                                     65504.0f, 0.1f, -2.5e7f,
                                     // Denormals: the conversion reads them as zero. round_to_bf16 takes the
                                     // fourth up to the smallest normal, and keeps the others subnormal, which the
                                     // dot products read as zero.
                                     1e-39f, -3e-40f, 0x1p-149f, 0x1.fffffcp-127f, 0x1.018p-130f};
  const int64_t count = static_cast<int64_t>(values.size());
  const std::vector<float> one = {1.0f};
  for (bool trans : {false, true}) {
    std::vector<float> as_a(values.size()), as_b(values.size());
    // values as op(A) (count x 1) times 1, and 1 times values as op(B) (1 x count); a vector either way round.
    bf16_gemm(trans, false, count, 1, 1, 1.0f, values.data(), one.data(), 0.0f, as_a.data());
    bf16_gemm(false, trans, 1, count, 1, 1.0f, one.data(), values.data(), 0.0f, as_b.data());
    for (size_t i = 0; i < values.size(); ++i) {
      const float expected = std::fpclassify(values[i]) == FP_SUBNORMAL ? 0.0f : round_to_bf16(values[i]);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(as_a[i]) && std::isnan(as_b[i])) << "value " << i;
        continue;
      }
      EXPECT_EQ(as_a[i], expected) << "value " << i << " in A, trans " << trans;
      EXPECT_EQ(as_b[i], expected) << "value " << i << " in B, trans " << trans;
    }
  }
}

// A product deeper than 2048 runs in depth slices, whole blocks keeping their partial sums in C between slices;
// a product with beta 0.5 runs every block in one pass through the kernel's scratch. With C zero both must give the
// same bits (float32 stored and reloaded exactly), for every whole block and the edge ones alike.
TEST_P(Bf16Gemm, DeepProductsInSlicesHaveTheBitsOfOnePass) {
  for (const Shape3& s : {Shape3{false, false, 64, 96, 3000}, Shape3{true, true, 70, 50, 2100}}) {
    const auto a = random_floats(s.m * s.k, 21), b = random_floats(s.k * s.n, 22);
    std::vector<float> sliced(static_cast<size_t>(s.m * s.n)), onto_zero(sliced.size(), 0.0f),
        one_pass(sliced.size(), 0.0f);
    bf16_gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, sliced.data());
    bf16_gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 1.0f, onto_zero.data());
    bf16_gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.5f, one_pass.data());
    EXPECT_EQ(sliced, one_pass) << "m " << s.m << " n " << s.n << " k " << s.k;
    EXPECT_EQ(onto_zero, one_pass) << "m " << s.m << " n " << s.n << " k " << s.k;
  }
}

TEST_P(Bf16Gemm, BitsDoNotDependOnTheThreadCount) {
  const luong::testing::ThreadsGuard threads_guard;
  const int64_t m = 200, n = 300, k = 260;
  const auto a = random_floats(m * k, 7), b = random_floats(k * n, 8);
  std::vector<float> one(static_cast<size_t>(m * n)), two(one.size()), three(one.size());
  set_num_threads(1);
  bf16_gemm(false, true, m, n, k, 1.0f, a.data(), b.data(), 0.0f, one.data());
  set_num_threads(2);
  bf16_gemm(false, true, m, n, k, 1.0f, a.data(), b.data(), 0.0f, two.data());
  set_num_threads(3);
  bf16_gemm(false, true, m, n, k, 1.0f, a.data(), b.data(), 0.0f, three.data());
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, three);
  // A deep product, in depth slices whose blocks the threads take (and steal) anew each slice.
  const int64_t deep = 4100;
  const auto da = random_floats(m * deep, 9), db = random_floats(deep * n, 10);
  std::vector<float> deep_one(one.size()), deep_two(one.size());
  set_num_threads(1);
  bf16_gemm(false, false, m, n, deep, 1.0f, da.data(), db.data(), 0.0f, deep_one.data());
  set_num_threads(2);
  bf16_gemm(false, false, m, n, deep, 1.0f, da.data(), db.data(), 0.0f, deep_two.data());
  EXPECT_EQ(deep_one, deep_two);
}

TEST_P(Bf16Gemm, GemmSendsBf16ProductsHereAndAgreesWithTheEmulation) {
  const Shape3 s{true, false, 48, 80, 130};
  const int64_t batch = 3;
  const auto a = random_floats(batch * s.m * s.k, 11), b = random_floats(batch * s.k * s.n, 12);
  std::vector<float> direct(static_cast<size_t>(batch * s.m * s.n)), routed(direct.size()), emulated(direct.size());
  for (int64_t i = 0; i < batch; ++i)
    bf16_gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data() + i * s.m * s.k, b.data() + i * s.k * s.n, 0.0f,
              direct.data() + i * s.m * s.n);
  const GemmPrecisionGuard bf16(GemmPrecision::bf16);
  gemm_batched(s.ta, s.tb, batch, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, routed.data());
  EXPECT_EQ(routed, direct) << "gemm_batched under bf16 did not run the kernel";
  gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, routed.data());
  EXPECT_TRUE(std::equal(direct.begin(), direct.begin() + s.m * s.n, routed.begin()))
      << "gemm under bf16 did not run the kernel";
  {
    const KernelSetting emulation(Bf16Kernel::emulated);
    gemm_batched(s.ta, s.tb, batch, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, emulated.data());
  }
  EXPECT_NE(emulated, direct) << "turning the kernel off should give the emulation's summation order";
  for (size_t i = 0; i < direct.size(); ++i) EXPECT_NEAR(direct[i], emulated[i], 1e-5) << i;
  {
    const GemmPrecisionGuard fp32(GemmPrecision::fp32);  // float32 products never take the bf16 kernel
    std::vector<float> full(static_cast<size_t>(s.m * s.n));
    gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, full.data());
    EXPECT_FALSE(std::equal(full.begin(), full.end(), direct.begin()));
  }
}

Variable float_leaf(const Shape& s, uint64_t seed, bool requires_grad) {
  Generator g(seed);
  return Variable(luong::testing::random_leaf(g, s).data().to(DType::f32), requires_grad);
}

// Inside a PackedWeightScope a parameter's bf16 panels are packed once and reused, either way round (forward x W,
// backward g W^T), and a product from them has the bits of the kernel packing the weight itself.
TEST_P(Bf16Gemm, ParameterPanelsArePackedOncePerScopeWithTheSameBits) {
  const GemmPrecisionGuard bf16(GemmPrecision::bf16);
  const Variable x = float_leaf({70, 90}, 21, true), w = float_leaf({90, 50}, 22, true);
  std::vector<float> direct(70 * 50), direct_dx(70 * 90);
  bf16_gemm(false, false, 70, 50, 90, 1.0f, x.data().data<float>(), w.data().data<float>(), 0.0f, direct.data());
  Tensor y_first, y_second;
  {
    PackedWeightScope scope;
    Variable y = matmul(x, w);
    y_first = y.data().clone();
    y_second = matmul(x, w).data().clone();
    EXPECT_EQ(packed_weight_cache_entries(), 1) << "one set of panels for x W, reused";
    sum(y).backward();  // dx = 1 W^T through the transposed panels
    EXPECT_EQ(packed_weight_cache_entries(), 2) << "W^T gets its own panels";
  }
  EXPECT_EQ(packed_weight_cache_entries(), 0);
  EXPECT_EQ(y_first.to_vector(), y_second.to_vector());
  const std::vector<double> y = y_first.to_vector();
  for (size_t i = 0; i < direct.size(); ++i) ASSERT_EQ(static_cast<float>(y[i]), direct[i]) << i;
  const std::vector<float> ones(70 * 50, 1.0f);
  bf16_gemm(false, true, 70, 90, 50, 1.0f, ones.data(), w.data().data<float>(), 0.0f, direct_dx.data());
  const std::vector<double> dx = x.grad().to_vector();
  for (size_t i = 0; i < direct_dx.size(); ++i) ASSERT_EQ(static_cast<float>(dx[i]), direct_dx[i]) << i;
}

// The NMT model's whole training step under bf16, the kernel against the emulation: the same rounded inputs, another
// float32 summation order. A last-bit difference in an activation could move a later GEMM input across a bf16
// rounding boundary; in this model none does (worst gradient 1.5e-6 of its scale when written), so gradients are
// held to 2e-5 of their scale and the loss to 1e-6. A wrong kernel (a transposed operand, a lost depth slice) is
// off by far more.
TEST_P(Bf16Gemm, ModelTrainingStepAgreesWithTheEmulation) {
  const GemmPrecisionGuard bf16(GemmPrecision::bf16);
  const auto native = luong::testing::tiny_nmt_loss_and_gradients();
  const auto emulated = [] {
    const KernelSetting emulation(Bf16Kernel::emulated);
    return luong::testing::tiny_nmt_loss_and_gradients();
  }();
  ASSERT_EQ(native.size(), emulated.size());
  for (size_t i = 0; i < emulated.size(); ++i) {
    double scale = 1e-3;
    for (double v : emulated[i].to_vector()) scale = std::max(scale, std::fabs(v));
    EXPECT_LE(luong::testing::max_abs_diff(native[i], emulated[i]), (i == 0 ? 1e-6 : 2e-5) * scale)
        << (i == 0 ? "loss" : "gradient ") << i;
  }
}

// The choice of kernel: emulated is always available, a kernel the CPU lacks is refused (the choice stays), and under
// bf16 gemm() routes by the choice.
TEST(Bf16KernelChoice, AnUnsupportedKernelIsRefusedAndTheEmulationIsAlwaysThere) {
  const Bf16Kernel before = bf16_kernel();
  EXPECT_TRUE(bf16_kernel_supported(Bf16Kernel::emulated));
  for (Bf16Kernel kernel : {Bf16Kernel::amx, Bf16Kernel::avx512_bf16}) {
    const KernelSetting emulation(Bf16Kernel::emulated);
    ASSERT_EQ(bf16_kernel(), Bf16Kernel::emulated);
    EXPECT_EQ(set_bf16_kernel(kernel), Bf16Kernel::emulated);
    EXPECT_EQ(bf16_kernel(), bf16_kernel_supported(kernel) ? kernel : Bf16Kernel::emulated) << bf16_kernel_name(kernel);
    const GemmPrecisionGuard bf16(GemmPrecision::bf16);
    EXPECT_EQ(bf16_gemms_native(), bf16_kernel_supported(kernel));
  }
  EXPECT_EQ(bf16_kernel(), before);
  const GemmPrecisionGuard fp32(GemmPrecision::fp32);
  EXPECT_FALSE(bf16_gemms_native()) << "float32 products never take a bf16 kernel";
}

}  // namespace
}  // namespace luong::cpu
