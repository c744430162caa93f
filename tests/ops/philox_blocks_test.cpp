// The vectorised Philox blocks behind dropout's CPU mask: bitwise the scalar philox4x32_10 (which the CUDA
// kernel and every other draw use) at every count, start and seed, and dropout's mask equal to the per-element
// definition at lengths that end inside a block, a vector of blocks and a tile.
#include "framework/kernels/cpu/philox_blocks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "framework/core/philox.h"
#include "framework/kernels/cpu/elementwise.h"

namespace luong {
namespace {

std::vector<uint32_t> reference_blocks(uint64_t seed, uint64_t first, int64_t count) {
  std::vector<uint32_t> out(4 * count);
  for (int64_t i = 0; i < count; ++i) {
    const Philox4x32 r = philox4x32_10(first + static_cast<uint64_t>(i), 0, seed);
    for (int j = 0; j < 4; ++j) out[4 * i + j] = r.v[j];
  }
  return out;
}

TEST(PhiloxBlocks, EqualTheScalarGeneratorAtEveryCountStartAndSeed) {
  // Starts where the counter's low word wraps (a carry into the high word inside one vector of 8 blocks) and
  // seeds with both key words set.
  const uint64_t starts[] = {0, 5, 0xFFFFFFFBull, 0x1234567890ull, ~uint64_t{0} - 3};
  const uint64_t seeds[] = {0, 1234, 0xDEADBEEFCAFEF00Dull};
  for (uint64_t seed : seeds)
    for (uint64_t first : starts)
      for (int64_t count = 0; count <= 41; ++count) {
        std::vector<uint32_t> got(4 * count + 1, 0xABABABABu);  // one guard word past the end
        cpu::philox_blocks(seed, first, count, got.data());
        const std::vector<uint32_t> want = reference_blocks(seed, first, count);
        ASSERT_EQ(std::vector<uint32_t>(got.begin(), got.end() - 1), want)
            << "seed " << seed << ", first " << first << ", count " << count;
        EXPECT_EQ(got.back(), 0xABABABABu) << "wrote past " << count << " blocks";
      }
}

TEST(PhiloxBlocks, TheScalarPathIsTheReference) {
  std::vector<uint32_t> got(4 * 9);
  cpu::philox_blocks_scalar(99, 0xFFFFFFFEull, 9, got.data());
  EXPECT_EQ(got, reference_blocks(99, 0xFFFFFFFEull, 9));
}

TEST(PhiloxBlocks, DropoutMaskElementIsTheUniformAtI) {
  // Lengths around a block (4), a vector of blocks (32 elements), a tile (256) and the parallel grain.
  for (int64_t n : {1, 3, 4, 5, 31, 33, 255, 257, 1000, 40000}) {
    const uint64_t seed = 42, offset = 0xFFFFFFF0ull;  // the counters cross a 2^32 boundary
    std::vector<float> m(n, -1.0f);
    cpu::dropout_mask<float>(n, 0.3f, seed, offset, m.data());
    const float scale = 1.0f / (1.0f - 0.3f);
    for (int64_t i = 0; i < n; ++i) {
      const float want = philox_uniform_at(seed, offset, static_cast<uint64_t>(i)) >= 0.3f ? scale : 0.0f;
      ASSERT_EQ(m[i], want) << "n " << n << ", element " << i;
    }
  }
}

}  // namespace
}  // namespace luong
