// kernels/cpu/blocked_gemm: the AVX-512 GEMM that packs B per call, used by gemm() for large float32
// products. Checked against a float64 reference for all four operand layouts on shapes that cross every
// block edge (rows not a multiple of 8, columns across 32-column panels and 256-column blocks, depth across
// the 512-deep slices, partial second vectors of a panel), with alpha 1 and not, beta 0 (C never read), 1 and another
// value; stores never leave C; the bits do not depend on the thread count; gemm() routes exactly the large float32
// products here; and a product of row pieces (deferred weight gradients) has the bits of the product of the stacked
// pieces. Skipped on CPUs without AVX-512F, where nothing calls the kernel.
#include "framework/kernels/cpu/blocked_gemm.h"

#include <cblas.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "framework/core/precision.h"
#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/ops/tensor_math.h"
#include "tests/support/gemm_operands.h"
#include "tests/support/random_floats.h"
#include "tests/support/scoped_setting.h"
#include "tests/support/threads_guard.h"

namespace luong::cpu {
namespace {

#define LUONG_REQUIRE_AVX512() \
  if (!packed_gemm_supported()) GTEST_SKIP() << "this CPU has no AVX-512F"

using luong::testing::random_floats;
using luong::testing::ScopedSetting;

using Shape3 = luong::testing::GemmShape;
using luong::testing::op_a;
using luong::testing::op_b;

std::vector<double> reference(const Shape3& s, float alpha, const std::vector<float>& a, const std::vector<float>& b,
                              float beta, const std::vector<float>& c0) {
  std::vector<double> c(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < s.k; ++p) sum += static_cast<double>(op_a(s, a, i, p)) * op_b(s, b, p, j);
      const double prior = beta == 0.0f ? 0.0 : static_cast<double>(beta) * c0[static_cast<size_t>(i * s.n + j)];
      c[static_cast<size_t>(i * s.n + j)] = static_cast<double>(alpha) * sum + prior;
    }
  return c;
}

constexpr float kGuard = 12345.0f;

// C followed by guard values that a store past C would change.
std::vector<float> run_blocked(const Shape3& s, float alpha, const std::vector<float>& a, const std::vector<float>& b,
                               float beta, const std::vector<float>& c0) {
  std::vector<float> c = c0;
  c.resize(static_cast<size_t>(s.m * s.n + 64), kGuard);
  blocked_gemm(s.ta, s.tb, s.m, s.n, s.k, alpha, a.data(), b.data(), beta, c.data());
  return c;
}

void expect_matches_reference(const Shape3& s, float alpha, float beta, uint64_t& seed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto a = random_floats(s.m * s.k, ++seed), b = random_floats(s.k * s.n, ++seed);
  // beta 0 must not read C: NaN there would show.
  const auto c0 =
      beta == 0.0f ? std::vector<float>(static_cast<size_t>(s.m * s.n), nan) : random_floats(s.m * s.n, ++seed);
  const auto got = run_blocked(s, alpha, a, b, beta, c0);
  const auto want = reference(s, alpha, a, b, beta, c0);
  // float32 sums of k products of magnitude <= 1: rounding error well under k * 2^-24 * sqrt(k). Written so
  // that a NaN counts as wrong.
  const double tolerance = 1e-6 * (static_cast<double>(s.k) + 1.0);
  int64_t wrong = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance)) ++wrong;
  EXPECT_EQ(wrong, 0) << "ta " << s.ta << " tb " << s.tb << " m " << s.m << " n " << s.n << " k " << s.k << " alpha "
                      << alpha << " beta " << beta;
  for (size_t i = want.size(); i < got.size(); ++i)
    ASSERT_EQ(got[i], kGuard) << "store past C: m " << s.m << " n " << s.n << " k " << s.k;
}

TEST(BlockedGemm, MatchesAFloat64ReferenceForEveryLayoutAndBlockEdge) {
  LUONG_REQUIRE_AVX512();
  uint64_t seed = 1;
  int cases = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      for (int64_t m : {1, 9, 17})
        for (int64_t n : {1, 50, 300})  // 50: a last panel 18 wide; 300: across a 256-column block, 12 wide
          for (int64_t k : {5, 513})    // 513: across a 512-deep slice
            for (float beta : {0.0f, 1.0f, -0.5f}) {
              expect_matches_reference({ta, tb, m, n, k}, (m + n) % 2 ? 1.0f : 0.75f, beta, seed);
              ++cases;
            }
      // Enough rows and columns for several tiles in both directions on every thread.
      expect_matches_reference({ta, tb, 70, 600, 530}, 1.0f, -0.5f, seed);
      ++cases;
    }
  EXPECT_EQ(cases, 4 * (3 * 3 * 2 * 3 + 1));
}

