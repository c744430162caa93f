// kernels/cpu/packed_gemm: the AVX-512 GEMM against a pre-packed right operand. Checked against a float64
// reference on shapes that exercise every remainder (rows not a multiple of 8, columns not a multiple of 32
// or 16, depth across the 256-deep passes), for both operand layouts and for beta 0 (C never read), 1 and
// another value; stores never leave C; and the bits do not depend on the thread count. Skipped on CPUs
// without AVX-512F, where nothing calls the kernel.
#include "framework/kernels/cpu/packed_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "framework/kernels/cpu/parallel.h"
#include "tests/support/random_floats.h"
#include "tests/support/scoped_setting.h"
#include "tests/support/threads_guard.h"

namespace luong::cpu {
namespace {

#define LUONG_REQUIRE_PACKED_GEMM() \
  if (!packed_gemm_supported()) GTEST_SKIP() << "this CPU has no AVX-512F"

using luong::testing::random_floats;
using luong::testing::ScopedSetting;

// C (m, n) = A (m, k) op(B) + beta C in float64; B is (k, n), or (n, k) when trans_b.
std::vector<double> reference(bool trans_b, int64_t m, int64_t n, int64_t k, const std::vector<float>& a,
                              const std::vector<float>& b, float beta, const std::vector<float>& c0) {
  std::vector<double> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = beta == 0.0f ? 0.0 : static_cast<double>(beta) * c0[static_cast<size_t>(i * n + j)];
      for (int64_t p = 0; p < k; ++p)
        s += static_cast<double>(a[static_cast<size_t>(i * k + p)]) *
             b[static_cast<size_t>(trans_b ? j * k + p : p * n + j)];
      c[static_cast<size_t>(i * n + j)] = s;
    }
  return c;
}

struct PackedRun {
  std::vector<float> c;  // m * n results followed by guard values
  int64_t guard_start = 0;
};

PackedRun run_packed(bool trans_b, int64_t m, int64_t n, int64_t k, const std::vector<float>& a, const std::vector<float>& b,
               float beta, const std::vector<float>& c0) {
  std::vector<float> packed(static_cast<size_t>(packed_size(k, n)));
  pack_b(trans_b, k, n, b.data(), packed.data());
  PackedRun r;
  r.guard_start = m * n;
  r.c = c0;
  r.c.resize(static_cast<size_t>(m * n + 64), 12345.0f);  // a store past C would change these
  gemm_packed(m, n, k, a.data(), packed.data(), beta, r.c.data());
  return r;
}

TEST(PackedGemm, MatchesAFloat64ReferenceOnEveryRemainder) {
  LUONG_REQUIRE_PACKED_GEMM();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  uint64_t seed = 1;
  int cases = 0;
  for (int64_t m : {1, 7, 8, 9, 64, 70})
    for (int64_t n : {1, 15, 16, 31, 32, 33, 100})
      for (int64_t k : {1, 5, 256, 257, 600})
        for (bool trans_b : {false, true})
          for (float beta : {0.0f, 1.0f, -0.5f}) {
            const auto a = random_floats(m * k, ++seed), b = random_floats(k * n, ++seed);
            // beta 0 must not read C: NaN there would show.
            const auto c0 = beta == 0.0f ? std::vector<float>(static_cast<size_t>(m * n), nan) : random_floats(m * n, ++seed);
            const PackedRun r = run_packed(trans_b, m, n, k, a, b, beta, c0);
            const auto want = reference(trans_b, m, n, k, a, b, beta, c0);
            // float32 sums of k products of magnitude <= 1: rounding error well under k * 2^-24 * sqrt(k).
            // Written so that a NaN (C read for beta 0) counts as wrong.
            const double tolerance = 1e-6 * (static_cast<double>(k) + 1.0);
            int64_t wrong = 0;
            for (size_t i = 0; i < want.size(); ++i)
              if (!(std::fabs(r.c[i] - want[i]) <= tolerance)) ++wrong;
            EXPECT_EQ(wrong, 0) << "m " << m << " n " << n << " k " << k << " trans " << trans_b << " beta " << beta;
            for (size_t i = static_cast<size_t>(r.guard_start); i < r.c.size(); ++i)
              ASSERT_EQ(r.c[i], 12345.0f) << "store past C: m " << m << " n " << n << " k " << k;
            ++cases;
          }
  EXPECT_EQ(cases, 6 * 7 * 5 * 2 * 3);
}

TEST(PackedGemm, BitsDoNotDependOnTheThreadCount) {
  LUONG_REQUIRE_PACKED_GEMM();
  const luong::testing::ThreadsGuard threads_guard;
  for (bool trans_b : {false, true}) {
    // Large enough to run on several threads; 70 rows and 1000 columns leave remainders on both splits.
    const int64_t m = 70, n = 1000, k = 300;
    const auto a = random_floats(m * k, 7), b = random_floats(k * n, 8), c0 = random_floats(m * n, 9);
    set_num_threads(1);
    const PackedRun one = run_packed(trans_b, m, n, k, a, b, 1.0f, c0);
    set_num_threads(2);
    const PackedRun two = run_packed(trans_b, m, n, k, a, b, 1.0f, c0);
    set_num_threads(3);
    const PackedRun three = run_packed(trans_b, m, n, k, a, b, 1.0f, c0);
    EXPECT_EQ(one.c, two.c) << "trans " << trans_b;
    EXPECT_EQ(one.c, three.c) << "trans " << trans_b;
  }
}

TEST(PackedGemm, PackingPadsTheLastPanelWithZeros) {
  LUONG_REQUIRE_PACKED_GEMM();
  const int64_t k = 3, n = 35;  // two panels, the second 3 columns wide
  const auto b = random_floats(k * n, 3);
  std::vector<float> packed(static_cast<size_t>(packed_size(k, n)), -1.0f);
  ASSERT_EQ(packed.size(), static_cast<size_t>(2 * kPanelCols * k));
  pack_b(false, k, n, b.data(), packed.data());
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < kPanelCols; ++j) {
      const float got = packed[static_cast<size_t>(kPanelCols * k + p * kPanelCols + j)];
      EXPECT_EQ(got, j < 3 ? b[static_cast<size_t>(p * n + 32 + j)] : 0.0f) << "row " << p << " column " << j;
    }
}

TEST(PackedGemm, CanBeTurnedOffAndNeverOnWhereUnsupported) {
  const ScopedSetting<bool> restore(set_packed_gemm_enabled, false);
  EXPECT_FALSE(packed_gemm_enabled());
  set_packed_gemm_enabled(true);
  EXPECT_EQ(packed_gemm_enabled(), packed_gemm_supported());
}

}  // namespace
}  // namespace luong::cpu
