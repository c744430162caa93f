// The GEMM precision switch on the CPU (framework/core/precision.h, kernels/cpu/gemm.cpp): bf16 and tf32
// GEMMs equal an independent reference (inputs rounded by this file's own bit manipulation, products summed
// in double) to float32 rounding, differ from float32 GEMMs by a bf16/tf32-sized amount, batched included;
// float64 GEMMs never change; parse errors name the bad value; every test restores the setting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "framework/core/error.h"
#include "framework/core/philox.h"
#include "framework/core/precision.h"
#include "framework/kernels/cpu/gemm.h"
#include "tests/support/random_floats.h"

namespace luong {
namespace {

// The reference rounding, written independently of precision.h: round to nearest even at 16 (bf16) or 13
// (tf32) dropped mantissa bits, on finite values.
float ref_round(float x, int dropped_bits) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  const uint32_t half = 1u << (dropped_bits - 1), lsb = (u >> dropped_bits) & 1u;
  u = (u + half - 1u + lsb) & ~((1u << dropped_bits) - 1u);
  std::memcpy(&x, &u, 4);
  return x;
}
constexpr int kBf16Drop = 16, kTf32Drop = 13;

using luong::testing::random_floats;

// Element (i, j) of op(X) for a row-major X holding op(X) (rows x cols) transposed or not.
double at(const std::vector<float>& x, bool trans, int64_t rows, int64_t cols, int64_t i, int64_t j) {
  return trans ? x[static_cast<size_t>(j * rows + i)] : x[static_cast<size_t>(i * cols + j)];
}

struct Problem {
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  std::vector<float> a, b, c0;
};

Problem make_problem(bool ta, bool tb, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  return {ta, tb, m, n, k, 0.7f, 0.3f, random_floats(m * k, seed), random_floats(k * n, seed + 1),
          random_floats(m * n, seed + 2)};
}

std::vector<float> run_gemm(const Problem& p, GemmPrecision precision) {
  const GemmPrecisionGuard guard(precision);
  std::vector<float> c = p.c0;
  cpu::gemm<float>(p.ta, p.tb, p.m, p.n, p.k, p.alpha, p.a.data(), p.b.data(), p.beta, c.data());
  return c;
}

// max over elements of |got - ref| / (|alpha| sum_l |a_il b_lj| + |beta c0_ij|), with ref and the scale in
// double from inputs rounded by ref_round: float32 accumulation keeps this at a few float32 epsilons.
double error_vs_reference(const Problem& p, const std::vector<float>& got, int dropped_bits) {
  std::vector<float> ra(p.a.size()), rb(p.b.size());
  for (size_t i = 0; i < ra.size(); ++i) ra[i] = ref_round(p.a[i], dropped_bits);
  for (size_t i = 0; i < rb.size(); ++i) rb[i] = ref_round(p.b[i], dropped_bits);
  double worst = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0, scale = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        const double prod = at(ra, p.ta, p.m, p.k, i, l) * at(rb, p.tb, p.k, p.n, l, j);
        sum += prod;
        scale += std::abs(prod);
      }
      const double c0 = p.c0[static_cast<size_t>(i * p.n + j)];
      const double ref = p.alpha * sum + p.beta * c0;
      scale = std::abs(p.alpha) * scale + std::abs(p.beta * c0);
      worst = std::max(worst, std::abs(got[static_cast<size_t>(i * p.n + j)] - ref) / scale);
    }
  }
  return worst;
}

// max |x - y| / max |y|: how far a reduced-precision result is from the float32 one.
double relative_diff(const std::vector<float>& x, const std::vector<float>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num = std::max(num, std::abs(static_cast<double>(x[i]) - y[i]));
    den = std::max(den, std::abs(static_cast<double>(y[i])));
  }
  return num / den;
}

// A few float32 epsilons of the summed magnitudes: the float32 accumulation of exact products.
constexpr double kFloat32SumTol = 2e-6;

TEST(GemmPrecision, DefaultIsFp32AndTheGuardRestores) {
  EXPECT_EQ(gemm_precision(), GemmPrecision::fp32);
  {
    const GemmPrecisionGuard outer(GemmPrecision::bf16);
    EXPECT_EQ(gemm_precision(), GemmPrecision::bf16);
    {
      const GemmPrecisionGuard inner(GemmPrecision::tf32);
      EXPECT_EQ(gemm_precision(), GemmPrecision::tf32);
    }
    EXPECT_EQ(gemm_precision(), GemmPrecision::bf16);
  }
  EXPECT_EQ(gemm_precision(), GemmPrecision::fp32);
}