TEST(BlockedGemm, BitsDoNotDependOnTheThreadCount) {
  LUONG_REQUIRE_AVX512();
  const luong::testing::ThreadsGuard threads_guard;
  // 1000 columns: the column blocks are split over threads; 40 columns: too few panels, the rows are.
  for (const Shape3& s : {Shape3{false, false, 70, 1000, 600}, Shape3{true, true, 70, 1000, 600},
                          Shape3{false, true, 300, 40, 700}, Shape3{true, false, 300, 40, 700}}) {
    const auto a = random_floats(s.m * s.k, 7), b = random_floats(s.k * s.n, 8), c0 = random_floats(s.m * s.n, 9);
    set_num_threads(1);
    const auto one = run_blocked(s, 1.0f, a, b, 1.0f, c0);
    set_num_threads(2);
    const auto two = run_blocked(s, 1.0f, a, b, 1.0f, c0);
    set_num_threads(3);
    const auto three = run_blocked(s, 1.0f, a, b, 1.0f, c0);
    EXPECT_EQ(one, two) << "ta " << s.ta << " tb " << s.tb << " n " << s.n;
    EXPECT_EQ(one, three) << "ta " << s.ta << " tb " << s.tb << " n " << s.n;
  }
}

TEST(BlockedGemm, AlphaZeroOnlyScalesC) {
  LUONG_REQUIRE_AVX512();
  // BLAS semantics: with alpha 0 the product is not formed, so an infinity in A cannot make 0 * inf = NaN.
  const Shape3 s{false, false, 9, 40, 7};
  auto a = random_floats(s.m * s.k, 1);
  a[3] = std::numeric_limits<float>::infinity();
  const auto b = random_floats(s.k * s.n, 2), c0 = random_floats(s.m * s.n, 3);
  const auto got = run_blocked(s, 0.0f, a, b, 0.5f, c0);
  for (size_t i = 0; i < c0.size(); ++i) ASSERT_EQ(got[i], 0.5f * c0[i]) << "element " << i;
}

// gemm() must send large float32 products to blocked_gemm (the same bits) and small ones, or all of them
// when the AVX-512 kernels are turned off, to OpenBLAS (cblas_sgemm's bits).
TEST(BlockedGemm, GemmRoutesOnlyLargeFloat32ProductsHere) {
  LUONG_REQUIRE_AVX512();
  auto via_gemm = [](const Shape3& s, const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<float> c(static_cast<size_t>(s.m * s.n));
    gemm<float>(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, c.data());
    return c;
  };
  auto via_openblas = [](const Shape3& s, const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<float> c(static_cast<size_t>(s.m * s.n));
    cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, (int)s.m, (int)s.n,
                (int)s.k, 1.0f, a.data(), s.ta ? (int)s.m : (int)s.k, b.data(), s.tb ? (int)s.k : (int)s.n, 0.0f,
                c.data(), (int)s.n);
    return c;
  };
  const Shape3 large{true, false, 256, 1024, 300}, small{false, false, 8, 64, 64};
  ASSERT_TRUE(blocked_gemm_pays(large.m, large.n, large.k));
  ASSERT_FALSE(blocked_gemm_pays(small.m, small.n, small.k));
  for (const Shape3& s : {large, small}) {
    const auto a = random_floats(s.m * s.k, 11), b = random_floats(s.k * s.n, 12);
    const auto blocked = run_blocked(s, 1.0f, a, b, 0.0f, std::vector<float>(static_cast<size_t>(s.m * s.n)));
    const std::vector<float> blocked_c(blocked.begin(), blocked.begin() + s.m * s.n);
    if (blocked_gemm_pays(s.m, s.n, s.k))
      EXPECT_EQ(via_gemm(s, a, b), blocked_c) << "m " << s.m;
    else
      EXPECT_EQ(via_gemm(s, a, b), via_openblas(s, a, b)) << "m " << s.m;
  }
  // Turned off, even the large product goes to OpenBLAS.
  const ScopedSetting<bool> off(set_packed_gemm_enabled, false);
  EXPECT_FALSE(blocked_gemm_pays(large.m, large.n, large.k));
  const auto a = random_floats(large.m * large.k, 13), b = random_floats(large.k * large.n, 14);
  EXPECT_EQ(via_gemm(large, a, b), via_openblas(large, a, b));
}

