// The pointwise kernels' two builds (kernels/cpu/wide_vectors.h): the AVX-512 one must give the bits of the AVX2 one,
// so a run's numbers do not depend on which CPU it ran on. Every case runs both ways through the public entry points
// and compares the outputs byte for byte; sizes with tails (37, 1013 columns) exercise the loops' remainders.
#include "framework/kernels/cpu/wide_vectors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "framework/kernels/cpu/cross_entropy_inplace.h"
#include "framework/kernels/cpu/lstm_cell.h"
#include "tests/support/random_floats.h"
#include "tests/support/scoped_setting.h"

namespace luong {
namespace {

using testing::random_floats;
using testing::ScopedSetting;

std::vector<float> scaled(std::vector<float> v, float s) {
  for (float& x : v) x *= s;
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class WideVectors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::wide_vectors_supported()) GTEST_SKIP() << "this CPU or OS does not run x86-64-v4 (AVX-512) code";
  }
  // Runs f once with each build; returns {AVX2, AVX-512}.
  template <class F>
  static auto both(F f) {
    const ScopedSetting<bool> narrow(cpu::set_wide_vectors, false);
    auto a = f();
    const ScopedSetting<bool> wide(cpu::set_wide_vectors, true);
    EXPECT_TRUE(cpu::wide_vectors());
    auto b = f();
    return std::make_pair(a, b);
  }
};

TEST_F(WideVectors, LstmCellForwardGivesTheSameBits) {
  for (const auto& [batch, hidden] : {std::pair<int64_t, int64_t>{64, 256}, {5, 37}, {1, 8}}) {
    const auto z = scaled(random_floats(batch * 4 * hidden, 1), 6.0f);  // into the activations' flat tails
    const auto c_prev = scaled(random_floats(batch * hidden, 2), 3.0f);
    const auto bias = random_floats(4 * hidden, 3);
    for (bool with_bias : {true, false}) {
      const auto [narrow, wide] = both([&] {
        std::vector<float> gates(batch * 4 * hidden), c(batch * hidden), h(batch * hidden);
        cpu::lstm_cell_forward<float>(batch, hidden, z.data(), c_prev.data(), gates.data(), c.data(), h.data(),
                                      with_bias ? bias.data() : nullptr);
        return std::vector<std::vector<float>>{gates, c, h};
      });
      for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(same_bits(narrow[i], wide[i]))
            << "output " << i << ", " << batch << " x " << hidden << (with_bias ? ", bias" : "");
    }
  }
}

TEST_F(WideVectors, LstmCellBackwardGivesTheSameBitsWithAndWithoutEachGradient) {
  const int64_t batch = 6, hidden = 37;
  std::vector<float> gates = random_floats(batch * 4 * hidden, 4);
  for (float& g : gates) g = 0.5f + 0.49f * g;  // activated gates lie in (0, 1) (g's block in (-1, 1) too)
  const auto c_prev = random_floats(batch * hidden, 5), c = random_floats(batch * hidden, 6);
  const auto dh = random_floats(batch * hidden, 7), dc = random_floats(batch * hidden, 8);
  const auto dc_prev0 = random_floats(batch * hidden, 9);
  for (int mask = 0; mask < 8; ++mask)
    for (bool accumulate : {true, false}) {
      const bool has_dh = mask & 1, has_dc = mask & 2, has_dc_prev = mask & 4;
      const auto [narrow, wide] = both([&] {
        std::vector<float> dz(batch * 4 * hidden), dc_prev = dc_prev0;
        cpu::lstm_cell_backward<float>(batch, hidden, gates.data(), c_prev.data(), c.data(),
                                       has_dh ? dh.data() : nullptr, has_dc ? dc.data() : nullptr, dz.data(),
                                       has_dc_prev ? dc_prev.data() : nullptr, accumulate);
        return std::vector<std::vector<float>>{dz, dc_prev};
      });
      EXPECT_TRUE(same_bits(narrow[0], wide[0])) << "dz, case " << mask << ", accumulate " << accumulate;
      EXPECT_TRUE(same_bits(narrow[1], wide[1])) << "dc_prev, case " << mask << ", accumulate " << accumulate;
    }
}

TEST_F(WideVectors, CrossEntropyGivesTheSameBitsForLossAndGradient) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{7, 1013}, {3, 8000}, {2, 15}}) {
    const auto logits = scaled(random_floats(rows * cols, 10), 8.0f);
    const auto bias = random_floats(cols, 11);
    std::vector<int64_t> target(rows);
    for (int64_t r = 0; r < rows; ++r) target[r] = (r * 7919) % cols;
    target[0] = -1;  // an ignored row
    for (float eps : {0.0f, 0.1f})
      for (bool grad : {true, false}) {
        const auto [narrow, wide] = both([&] {
          std::vector<float> z = logits, loss(rows);
          cpu::cross_entropy_inplace<float>(rows, cols, z.data(), bias.data(), target.data(), -1, eps, loss.data(),
                                            grad);
          return std::vector<std::vector<float>>{z, loss};
        });
        EXPECT_TRUE(same_bits(narrow[0], wide[0])) << rows << " x " << cols << ", eps " << eps << ", grad " << grad;
        EXPECT_TRUE(same_bits(narrow[1], wide[1])) << "loss, " << rows << " x " << cols << ", eps " << eps;
      }
  }
}

TEST(WideVectorsSwitch, CannotBeTurnedOnWhereUnsupportedAndReturnsThePreviousSetting) {
  const ScopedSetting<bool> off(cpu::set_wide_vectors, false);
  EXPECT_FALSE(cpu::wide_vectors());
  EXPECT_FALSE(cpu::set_wide_vectors(true));  // the previous setting
  EXPECT_EQ(cpu::wide_vectors(), cpu::wide_vectors_supported());
}

}  // namespace
}  // namespace luong
