// kernels/cpu concat_parts (the one-call stacking behind a deferred weight gradient): every part lands at its
// offset byte for byte, whatever the sizes (empty parts, odd byte counts) and however many parts there are.
// The CUDA kernel is checked against this one in tests/cuda/kernels_elementwise_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "framework/kernels/cpu/gather.h"

namespace luong::testing {
namespace {

TEST(ConcatParts, WritesEveryPartAtItsOffsetForAnySizes) {
  // 70 parts (the CUDA kernel takes 32 a launch), sizes cycling through 0, odd and large (the parallel path).
  const std::vector<int64_t> sizes_cycle{0, 1, 7, 16, 64, 333, 40000, 5};
  std::vector<std::vector<uint8_t>> parts;
  std::vector<const void*> src;
  std::vector<int64_t> bytes;
  for (int i = 0; i < 70; ++i) {
    const int64_t n = sizes_cycle[static_cast<size_t>(i) % sizes_cycle.size()];
    std::vector<uint8_t> p(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) p[static_cast<size_t>(j)] = static_cast<uint8_t>(i * 31 + j * 7);
    parts.push_back(std::move(p));
  }
  for (const auto& p : parts) src.push_back(p.data()), bytes.push_back(static_cast<int64_t>(p.size()));
  const int64_t total = std::accumulate(bytes.begin(), bytes.end(), int64_t{0});
  std::vector<uint8_t> out(static_cast<size_t>(total) + 8, 0xEE);  // a guard beyond the end
  cpu::concat_parts(static_cast<int64_t>(parts.size()), src.data(), bytes.data(), out.data());
  std::vector<uint8_t> want;
  for (const auto& p : parts) want.insert(want.end(), p.begin(), p.end());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin()));
  for (size_t i = static_cast<size_t>(total); i < out.size(); ++i) EXPECT_EQ(out[i], 0xEE) << "wrote past the end";
}

TEST(ConcatParts, NoPartsWriteNothing) {
  uint8_t guard = 0x5A;
  cpu::concat_parts(0, nullptr, nullptr, &guard);
  EXPECT_EQ(guard, 0x5A);
}

}  // namespace
}  // namespace luong::testing
