// How far apart two trained models are, for tests that compare runs: the same steps taken in another order
// of float32 sums (more processes, accumulated parts) agree to rounding, an exact resume bit for bit.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "framework/io/checkpoint.h"

namespace luong::testing {

// The largest ||a - b|| / ||a|| over the tensors of two state dicts (a checkpoint's "model" part). Float32
// runs that sum gradients in another order agree elementwise at rounding level (~1e-7 of each parameter's
// scale), which this norm-wise measure captures without being dominated by elements near zero.
inline double max_rel_diff(const StateDict& x, const StateDict& y) {
  EXPECT_EQ(x.tensors.size(), y.tensors.size());
  EXPECT_FALSE(x.tensors.empty());
  double worst = 0;
  for (const auto& [name, t] : x.tensors) {
    const auto it = y.tensors.find(name);
    EXPECT_TRUE(it != y.tensors.end()) << name;
    if (it == y.tensors.end()) return INFINITY;
    const auto u = t.to_vector(), v = it->second.to_vector();
    EXPECT_EQ(u.size(), v.size()) << name;
    if (u.size() != v.size()) return INFINITY;
    double diff = 0, norm = 0;
    for (size_t i = 0; i < u.size(); ++i) diff += (u[i] - v[i]) * (u[i] - v[i]), norm += u[i] * u[i];
    worst = std::max(worst, std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12));
  }
  return worst;
}

// The same between the models of two checkpoint files.
inline double max_rel_diff(const std::string& a, const std::string& b) {
  return max_rel_diff(load_checkpoint(a).state.sub("model"), load_checkpoint(b).state.sub("model"));
}

// Exact resume and exact starts: every tensor of `b` has the bytes of `a`'s tensor of that name.
inline void expect_bitwise_equal(const StateDict& a, const StateDict& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  ASSERT_FALSE(a.tensors.empty());
  for (const auto& [name, t] : a.tensors) {
    ASSERT_TRUE(b.tensors.count(name)) << name;
    const Tensor& u = b.tensors.at(name);
    ASSERT_EQ(t.shape(), u.shape()) << name;
    ASSERT_EQ(0, std::memcmp(t.raw(), u.raw(), t.nbytes())) << "parameter " << name << " differs";
  }
}

// The values of entry `id` along `axis` of a tensor (an embedding's row, an output layer's column), in order:
// what train.init_vocabulary carries from one vocabulary to another.
inline std::vector<double> entry_along(const Tensor& t, int axis, int64_t id) {
  const std::vector<double> v = t.to_vector();
  const Shape& s = t.shape();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t n = s[static_cast<size_t>(axis)];
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) out.push_back(v[static_cast<size_t>((o * n + id) * inner + i)]);
  return out;
}

}  // namespace luong::testing
