// cuBLAS GEMMs against OpenBLAS: every transpose combination on odd sizes, alpha/beta, the k == 0 rule,
// strided batches, the TF32 switch, and the bf16 path with float32 accumulation.
#include <gtest/gtest.h>

#include "tests/cuda/cuda_test_util.h"

#ifdef LUONG_WITH_CUDA
#include <limits>

#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cuda/device.h"
#include "framework/kernels/cuda/kernels.h"
#include "tests/cuda/kernel_pair.h"

namespace luong::testing {
namespace {

constexpr int64_t kM = 67, kN = 45, kK = 129;

template <class T>
void expect_gemm_matches(DType dtype, double tol) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " trans_a " << ta << " trans_b " << tb);
      KernelPair a = random_pair(ta ? Shape{kK, kM} : Shape{kM, kK}, dtype, 70);
      KernelPair b = random_pair(tb ? Shape{kN, kK} : Shape{kK, kN}, dtype, 71);
      KernelPair c = random_pair({kM, kN}, dtype, 72);
      cpu::gemm<T>(ta, tb, kM, kN, kK, T(0.7), a.c<T>(), b.c<T>(), T(0.3), c.c<T>());
      cuda::gemm<T>(ta, tb, kM, kN, kK, T(0.7), a.g<T>(), b.g<T>(), T(0.3), c.g<T>());
      EXPECT_LE(c.error(), tol);
    }
  }
}

TEST(CudaGemm, EveryTransposeCombinationMatchesTheCpu) {
  LUONG_REQUIRE_CUDA();
  expect_gemm_matches<double>(DType::f64, 1e-13);
  expect_gemm_matches<float>(DType::f32, 1e-5);
}

TEST(CudaGemm, ZeroInnerDimensionScalesOrZeroesC) {
  LUONG_REQUIRE_CUDA();
  std::vector<double> v = uniform_values(kM * kN, 73);
  v[5] = std::numeric_limits<double>::quiet_NaN();
  KernelPair c = make_pair(Tensor::from(v, {kM, kN}, DType::f32));
  cpu::gemm<float>(false, false, kM, kN, 0, 1.f, nullptr, nullptr, 2.f, c.c<float>());
  cuda::gemm<float>(false, false, kM, kN, 0, 1.f, nullptr, nullptr, 2.f, c.g<float>());
  const auto scaled = c.gpu.to_vector();
  EXPECT_EQ(scaled[0], static_cast<double>(2.f * static_cast<float>(v[0])));
  EXPECT_TRUE(std::isnan(scaled[5]));
  cuda::gemm<float>(false, false, kM, kN, 0, 1.f, nullptr, nullptr, 0.f, c.g<float>());
  for (double x : c.gpu.to_vector()) ASSERT_EQ(x, 0.0);  // beta == 0 clears, NaN included
}

TEST(CudaGemm, StridedBatchesMatchTheCpu) {
  LUONG_REQUIRE_CUDA();
  const int64_t batch = 5, m = 33, n = 41, k = 70;
  for (bool tb : {false, true}) {
    KernelPair a = random_pair({batch, m, k}, DType::f64, 74);
    KernelPair b = random_pair(tb ? Shape{batch, n, k} : Shape{batch, k, n}, DType::f64, 75);
    KernelPair c = random_pair({batch, m, n}, DType::f64, 76);
    cpu::gemm_batched<double>(false, tb, batch, m, n, k, 1.0, a.c<double>(), b.c<double>(), 1.0, c.c<double>());
    cuda::gemm_batched<double>(false, tb, batch, m, n, k, 1.0, a.g<double>(), b.g<double>(), 1.0, c.g<double>());
    EXPECT_LE(c.error(), 1e-13) << tb;
    // A used transposed (the shape of bmm's weight gradient): (k, m) x (m, n) per item.
    KernelPair gw = random_pair({batch, k, n}, DType::f64, 77);
    cpu::gemm_batched<double>(true, false, batch, k, n, m, 1.0, a.c<double>(), c.c<double>(), 1.0, gw.c<double>());
    cuda::gemm_batched<double>(true, false, batch, k, n, m, 1.0, a.g<double>(), c.g<double>(), 1.0, gw.g<double>());
    EXPECT_LE(gw.error(), 1e-12) << tb;
  }
}

