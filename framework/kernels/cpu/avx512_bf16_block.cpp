// One 32 x 32 block of a bf16 GEMM in AVX-512 registers with VDPBF16PS (bf16_blocks.h), for CPUs with AVX512-BF16
// but no AMX (AMD Zen 4 and Zen 5, Intel Cooper Lake). Each instruction adds, in each of 16 float32 lanes, the two
// products of a pair of consecutive depths: twice the multiply-adds of a float32 FMA, and on Zen 5 nearly its issue
// rate (build/bench/engine_bench's probe: 924 against 507 GFLOP/s on two threads). build/bench/bf16_gemm_bench there
// (two threads): 845-990 GFLOP/s on the benchmark model's products with B packed once, against 440-515 for luong's
// float32 kernels.
//
// The block runs as four strips of 8 rows x 32 columns: 16 accumulators (8 rows x 2 panels), and per pair of depths
// two 64-byte loads of B (a pair row of each panel, already in VDPBF16PS's layout) and 8 broadcasts of one 32-bit pair
// of A, so loads stay well under the two a cycle the multiply-adds leave room for. A strip's slice of A (8 rows x 32
// depths, 512 bytes) and the panels' pair rows stay in L1 while the strip runs the depth.
#include <immintrin.h>

#include <cstring>

#include "framework/kernels/cpu/bf16_blocks.h"

namespace luong::cpu {
namespace {

using bf16_layout::kBlock;
using bf16_layout::kDepth;
using bf16_layout::kTile;

constexpr int64_t kStripRows = 8;

}  // namespace

bool avx512_bf16_available() {
  static const bool available =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16");
  return available;
}

bool avx512_bf16_preferred() {
  // A fixed rule rather than a timing at start-up: the two kernels sum in different orders, and a run's bits must not
  // depend on how busy the host was when it started.
  // The same vendor test as the 512-bit pointwise build's default (wide_vectors.cpp).
  static const bool preferred = avx512_bf16_available() && __builtin_cpu_is("amd");
  return preferred;
}

__attribute__((target("avx512f,avx512bw,avx512bf16"))) void avx512_bf16_block(const uint16_t* pa, const uint16_t* pb,
                                                                              int64_t kp, int64_t i0, int64_t q0,
                                                                              int64_t p0, int64_t p1, float* out,
                                                                              int64_t ld, bool add) {
  const uint16_t* b0 = bf16_layout::b_panel(pb, kp, q0);
  const uint16_t* b1 = b0 + kp * kTile;
  for (int64_t r0 = 0; r0 < kBlock; r0 += kStripRows) {
    float* strip = out + r0 * ld;
    __m512 acc[kStripRows][2];
    for (int64_t r = 0; r < kStripRows; ++r) {
      acc[r][0] = add ? _mm512_loadu_ps(strip + r * ld) : _mm512_setzero_ps();
      acc[r][1] = add ? _mm512_loadu_ps(strip + r * ld + kTile) : _mm512_setzero_ps();
    }
    for (int64_t p = p0; p < p1; p += kDepth) {
      const uint16_t* a = pa + bf16_layout::a_slice(kp, i0 + r0, p);  // 8 rows, kDepth values apart
      const uint16_t* w0 = b0 + p * kTile;                           // pair row p / 2 of each panel
      const uint16_t* w1 = b1 + p * kTile;
#pragma GCC unroll 16
      for (int64_t j = 0; j < kDepth / 2; ++j) {
        const __m512bh x0 = (__m512bh)_mm512_loadu_si512(w0 + j * 2 * kTile);
        const __m512bh x1 = (__m512bh)_mm512_loadu_si512(w1 + j * 2 * kTile);
#pragma GCC unroll 8
        for (int64_t r = 0; r < kStripRows; ++r) {
          int32_t pair;  // depths 2j and 2j + 1 of row r, the first in the low half as in B's pairs
          std::memcpy(&pair, a + r * kDepth + 2 * j, sizeof pair);
          const __m512bh y = (__m512bh)_mm512_set1_epi32(pair);
          acc[r][0] = _mm512_dpbf16_ps(acc[r][0], y, x0);
          acc[r][1] = _mm512_dpbf16_ps(acc[r][1], y, x1);
        }
      }
    }
    for (int64_t r = 0; r < kStripRows; ++r) {
      _mm512_storeu_ps(strip + r * ld, acc[r][0]);
      _mm512_storeu_ps(strip + r * ld + kTile, acc[r][1]);
    }
  }
}

}  // namespace luong::cpu
