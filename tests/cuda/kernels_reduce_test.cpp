// CUDA reductions, softmax and cross-entropy against the CPU kernels: values, masking rules, accumulation
// into existing gradients, and run-to-run determinism of the two-pass sums.
#include <gtest/gtest.h>

#include "tests/cuda/cuda_test_util.h"

#ifdef LUONG_WITH_CUDA
#include <limits>

#include "framework/kernels/cpu/reduce.h"
#include "framework/kernels/cpu/softmax.h"
#include "framework/kernels/cuda/kernels.h"
#include "tests/cuda/kernel_pair.h"

namespace luong::testing {
namespace {

TEST(CudaReduce, SumAllAndSumSquaresAreDeterministicAndMatchTheCpu) {
  LUONG_REQUIRE_CUDA();
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1000003}, int64_t{5} << 20}) {
    KernelPair x = random_pair({n}, DType::f32, 50);
    const double cpu_sum = cpu::sum_all<float>(n, x.c<float>());
    const double cpu_sq = cpu::sum_squares<float>(n, x.c<float>());
    const double s1 = cuda::sum_all<float>(n, x.g<float>()), s2 = cuda::sum_all<float>(n, x.g<float>());
    const double q1 = cuda::sum_squares<float>(n, x.g<float>()), q2 = cuda::sum_squares<float>(n, x.g<float>());
    EXPECT_EQ(s1, s2) << n;  // bitwise, run to run
    EXPECT_EQ(q1, q2) << n;
    // Both accumulate float32 values in double: only the summation order differs.
    EXPECT_NEAR(s1, cpu_sum, 1e-12 * static_cast<double>(n)) << n;
    EXPECT_NEAR(q1, cpu_sq, 1e-11 * cpu_sq) << n;
  }
  EXPECT_EQ(cuda::sum_all<double>(0, nullptr), 0.0);
}

TEST(CudaReduce, HasNonFiniteFindsNanAndInfinityAnywhere) {
  LUONG_REQUIRE_CUDA();
  const int64_t n = 100003;
  std::vector<double> v = uniform_values(n, 51);
  EXPECT_FALSE(cuda::has_non_finite<float>(n, Tensor::from(v, {n}, DType::f32, Device::cuda(0)).data<float>()));
  for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()}) {
      std::vector<double> w = v;
      w[static_cast<size_t>(at)] = bad;
      Tensor t = Tensor::from(w, {n}, DType::f64, Device::cuda(0));
      EXPECT_TRUE(cuda::has_non_finite<double>(n, t.data<double>())) << at << " " << bad;
    }
  }
  EXPECT_FALSE(cuda::has_non_finite<float>(0, nullptr));
}

TEST(CudaReduce, SumDimAndItsBackwardMatchTheCpuOnBothPaths) {
  LUONG_REQUIRE_CUDA();
  struct Dims {
    int64_t outer, len, inner;
  };
  for (Dims d : {Dims{5, 33, 17}, Dims{7, 300, 1}, Dims{3, 10, 1}, Dims{1, 100000, 1}}) {
    KernelPair x = random_pair({d.outer, d.len, d.inner}, DType::f32, 52);
    KernelPair out = random_pair({d.outer, d.inner}, DType::f32, 53);
    cpu::sum_dim<float>(d.outer, d.len, d.inner, x.c<float>(), out.c<float>());
    cuda::sum_dim<float>(d.outer, d.len, d.inner, x.g<float>(), out.g<float>());
    if (d.inner > 1 || d.len < 256) {  // the CPU's summation order
      EXPECT_TRUE(out.identical()) << d.len;
    }
    EXPECT_LE(out.error(), 1e-6 * std::sqrt(static_cast<double>(d.len))) << d.len;
    KernelPair gx = random_pair({d.outer, d.len, d.inner}, DType::f32, 54);
    cpu::sum_dim_backward<float>(d.outer, d.len, d.inner, out.c<float>(), gx.c<float>());
    cuda::sum_dim_backward<float>(d.outer, d.len, d.inner, out.g<float>(), gx.g<float>());
    EXPECT_LE(gx.error(), 1e-6 * std::sqrt(static_cast<double>(d.len))) << d.len;
  }
}