TEST(GemmPrecision, ParsesItsNamesAndRejectsOthersNamingThem) {
  for (GemmPrecision p : {GemmPrecision::fp32, GemmPrecision::tf32, GemmPrecision::bf16})
    EXPECT_EQ(parse_gemm_precision(to_string(p)), p);
  for (const char* bad : {"fp16", "BF16", "", "float32"}) {
    try {
      parse_gemm_precision(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("fp32, tf32, bf16"), std::string::npos) << msg;
    }
  }
}

TEST(GemmPrecision, RoundingHelperKeepsSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(round_to_bf16(inf), inf);
  EXPECT_EQ(round_to_bf16(-inf), -inf);
  EXPECT_TRUE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(round_to_tf32(std::numeric_limits<float>::signaling_NaN())));
  EXPECT_EQ(round_to_bf16(std::numeric_limits<float>::max()), inf);  // past bf16's largest finite value
  EXPECT_EQ(round_to_bf16(-0.0f), -0.0f);
  EXPECT_TRUE(std::signbit(round_to_bf16(-0.0f)));
  // Subnormals keep 7 mantissa bits too: ties between bf16 subnormals go to the even one.
  auto from_bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  EXPECT_EQ(round_to_bf16(from_bits(0x00010000u)), from_bits(0x00010000u));
  EXPECT_EQ(round_to_bf16(from_bits(0x00018000u)), from_bits(0x00020000u));
  EXPECT_EQ(round_to_bf16(from_bits(0x00008000u)), 0.f);
  EXPECT_EQ(round_to_bf16(from_bits(0x00008001u)), from_bits(0x00010000u));
}

// 1 x 1 x 1 GEMMs with b = 1 return the rounded a: ties go to the even neighbour, in the kernel itself.
TEST(GemmPrecision, KernelRoundsInputsToNearestEven) {
  auto product = [](GemmPrecision p, float a) {
    const GemmPrecisionGuard guard(p);
    const float b = 1.f;
    float c = 0.f;
    cpu::gemm<float>(false, false, 1, 1, 1, 1.f, &a, &b, 0.f, &c);
    return c;
  };
  // bf16 keeps 7 mantissa bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (even: 1).
  EXPECT_EQ(product(GemmPrecision::bf16, 1.f + 0x1p-8f), 1.f);
  EXPECT_EQ(product(GemmPrecision::bf16, 1.f + 3 * 0x1p-8f), 1.f + 0x1p-6f);  // halfway, even is up
  EXPECT_EQ(product(GemmPrecision::bf16, 1.f + 0x1p-8f + 0x1p-20f), 1.f + 0x1p-7f);  // past halfway
  EXPECT_EQ(product(GemmPrecision::bf16, -(1.f + 0x1p-9f)), -1.f);
  // tf32 keeps 10: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(product(GemmPrecision::tf32, 1.f + 0x1p-11f), 1.f);
  EXPECT_EQ(product(GemmPrecision::tf32, 1.f + 3 * 0x1p-11f), 1.f + 0x1p-9f);
  EXPECT_EQ(product(GemmPrecision::tf32, 1.f + 0x1p-8f), 1.f + 0x1p-8f);  // representable: unchanged
  EXPECT_EQ(product(GemmPrecision::fp32, 1.f + 0x1p-20f), 1.f + 0x1p-20f);
}

TEST(GemmPrecision, Bf16GemmEqualsTheReferenceAndDiffersFromFloat32) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "trans_a " << ta << " trans_b " << tb);
      const Problem p = make_problem(ta, tb, 37, 29, 131, 11);
      const std::vector<float> bf16 = run_gemm(p, GemmPrecision::bf16);
      const std::vector<float> fp32 = run_gemm(p, GemmPrecision::fp32);
      EXPECT_LE(error_vs_reference(p, bf16, kBf16Drop), kFloat32SumTol);
      EXPECT_GT(error_vs_reference(p, fp32, kBf16Drop), 10 * kFloat32SumTol);  // the check can tell
      const double diff = relative_diff(bf16, fp32);
      EXPECT_GT(diff, 1e-5);
      EXPECT_LT(diff, 1e-2);
      EXPECT_EQ(gemm_precision(), GemmPrecision::fp32);
    }
  }
}

