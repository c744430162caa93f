// The GEMM precision switch on CUDA (framework/core/precision.h, kernels/cuda/gemm.cpp): tf32 and bf16
// cuda::gemm<float> / gemm_batched<float> against a float64 CPU GEMM on odd sizes, every transpose, alpha and
// beta; bf16 on the GPU equals the CPU's bf16 emulation up to float32 summation order; float64 GEMMs and the
// setting itself are left alone; the bf16 scratch comes from the caching allocator (no cudaMalloc per call).
#include <gtest/gtest.h>

#include "tests/cuda/cuda_test_util.h"

#ifdef LUONG_WITH_CUDA
#include "framework/core/precision.h"
#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cuda/device.h"
#include "framework/kernels/cuda/kernels.h"
#include "framework/memory/allocator.h"
#include "tests/cuda/kernel_pair.h"

namespace luong::testing {
namespace {

struct Case {
  bool ta, tb;
  int64_t batch, m, n, k;
};

struct Operands {
  KernelPair a, b, c0;  // float32 on both sides
  Tensor a64, b64;      // the same values in float64 on the CPU
};

Operands make_operands(const Case& g, uint64_t seed) {
  Operands o{random_pair(g.ta ? Shape{g.batch, g.k, g.m} : Shape{g.batch, g.m, g.k}, DType::f32, seed),
             random_pair(g.tb ? Shape{g.batch, g.n, g.k} : Shape{g.batch, g.k, g.n}, DType::f32, seed + 1),
             random_pair({g.batch, g.m, g.n}, DType::f32, seed + 2), Tensor(), Tensor()};
  o.a64 = o.a.cpu.to(DType::f64);
  o.b64 = o.b.cpu.to(DType::f64);
  return o;
}

constexpr float kAlpha = 0.7f, kBeta = 0.3f;

// C = alpha op(A) op(B) + beta C0 through the CUDA kernels in precision p (batch 1 goes through gemm()).
std::vector<double> cuda_gemm(const Case& g, const Operands& o, GemmPrecision p) {
  Tensor c = o.c0.gpu.clone();
  const GemmPrecisionGuard guard(p);
  if (g.batch == 1) {
    cuda::gemm<float>(g.ta, g.tb, g.m, g.n, g.k, kAlpha, o.a.g<float>(), o.b.g<float>(), kBeta, c.data<float>());
  } else {
    cuda::gemm_batched<float>(g.ta, g.tb, g.batch, g.m, g.n, g.k, kAlpha, o.a.g<float>(), o.b.g<float>(), kBeta,
                              c.data<float>());
  }
  return c.to_vector();
}

std::vector<double> cpu_gemm(const Case& g, const Operands& o, GemmPrecision p) {
  Tensor c = o.c0.cpu.clone();
  const GemmPrecisionGuard guard(p);
  cpu::gemm_batched<float>(g.ta, g.tb, g.batch, g.m, g.n, g.k, kAlpha, o.a.c<float>(), o.b.c<float>(), kBeta,
                           c.data<float>());
  return c.to_vector();
}

std::vector<double> float64_reference(const Case& g, const Operands& o) {
  Tensor c = o.c0.cpu.to(DType::f64);
  cpu::gemm_batched<double>(g.ta, g.tb, g.batch, g.m, g.n, g.k, kAlpha, o.a64.data<double>(), o.b64.data<double>(),
                            kBeta, c.data<double>());
  return c.to_vector();
}

// ||x - y||_2 / ||y||_2 over the whole result.
double relative_error(const std::vector<double>& x, const std::vector<double>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return std::sqrt(num / den);
}

// max |x - y| / max |y|
double max_relative_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) num = std::max(num, std::abs(x[i] - y[i])), den = std::max(den, std::abs(y[i]));
  return num / den;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) out.push_back({ta, tb, 1, 67, 45, 129});
  for (bool ta : {false, true})
    for (bool tb : {false, true}) out.push_back({ta, tb, 3, 33, 41, 71});
  return out;
}