// Row pieces of A and B, as the deferred weight gradients hand them over, against the stacked matrices:
// pieces that end inside a 512-deep slice, pieces that span one, a single row and an empty piece.
TEST(BlockedGemm, RowPiecesGiveTheBitsOfTheStackedProduct) {
  LUONG_REQUIRE_AVX512();
  const int64_t m = 70, n = 300;
  const std::vector<int64_t> piece_rows{64, 1, 0, 600, 64, 200, 7};
  int64_t k = 0;
  for (int64_t r : piece_rows) k += r;
  const auto a = random_floats(k * m, 21), b = random_floats(k * n, 22);
  std::vector<GemmSegment> segments;
  int64_t at = 0;
  for (int64_t r : piece_rows) {
    segments.push_back({a.data() + at * m, b.data() + at * n, r});
    at += r;
  }
  for (float beta : {0.0f, 1.0f, -0.5f}) {
    const auto c0 = random_floats(m * n, 23);
    const auto stacked = run_blocked({true, false, m, n, k}, 1.0f, a, b, beta, c0);
    std::vector<float> pieces = c0;
    blocked_gemm_tn_segments(m, n, segments, beta, pieces.data());
    EXPECT_EQ(pieces, std::vector<float>(stacked.begin(), stacked.begin() + m * n)) << "beta " << beta;
  }
  // Below gemm()'s threshold for this kernel, gemm_tn_pieces leaves the product to the caller.
  ASSERT_FALSE(blocked_gemm_pays(m, n, k));
  std::vector<float> untouched(static_cast<size_t>(m * n), 7.0f);
  EXPECT_FALSE(gemm_tn_pieces(m, n, k, segments, 0.0f, untouched.data()));
  EXPECT_EQ(untouched, std::vector<float>(static_cast<size_t>(m * n), 7.0f));
}

// The op the deferral calls: in float32 on this CPU it reads the parts in place, with the bits of
// add_matmul_tn_ on the stacked parts; in float64 it stacks them and must give the same values.
TEST(BlockedGemm, AddMatmulOfStackedPartsMatchesTheStackedProduct) {
  LUONG_REQUIRE_AVX512();
  const int64_t k = 256, n = 1024, rows = 64, parts = 20;
  ASSERT_TRUE(blocked_gemm_pays(k, n, rows * parts));
  std::vector<float> a_all = random_floats(rows * parts * k, 31), g_all = random_floats(rows * parts * n, 32);
  for (DType dt : {DType::f32, DType::f64}) {
    const Tensor a = Tensor::from(std::vector<double>(a_all.begin(), a_all.end()), {rows * parts, k}, dt);
    const Tensor g = Tensor::from(std::vector<double>(g_all.begin(), g_all.end()), {rows * parts, n}, dt);
    std::vector<Tensor> a_parts, g_parts;
    for (int64_t p = 0; p < parts; ++p) {
      a_parts.push_back(a.narrow(p * rows, rows).clone());
      g_parts.push_back(g.narrow(p * rows, rows).clone());
    }
    const Tensor c0 = Tensor::from(std::vector<double>(k * n, 0.25), {k, n}, dt);
    Tensor from_parts = c0.clone(), from_stack = c0.clone();
    add_matmul_tn_stacked_(from_parts, a_parts, g_parts);
    add_matmul_tn_(from_stack, a, g);
    EXPECT_EQ(from_parts.to_vector(), from_stack.to_vector()) << dt;
  }
  // gemm() decides where a product runs, for pieces too: in place on this kernel at fp32, not in reduced
  // precision (reduced_gemm's rounding would be skipped) and not when the kernels are off.
  std::vector<GemmSegment> pieces;
  for (int64_t p = 0; p < parts; ++p)
    pieces.push_back({a_all.data() + p * rows * k, g_all.data() + p * rows * n, rows});
  std::vector<float> c(static_cast<size_t>(k * n), 0.0f);
  EXPECT_TRUE(gemm_tn_pieces(k, n, rows * parts, pieces, 0.0f, c.data()));
  {
    GemmPrecisionGuard tf32(GemmPrecision::tf32);
    EXPECT_FALSE(gemm_tn_pieces(k, n, rows * parts, pieces, 0.0f, c.data()));
  }
  const ScopedSetting<bool> off(set_packed_gemm_enabled, false);
  EXPECT_FALSE(gemm_tn_pieces(k, n, rows * parts, pieces, 0.0f, c.data()));
}

}  // namespace
}  // namespace luong::cpu
