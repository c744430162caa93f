// kernels/cpu/gemm_profile: with the profile on, each CPU GEMM entry point records its products under the kernel
// that ran them and their shape, calls counted and time summed; off, nothing is recorded; the table names every
// row with its GFLOP/s. The kernel names follow the routing rules (luong blocked against OpenBLAS by size, AMX or
// emulated bf16 by precision, the packed-weight paths of weight_gemm), so a wrong name is a wrong rule.
#include "framework/kernels/cpu/gemm_profile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "framework/core/precision.h"
#include "framework/kernels/cpu/bf16_gemm.h"
#include "framework/kernels/cpu/gemm.h"
#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/ops/weight_gemm.h"
#include "framework/tensor/tensor.h"
#include "tests/support/random_floats.h"

namespace luong::cpu {
namespace {

using luong::testing::random_floats;

// Turns the profile on, empty, for one test, and restores the setting after it.
class GemmProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = set_gemm_profile_enabled(true);
    reset_gemm_profile();
  }
  void TearDown() override {
    set_gemm_profile_enabled(before_);
    reset_gemm_profile();
  }
  bool before_ = false;
};

const GemmProfileRow* find(const std::vector<GemmProfileRow>& rows, const std::string& kernel, int64_t m, int64_t n,
                           int64_t k) {
  for (const GemmProfileRow& r : rows)
    if (r.kernel == kernel && r.m == m && r.n == n && r.k == k) return &r;
  return nullptr;
}

TEST_F(GemmProfileTest, CountsEachShapeUnderTheKernelThatRanIt) {
  const int64_t big = 256, small = 4;
  const auto a = random_floats(big * big, 1), b = random_floats(big * big, 2);
  std::vector<float> c(static_cast<size_t>(big * big));
  for (int i = 0; i < 3; ++i) gemm<float>(false, true, big, big, big, 1.0f, a.data(), b.data(), 0.0f, c.data());
  gemm<float>(false, false, small, small, small, 1.0f, a.data(), b.data(), 0.0f, c.data());
  gemm<double>(false, false, 2, 2, 2, 1.0, std::vector<double>(4, 1.0).data(), std::vector<double>(4, 1.0).data(), 0.0,
               std::vector<double>(4).data());

  const std::vector<GemmProfileRow> rows = gemm_profile_rows();
  ASSERT_EQ(rows.size(), 3u);
  const char* big_kernel = blocked_gemm_pays(big, big, big) ? "luong blocked" : "OpenBLAS";
  const GemmProfileRow* large = find(rows, big_kernel, big, big, big);
  ASSERT_NE(large, nullptr) << gemm_profile_table();
  EXPECT_EQ(large->calls, 3);
  EXPECT_FALSE(large->trans_a);
  EXPECT_TRUE(large->trans_b);
  EXPECT_GT(large->seconds, 0.0);
  EXPECT_FALSE(blocked_gemm_pays(small, small, small));  // the rule that sends it to OpenBLAS
  const GemmProfileRow* tiny = find(rows, "OpenBLAS", small, small, small);
  ASSERT_NE(tiny, nullptr) << gemm_profile_table();
  EXPECT_EQ(tiny->calls, 1);
  ASSERT_NE(find(rows, "OpenBLAS, float64", 2, 2, 2), nullptr) << gemm_profile_table();
  EXPECT_EQ(rows.front().m, big) << "largest total first";

  const std::string table = gemm_profile_table();
  EXPECT_NE(table.find(std::string("| ") + big_kernel + " | A B^T | 256 x 256, K 256 | 3 |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("| all |"), std::string::npos) << table;
}

TEST_F(GemmProfileTest, RecordsNothingWhenOff) {
  set_gemm_profile_enabled(false);
  const auto a = random_floats(64 * 64, 3);
  std::vector<float> c(64 * 64);
  gemm<float>(false, false, 64, 64, 64, 1.0f, a.data(), a.data(), 0.0f, c.data());
  EXPECT_TRUE(gemm_profile_rows().empty());
}

TEST_F(GemmProfileTest, NamesReducedPrecisionAndPackedWeightRoutes) {
  const int64_t m = 64, n = 96, k = 128;
  const auto a = random_floats(m * k, 4);
  const auto wv = random_floats(k * n, 5);
  const Tensor w = Tensor::from(std::vector<double>(wv.begin(), wv.end()), {k, n});
  std::vector<float> c(static_cast<size_t>(m * n));
  {
    GemmPrecisionGuard bf16(GemmPrecision::bf16);
    gemm<float>(false, false, m, n, k, 1.0f, a.data(), w.data<float>(), 0.0f, c.data());
  }
  {
    PackedWeightScope scope;  // the step loops' scope: weight_gemm multiplies a packed copy of w
    weight_gemm<float>(false, m, n, k, a.data(), w, 0.0f, c.data(), true);
  }
  const std::vector<GemmProfileRow> rows = gemm_profile_rows();
  const char* bf16_route = bf16_kernel() != Bf16Kernel::emulated ? bf16_route_name(false) : "OpenBLAS, bf16 emulated";
  EXPECT_NE(find(rows, bf16_route, m, n, k), nullptr) << gemm_profile_table();
  // Without luong's AVX-512 kernels weight_gemm hands the product to gemm(), which names its own route.
  const char* weight_kernel = packed_gemm_enabled()        ? "luong packed weight"
                              : blocked_gemm_pays(m, n, k) ? "luong blocked"
                                                           : "OpenBLAS";
  EXPECT_NE(find(rows, weight_kernel, m, n, k), nullptr) << gemm_profile_table();
  EXPECT_EQ(rows.size(), 2u) << gemm_profile_table();
}

}  // namespace
}  // namespace luong::cpu