TEST(GemmPrecision, Tf32GemmEqualsTheReferenceAndSitsBetweenBf16AndFloat32) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "trans_a " << ta << " trans_b " << tb);
      const Problem p = make_problem(ta, tb, 41, 23, 97, 21);
      const std::vector<float> tf32 = run_gemm(p, GemmPrecision::tf32);
      const std::vector<float> fp32 = run_gemm(p, GemmPrecision::fp32);
      const std::vector<float> bf16 = run_gemm(p, GemmPrecision::bf16);
      EXPECT_LE(error_vs_reference(p, tf32, kTf32Drop), kFloat32SumTol);
      EXPECT_GT(error_vs_reference(p, bf16, kTf32Drop), 10 * kFloat32SumTol);
      const double diff = relative_diff(tf32, fp32);
      EXPECT_GT(diff, 1e-6);
      EXPECT_LT(diff, 1e-3);
      EXPECT_LT(diff, relative_diff(bf16, fp32) / 2);  // 3 more mantissa bits: about 8x closer
    }
  }
}

TEST(GemmPrecision, BatchedBf16EqualsTheReferencePerItem) {
  const int64_t batch = 3, m = 19, n = 27, k = 53;
  for (bool tb : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "trans_b " << tb);
    const std::vector<float> a = random_floats(batch * m * k, 31), b = random_floats(batch * k * n, 32);
    const std::vector<float> c0 = random_floats(batch * m * n, 33);
    std::vector<float> c = c0, c32 = c0;
    {
      const GemmPrecisionGuard guard(GemmPrecision::bf16);
      cpu::gemm_batched<float>(false, tb, batch, m, n, k, 0.7f, a.data(), b.data(), 0.3f, c.data());
    }
    EXPECT_EQ(gemm_precision(), GemmPrecision::fp32);
    cpu::gemm_batched<float>(false, tb, batch, m, n, k, 0.7f, a.data(), b.data(), 0.3f, c32.data());
    for (int64_t i = 0; i < batch; ++i) {
      Problem item{false, tb, m, n, k, 0.7f, 0.3f,
                   {a.begin() + i * m * k, a.begin() + (i + 1) * m * k},
                   {b.begin() + i * k * n, b.begin() + (i + 1) * k * n},
                   {c0.begin() + i * m * n, c0.begin() + (i + 1) * m * n}};
      const std::vector<float> got(c.begin() + i * m * n, c.begin() + (i + 1) * m * n);
      const std::vector<float> full(c32.begin() + i * m * n, c32.begin() + (i + 1) * m * n);
      EXPECT_LE(error_vs_reference(item, got, kBf16Drop), kFloat32SumTol) << "item " << i;
      const double diff = relative_diff(got, full);
      EXPECT_GT(diff, 1e-5) << "item " << i;
      EXPECT_LT(diff, 1e-2) << "item " << i;
    }
  }
}

TEST(GemmPrecision, Float64GemmsAndTheZeroInnerDimensionAreUnaffected) {
  const int64_t m = 13, n = 17, k = 29;
  Generator g(41);
  std::vector<double> a(m * k), b(k * n), c0(m * n);
  for (auto* v : {&a, &b, &c0})
    for (auto& x : *v) x = 2 * g.uniform() - 1;
  std::vector<double> full = c0, reduced = c0;
  cpu::gemm<double>(false, true, m, n, k, 0.5, a.data(), b.data(), 0.25, full.data());
  {
    const GemmPrecisionGuard guard(GemmPrecision::bf16);
    cpu::gemm<double>(false, true, m, n, k, 0.5, a.data(), b.data(), 0.25, reduced.data());
  }
  EXPECT_EQ(full, reduced);
  // k == 0: C = beta * C, in every precision.
  std::vector<float> c(6, 2.f);
  const GemmPrecisionGuard guard(GemmPrecision::bf16);
  cpu::gemm<float>(false, false, 2, 3, 0, 1.f, nullptr, nullptr, 0.5f, c.data());
  EXPECT_EQ(c, std::vector<float>(6, 1.f));
  cpu::gemm_batched<float>(false, false, 2, 1, 3, 0, 1.f, nullptr, nullptr, 0.f, c.data());
  EXPECT_EQ(c, std::vector<float>(6, 0.f));
}

}  // namespace
}  // namespace luong
