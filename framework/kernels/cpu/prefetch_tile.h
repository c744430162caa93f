// Software prefetch of a tile of a float32 matrix that a GEMM kernel will read later (the C it accumulates into),
// shared by the float32 microkernel (avx512_microkernel.h) and the bf16 GEMM's driver (bf16_gemm.cpp).
#pragma once
#include <cstdint>

namespace luong::cpu {

// Asks for rows x cols floats at c (rows ld floats apart) to be brought into cache: every 64-byte line a row spans,
// one more when the row is not aligned. A prefetch never faults, so addresses past a matrix's edge are harmless.
inline void prefetch_tile(const float* c, int64_t ld, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = c + i * ld;
    for (int64_t j = 0; j < cols; j += 16) __builtin_prefetch(row + j);
    __builtin_prefetch(row + cols - 1);
  }
}

}  // namespace luong::cpu