TEST(CudaGemmPrecision, Tf32AndBf16StayWithinTheirPrecisionOfFloat64) {
  LUONG_REQUIRE_CUDA();
  uint64_t seed = 200;
  for (const Case& g : cases()) {
    SCOPED_TRACE(::testing::Message() << "batch " << g.batch << " trans_a " << g.ta << " trans_b " << g.tb);
    const Operands o = make_operands(g, seed += 3);
    const std::vector<double> ref = float64_reference(g, o);
    const double e32 = relative_error(cuda_gemm(g, o, GemmPrecision::fp32), ref);
    const double etf = relative_error(cuda_gemm(g, o, GemmPrecision::tf32), ref);
    const double e16 = relative_error(cuda_gemm(g, o, GemmPrecision::bf16), ref);
    EXPECT_LE(e32, 1e-6);
    // tf32: 10 mantissa bits (a rounding error ~5e-4 per input); bf16: 7 bits (~4e-3).
    EXPECT_LE(etf, 1e-3);
    EXPECT_LE(e16, 1e-2);
    // Each mode really ran in its own precision: bf16 far from float32 (its inputs are rounded here, before
    // cuBLAS), and tf32 between the two (8x below bf16 if the hardware rounds tf32 to nearest, about 3x if it
    // truncates). CUBLAS_COMPUTE_32F_FAST_TF32 allows tensor cores, it does not force them: for the small
    // batched products cuBLAS chose a full float32 kernel on an H200 (etf == e32 exactly, 2026-11-30), so
    // tf32's own error is asserted on the single products, where it used them.
    EXPECT_GT(e16, 10 * e32);
    EXPECT_LT(etf, e16 / 2);
    if (g.batch == 1) {
      EXPECT_GT(etf, 10 * e32);
    }
    EXPECT_EQ(gemm_precision(), GemmPrecision::fp32);
  }
}

TEST(CudaGemmPrecision, Bf16EqualsTheCpuEmulation) {
  LUONG_REQUIRE_CUDA();
  uint64_t seed = 300;
  for (const Case& g : cases()) {
    SCOPED_TRACE(::testing::Message() << "batch " << g.batch << " trans_a " << g.ta << " trans_b " << g.tb);
    const Operands o = make_operands(g, seed += 3);
    const std::vector<double> gpu = cuda_gemm(g, o, GemmPrecision::bf16);
    // Same rounded inputs, exact products: only the float32 summation order differs.
    EXPECT_LE(max_relative_diff(gpu, cpu_gemm(g, o, GemmPrecision::bf16)), 1e-5);
    // ... while float32 differs from it by a bf16-sized amount (so the comparison can fail).
    EXPECT_GT(max_relative_diff(gpu, cpu_gemm(g, o, GemmPrecision::fp32)), 1e-4);
  }
}

TEST(CudaGemmPrecision, Float64GemmsIgnoreTheSettingAndTf32IsTheSameSwitch) {
  LUONG_REQUIRE_CUDA();
  const Case g{false, true, 1, 37, 29, 53};
  KernelPair a = random_pair({g.m, g.k}, DType::f64, 400), b = random_pair({g.n, g.k}, DType::f64, 401);
  KernelPair c = random_pair({g.m, g.n}, DType::f64, 402);
  Tensor c_full = c.gpu.clone();
  cuda::gemm<double>(false, true, g.m, g.n, g.k, 1.0, a.g<double>(), b.g<double>(), 0.5, c_full.data<double>());
  for (GemmPrecision p : {GemmPrecision::tf32, GemmPrecision::bf16}) {
    const GemmPrecisionGuard guard(p);
    Tensor c_p = c.gpu.clone();
    cuda::gemm<double>(false, true, g.m, g.n, g.k, 1.0, a.g<double>(), b.g<double>(), 0.5, c_p.data<double>());
    EXPECT_TRUE(bitwise_equal(c_p, c_full)) << to_string(p);
  }
  // cuda::set_tf32 is a shorthand for the one process-wide setting.
  cuda::set_tf32(true);
  EXPECT_EQ(gemm_precision(), GemmPrecision::tf32);
  EXPECT_TRUE(cuda::tf32());
  set_gemm_precision(GemmPrecision::bf16);
  EXPECT_FALSE(cuda::tf32());
  cuda::set_tf32(false);
  EXPECT_EQ(gemm_precision(), GemmPrecision::fp32);
}

TEST(CudaGemmPrecision, Bf16ScratchComesFromTheCacheNotCudaMalloc) {
  LUONG_REQUIRE_CUDA();
  const Case g{false, false, 1, 128, 4000, 1000};  // the recurrent GEMM of the paper's LSTM
  const Operands o = make_operands(g, 500);
  Tensor c = o.c0.gpu.clone();
  const GemmPrecisionGuard guard(GemmPrecision::bf16);
  auto step = [&] {
    cuda::gemm<float>(false, false, g.m, g.n, g.k, 1.f, o.a.g<float>(), o.b.g<float>(), 0.f, c.data<float>());
  };
  step();  // warms the cache
  cuda::synchronize();
  const int64_t before = allocator_for(Device::cuda(0)).stats().num_allocs;
  for (int i = 0; i < 10; ++i) step();
  cuda::synchronize();
  EXPECT_EQ(allocator_for(Device::cuda(0)).stats().num_allocs, before);
}

}  // namespace
}  // namespace luong::testing

#else  // !LUONG_WITH_CUDA

TEST(CudaGemmPrecision, NeedsACudaBuild) { LUONG_REQUIRE_CUDA(); }

#endif
