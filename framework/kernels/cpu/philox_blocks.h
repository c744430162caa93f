// Many consecutive Philox4x32-10 blocks at once, for the CPU kernels that draw one uniform per element
// (dropout). Bitwise the scalar philox4x32_10 of framework/core/philox.h, which the CUDA kernels and every
// other draw use, so a mask does not depend on which path made it.
#pragma once
#include <cstdint>

namespace luong::cpu {

// out[4 * i + j] = lane j of philox4x32_10(first + i, 0, seed), for i in [0, count). 32 blocks at a time (four
// AVX2 vectors of 8) where the CPU has AVX2 (the scalar rounds cost about 10 instructions an element, which
// made dropout's mask 2% of a training step), the scalar function for the rest.
void philox_blocks(uint64_t seed, uint64_t first, int64_t count, uint32_t* out);

// The scalar path alone (tests compare the two).
void philox_blocks_scalar(uint64_t seed, uint64_t first, int64_t count, uint32_t* out);

}  // namespace luong::cpu
