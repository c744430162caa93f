// cpu::zero_bytes and cpu::copy_bytes (kernels/cpu/parallel.h): from 1 MiB up they split the range over the
// threads in cache-line-aligned pieces; every byte must be written exactly once and nothing outside it.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "framework/kernels/cpu/parallel.h"

namespace luong::cpu {
namespace {

constexpr size_t kGuard = 64;

// Sizes on both sides of the split, odd ones whose last piece is short, and a buffer offset that is not
// cache-line aligned.
const size_t kSizes[] = {0, 1, 4095, (1u << 20) - 1, 1u << 20, (1u << 20) + 3, (3u << 20) + 77};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 131 + (i >> 9));
  return v;
}

TEST(SplitBytes, ZeroWritesExactlyTheRange) {
  const int restore = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (size_t n : kSizes) {
      std::vector<uint8_t> buf = pattern(n + 2 * kGuard + 5, 7);
      const std::vector<uint8_t> before = buf;
      zero_bytes(buf.data() + kGuard + 5, n);
      size_t wrong = 0;
      for (size_t i = 0; i < buf.size(); ++i) {
        const bool inside = i >= kGuard + 5 && i < kGuard + 5 + n;
        wrong += buf[i] != (inside ? 0 : before[i]);
      }
      EXPECT_EQ(wrong, 0u) << n << " bytes, " << threads << " threads";
    }
  }
  set_num_threads(restore);
}

TEST(SplitBytes, CopyWritesExactlyTheRange) {
  const int restore = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (size_t n : kSizes) {
      const std::vector<uint8_t> src = pattern(n + 3, 91);
      std::vector<uint8_t> dst = pattern(n + 2 * kGuard + 5, 7);
      const std::vector<uint8_t> before = dst;
      copy_bytes(dst.data() + kGuard + 5, src.data() + 3, n);
      size_t wrong = 0;
      for (size_t i = 0; i < dst.size(); ++i) {
        const bool inside = i >= kGuard + 5 && i < kGuard + 5 + n;
        wrong += dst[i] != (inside ? src[i - kGuard - 5 + 3] : before[i]);
      }
      EXPECT_EQ(wrong, 0u) << n << " bytes, " << threads << " threads";
    }
  }
  set_num_threads(restore);
}

}  // namespace
}  // namespace luong::cpu