// Random 0/1 mask of (rows, cols) with row `empty_row` fully masked.
Tensor mask_with_empty_row(int64_t rows, int64_t cols, int64_t empty_row, uint64_t seed) {
  std::vector<double> bits = uniform_values(rows * cols, seed, 0.0, 1.0);
  for (int64_t i = 0; i < rows * cols; ++i)
    bits[static_cast<size_t>(i)] = (i / cols == empty_row || bits[static_cast<size_t>(i)] < 0.3) ? 0.0 : 1.0;
  return Tensor::from(bits, {rows, cols}, DType::u8);
}

TEST(CudaSoftmax, ForwardAndBackwardMatchTheCpuWithMasksAndEmptyRows) {
  LUONG_REQUIRE_CUDA();
  const int64_t rows = 37;
  for (int64_t cols : {int64_t{7}, int64_t{1031}, int64_t{5000}}) {
    KernelPair mask = make_pair(mask_with_empty_row(rows, cols, 4, 55));
    for (bool log : {false, true}) {
      for (bool masked : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "cols " << cols << " log " << log << " masked " << masked);
        const uint8_t* mc = masked ? mask.c<uint8_t>() : nullptr;
        const uint8_t* mg = masked ? mask.g<uint8_t>() : nullptr;
        KernelPair x = random_pair({rows, cols}, DType::f64, 56, -5, 5), y = random_pair({rows, cols}, DType::f64, 57);
        cpu::softmax_forward<double>(log, rows, cols, x.c<double>(), mc, y.c<double>());
        cuda::softmax_forward<double>(log, rows, cols, x.g<double>(), mg, y.g<double>());
        EXPECT_LE(y.error(), 1e-13);  // -inf at masked log-probabilities must match exactly
        KernelPair gy = random_pair({rows, cols}, DType::f64, 58), gx = random_pair({rows, cols}, DType::f64, 59);
        cpu::softmax_backward<double>(log, rows, cols, y.c<double>(), gy.c<double>(), mc, gx.c<double>());
        cuda::softmax_backward<double>(log, rows, cols, y.g<double>(), gy.g<double>(), mg, gx.g<double>());
        EXPECT_LE(gx.error(), 1e-12);
      }
    }
  }
}

TEST(CudaSoftmax, CrossEntropyMatchesTheCpuWithIgnoredRowsAndSmoothing) {
  LUONG_REQUIRE_CUDA();
  const int64_t rows = 67, cols = 5003;
  std::vector<int64_t> targets(rows);
  Generator gen(60);
  for (auto& t : targets) t = static_cast<int64_t>(gen.below(cols));
  targets[3] = targets[40] = -100;
  KernelPair t = make_pair(Tensor::from_ids(targets, {rows}));
  KernelPair logits = random_pair({rows, cols}, DType::f32, 61, -6, 6);
  for (float eps : {0.0f, 0.1f}) {
    KernelPair logp = random_pair({rows, cols}, DType::f32, 62), loss = random_pair({rows}, DType::f32, 63);
    cpu::cross_entropy_forward<float>(rows, cols, logits.c<float>(), t.c<int64_t>(), -100, eps, logp.c<float>(),
                                      loss.c<float>());
    cuda::cross_entropy_forward<float>(rows, cols, logits.g<float>(), t.g<int64_t>(), -100, eps, logp.g<float>(),
                                       loss.g<float>());
    EXPECT_LE(logp.error(), 1e-5) << eps;
    EXPECT_LE(loss.error(), 1e-5) << eps;
    EXPECT_EQ(loss.gpu.to_vector()[3], 0.0);
    KernelPair g = random_pair({rows, cols}, DType::f32, 64);
    cpu::cross_entropy_backward<float>(rows, cols, logp.c<float>(), t.c<int64_t>(), -100, eps, 0.5f, g.c<float>());
    cuda::cross_entropy_backward<float>(rows, cols, logp.g<float>(), t.g<int64_t>(), -100, eps, 0.5f, g.g<float>());
    EXPECT_LE(g.error(), 1e-6) << eps;
  }
}

}  // namespace
}  // namespace luong::testing

#else  // !LUONG_WITH_CUDA

TEST(CudaReduce, NeedsACudaBuild) { LUONG_REQUIRE_CUDA(); }

#endif
