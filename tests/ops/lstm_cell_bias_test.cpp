// The LSTM cell kernel's bias argument (kernels/cpu/lstm_cell.h): a cell whose input product is its own GEMM
// passes the bias to the kernel instead of filling z with it first. The kernel must give bitwise what the
// kernel without a bias gives on z + b, and the null bias must leave z as it is (no + 0 turning -0 into +0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "framework/kernels/cpu/lstm_cell.h"

namespace luong::testing {
namespace {

template <class T>
void check_bias_equals_pre_added(uint64_t seed) {
  const int64_t B = 13, H = 37, G = 4 * H;  // odd sizes: vector loops and their tails
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-3, 3);
  std::vector<T> z(B * G), bias(G), c_prev(B * H);
  for (auto& v : z) v = static_cast<T>(u(rng));
  for (auto& v : bias) v = static_cast<T>(u(rng));
  for (auto& v : c_prev) v = static_cast<T>(u(rng));
  z[5] = T(-0.0), bias[5] = T(0.0);  // -0 + 0 = +0: the pre-added form's value, which the bias form must match
  std::vector<T> z_plus_b(z);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t j = 0; j < G; ++j) z_plus_b[r * G + j] = z[r * G + j] + bias[j];
  std::vector<T> g1(B * G), c1(B * H), h1(B * H), g2(B * G), c2(B * H), h2(B * H);
  cpu::lstm_cell_forward<T>(B, H, z.data(), c_prev.data(), g1.data(), c1.data(), h1.data(), bias.data());
  cpu::lstm_cell_forward<T>(B, H, z_plus_b.data(), c_prev.data(), g2.data(), c2.data(), h2.data());
  EXPECT_EQ(std::memcmp(g1.data(), g2.data(), g1.size() * sizeof(T)), 0);
  EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(T)), 0);
  EXPECT_EQ(std::memcmp(h1.data(), h2.data(), h1.size() * sizeof(T)), 0);

  // No bias: z is used as it is; a -0 pre-activation of g gives libm's tanh(-0) = -0 in the saved gates
  // (double; float's branch-free tanh returns +0 for either zero, so the sign says nothing there).
  if constexpr (std::is_same_v<T, double>) {
    std::vector<T> zn(z), g3(B * G), c3(B * H), h3(B * H);
    zn[2 * H] = T(-0.0);
    cpu::lstm_cell_forward<T>(B, H, zn.data(), c_prev.data(), g3.data(), c3.data(), h3.data());
    EXPECT_TRUE(std::signbit(g3[2 * H])) << "a null bias must not add +0";
  }
}

TEST(LstmCellBias, FloatBiasInTheKernelIsBitwiseThePreAddedInput) { check_bias_equals_pre_added<float>(1); }
TEST(LstmCellBias, DoubleBiasInTheKernelIsBitwiseThePreAddedInput) { check_bias_equals_pre_added<double>(2); }

}  // namespace
}  // namespace luong::testing