TEST(CudaGemm, Tf32IsOptInAndStaysWithinItsPrecision) {
  LUONG_REQUIRE_CUDA();
  ASSERT_FALSE(cuda::tf32());
  const int64_t m = 256, n = 256, k = 512;
  KernelPair a = random_pair({m, k}, DType::f32, 78), b = random_pair({k, n}, DType::f32, 79);
  KernelPair c = random_pair({m, n}, DType::f32, 80);
  cpu::gemm<float>(false, false, m, n, k, 1.f, a.c<float>(), b.c<float>(), 0.f, c.c<float>());
  cuda::set_tf32(true);
  cuda::gemm<float>(false, false, m, n, k, 1.f, a.g<float>(), b.g<float>(), 0.f, c.g<float>());
  cuda::set_tf32(false);
  // TF32 keeps 10 mantissa bits of each product's inputs: relative error ~1e-3 on sums of 512 products.
  const double tf32_error = c.error();
  EXPECT_LE(tf32_error, 2e-2);
  cuda::gemm<float>(false, false, m, n, k, 1.f, a.g<float>(), b.g<float>(), 0.f, c.g<float>());
  // Full float32 again: sums of 512 products of [-1, 1) values reach ~15, whose float32 spacing is 1e-6, and
  // cuBLAS adds in another order than the CPU: about sqrt(512) half-spacings, 1.1e-5 on an H200.
  const double fp32_error = c.error();
  EXPECT_LE(fp32_error, 5e-5);
  EXPECT_LT(fp32_error, tf32_error / 10);
}

TEST(CudaGemm, Bf16ConversionsRoundLikeTheHost) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 10007;
  Tensor x = random_tensor({n}, DType::f32, Device::cpu(), 81, -1000, 1000);
  Tensor host_bf16 = x.to(DType::bf16);
  Tensor dev_bf16 = Tensor::empty({n}, DType::bf16, Device::cuda(0));
  Tensor xg = x.to(Device::cuda(0));
  cuda::float_to_bf16(n, xg.data<float>(), static_cast<uint16_t*>(dev_bf16.raw()));
  EXPECT_TRUE(bitwise_equal(dev_bf16, host_bf16));
  Tensor back = Tensor::empty({n}, DType::f32, Device::cuda(0));
  cuda::bf16_to_float(n, static_cast<const uint16_t*>(dev_bf16.raw()), back.data<float>());
  EXPECT_TRUE(bitwise_equal(back, host_bf16.to(DType::f32)));
  // The four-wide kernel needs 16-byte aligned input and 8-byte aligned output; other offsets and the tails
  // take the scalar kernel. Every mix gives the host's bits (and writes nothing past the range).
  for (int64_t from : {0, 1, 2, 4}) {
    for (int64_t to : {0, 1, 4}) {
      const int64_t m = n - 8;
      Tensor out = Tensor::zeros({n}, DType::bf16, Device::cuda(0));
      cuda::float_to_bf16(m, xg.data<float>() + from, static_cast<uint16_t*>(out.raw()) + to);
      const std::vector<double> got = out.to(DType::f32).to_vector(), want = host_bf16.to(DType::f32).to_vector();
      for (int64_t i = 0; i < n; ++i) {
        const double expect = i >= to && i < to + m ? want[static_cast<size_t>(i - to + from)] : 0.0;
        ASSERT_EQ(got[static_cast<size_t>(i)], expect) << "from " << from << " to " << to << " at " << i;
      }
    }
  }
}

TEST(CudaGemm, Bf16GemmAccumulatesInFloat32) {
  LUONG_REQUIRE_CUDA();
  const int64_t m = 67, n = 45, k = 1029;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Inputs exactly representable in bf16, so the only differences are float32 summation order.
      Tensor a16 = random_tensor(ta ? Shape{k, m} : Shape{m, k}, DType::bf16, Device::cpu(), 82);
      Tensor b16 = random_tensor(tb ? Shape{n, k} : Shape{k, n}, DType::bf16, Device::cpu(), 83);
      Tensor a32 = a16.to(DType::f32), b32 = b16.to(DType::f32);
      KernelPair c = random_pair({m, n}, DType::f32, 84);
      cpu::gemm<float>(ta, tb, m, n, k, 0.5f, a32.data<float>(), b32.data<float>(), 0.25f, c.c<float>());
      Tensor ag = a16.to(Device::cuda(0)), bg = b16.to(Device::cuda(0));
      const auto* pa = static_cast<const uint16_t*>(ag.raw());
      const auto* pb = static_cast<const uint16_t*>(bg.raw());
      cuda::gemm_bf16(ta, tb, m, n, k, 0.5f, pa, pb, 0.25f, c.g<float>());
      EXPECT_LE(c.error(), 1e-5) << ta << tb;
      // bf16 output: the float32 result rounded to 8 mantissa bits.
      Tensor c16 = Tensor::zeros({m, n}, DType::bf16, Device::cuda(0));
      cuda::gemm_bf16(ta, tb, m, n, k, 0.5f, pa, pb, 0.f, static_cast<uint16_t*>(c16.raw()));
      Tensor ref = Tensor::zeros({m, n}, DType::f32);
      cpu::gemm<float>(ta, tb, m, n, k, 0.5f, a32.data<float>(), b32.data<float>(), 0.f, ref.data<float>());
      const auto got = c16.to_vector(), want = ref.to_vector();
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-2 * std::max(1.0, std::abs(want[i])));
    }
  }
}

}  // namespace
}  // namespace luong::testing

#else  // !LUONG_WITH_CUDA

TEST(CudaGemm, NeedsACudaBuild) { LUONG_REQUIRE_CUDA(); }

#endif
