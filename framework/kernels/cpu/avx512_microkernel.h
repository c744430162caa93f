// The float32 AVX-512 microkernel and B-panel packing shared by the packed-weight GEMM (packed_gemm.cpp)
// and the blocked GEMM (blocked_gemm.cpp). Internal to those two files.
//
// One call computes a tile of up to 8 rows x 32 columns of C over a depth slice, in 16 accumulators
// (8 rows x 2 vectors of 16 floats), which hides the FMA latency. Per k it loads 2 vectors of the B panel
// and broadcasts one scalar of A per row. A is read in place: row-major (A[i][k] at a[i * lda + k]) or, for
// trans_a, column-major (A[i][k] at a[k * lda + i], 8 rows contiguous per k).
//
// Every element of C is summed in the order k = 0, 1, ... by the one call that owns its tile, so the result
// does not depend on how tiles are spread over threads.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/kernels/cpu/prefetch_tile.h"

namespace luong::cpu::avx512 {

constexpr int64_t kTileRows = 8;

// A stretch of the depth over which A is stored contiguously: `len` depth rows starting at `a` (for a row
// tile at row 0). An ordinary product has one run per depth slice; a product of row-stacked operands that
// were never stacked (blocked_gemm_tn_segments) has one per piece, and the accumulators carry across them,
// so the sum is bitwise the one over the stacked operands.
struct DepthRun {
  const float* a;
  int64_t len;
};

// C tile (+)= alpha * A (rows x depth) * Bpanel (depth x 32), the depth being the runs in order; the tile's
// A starts at run.a + a_offset. `first`: the first depth slice, which writes alpha * acc + beta * C (C not
// read when beta is 0); later slices add to C. Columns past the matrix are masked off at the store; the
// panel's padding is zero, so they hold zeros anyway.
template <int Rows, bool TransA>
__attribute__((target("avx512f,fma"))) void microkernel(const DepthRun* runs, int64_t run_count, int64_t a_offset,
                                                        int64_t lda, const float* bp, float* c, int64_t ldc,
                                                        __mmask16 mask0, __mmask16 mask1, bool first, float alpha,
                                                        float beta) {
  const bool read_c = !first || beta != 0.0f;
  // The tile of C this call will read after its depth loop is asked for now, so its misses overlap the loop: a
  // weight gradient accumulates into a C of megabytes that the rest of the step has pushed out of cache (generator
  // dW in the step, LUONG_PROFILE: 329 -> 404 GFLOP/s).
  if (read_c) prefetch_tile(c, ldc, Rows, kPanelCols);
  // Every loop over the rows is fully unrolled so the accumulators live in registers throughout: with a
  // rolled loop GCC keeps the arrays on the stack, zeroing them with `rep stos` and spilling them for the
  // store loop, which cost 3% of the kernel's time (perf annotate).
  __m512 acc0[Rows], acc1[Rows];
#pragma GCC unroll 8
  for (int i = 0; i < Rows; ++i) acc0[i] = _mm512_setzero_ps(), acc1[i] = _mm512_setzero_ps();
  for (int64_t r = 0; r < run_count; ++r) {
    const float* a = runs[r].a + a_offset;
    const int64_t len = runs[r].len;
    for (int64_t kk = 0; kk < len; ++kk) {
      const __m512 b0 = _mm512_loadu_ps(bp + kk * kPanelCols);
      const __m512 b1 = _mm512_loadu_ps(bp + kk * kPanelCols + 16);
#pragma GCC unroll 8
      for (int i = 0; i < Rows; ++i) {
        const __m512 ai = _mm512_set1_ps(TransA ? a[kk * lda + i] : a[i * lda + kk]);
        acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
        acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
      }
    }
    bp += len * kPanelCols;
  }
  const __m512 scale_c = _mm512_set1_ps(first ? beta : 1.0f), scale_acc = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int i = 0; i < Rows; ++i) {
    float* row = c + i * ldc;
    __m512 r0 = acc0[i], r1 = acc1[i];
    if (alpha != 1.0f) r0 = _mm512_mul_ps(r0, scale_acc), r1 = _mm512_mul_ps(r1, scale_acc);
    if (read_c) {
      r0 = _mm512_fmadd_ps(scale_c, _mm512_maskz_loadu_ps(mask0, row), r0);
      r1 = _mm512_fmadd_ps(scale_c, _mm512_maskz_loadu_ps(mask1, row + 16), r1);
    }
    _mm512_mask_storeu_ps(row, mask0, r0);
    _mm512_mask_storeu_ps(row + 16, mask1, r1);
  }
}

using Microkernel = void (*)(const DepthRun*, int64_t, int64_t, int64_t, const float*, float*, int64_t, __mmask16,
                             __mmask16, bool, float, float);

template <bool TransA>
constexpr Microkernel kMicrokernels[kTileRows + 1] = {nullptr,
                                                      microkernel<1, TransA>,
                                                      microkernel<2, TransA>,
                                                      microkernel<3, TransA>,
                                                      microkernel<4, TransA>,
                                                      microkernel<5, TransA>,
                                                      microkernel<6, TransA>,
                                                      microkernel<7, TransA>,
                                                      microkernel<8, TransA>};

// The microkernel for a tile of `rows` (1..8) rows.
inline Microkernel select_microkernel(int64_t rows, bool trans_a) {
  return trans_a ? kMicrokernels<true>[rows] : kMicrokernels<false>[rows];
}

// The first `valid` of 16 lanes (valid may be <= 0 or >= 16).
inline __mmask16 lane_mask(int64_t valid) {
  if (valid <= 0) return 0;
  if (valid >= 16) return 0xFFFF;
  return static_cast<__mmask16>((1u << valid) - 1u);
}

// Packs columns [j0, j0 + width) of kc rows of a row-major B into panels of kPanelCols columns, panel p at
// out + p * kc * kPanelCols, each row of a panel kPanelCols contiguous floats, the last panel zero-padded.
// row_at(kk) is the start of the kk-th row (kk = 0 .. kc-1). Row by row, so B is read in order: a panel at a
// time would jump a whole row of B per 128 bytes read, which measured 15% slower on the generator's
// (256 x 8000) weight.
template <class RowAt>
__attribute__((target("avx512f"))) void pack_rows(RowAt row_at, int64_t kc, int64_t j0, int64_t width, float* out) {
  // Two 16-float vectors per panel row (masked at the last panel, whose padding becomes zeros): a memcpy call
  // per 128 bytes spent more time in the call than in the copy.
  const int64_t panels = (width + kPanelCols - 1) / kPanelCols;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const float* src = row_at(kk) + j0;
    float* dst = out + kk * kPanelCols;
    for (int64_t p = 0; p < panels; ++p, src += kPanelCols, dst += kc * kPanelCols) {
      const int64_t valid = width - p * kPanelCols;
      if (valid >= kPanelCols) {
        _mm512_storeu_ps(dst, _mm512_loadu_ps(src));
        _mm512_storeu_ps(dst + 16, _mm512_loadu_ps(src + 16));
      } else {
        _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(lane_mask(valid), src));
        _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(lane_mask(valid - 16), src + 16));
      }
    }
  }
}

// out rows r (stride ld_out) = column r of the 8 x 8 block at in (rows of stride ld_in): three rounds of
// shuffles (pairs of floats, then of pairs, then 128-bit halves) instead of 64 scalar moves. AVX code, marked
// like the rest of this file because only the Release build targets x86-64-v3; the callers check AVX-512F.
__attribute__((target("avx512f"))) inline void transpose_8x8(const float* in, int64_t ld_in, float* out,
                                                             int64_t ld_out) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * ld_in);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a_i0 a_j0 a_i1 a_j1 | a_i4 a_j4 a_i5 a_j5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a_i2 a_j2 a_i3 a_j3 | a_i6 a_j6 a_i7 a_j7
  }
  for (int h = 0; h < 8; h += 4) {  // rows h..h+3: columns c and c + 4 of those rows
    r[h] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));          // columns 0, 4
    r[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));      // columns 1, 5
    r[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));  // columns 2, 6
    r[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));  // columns 3, 7
  }
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(out + c * ld_out, _mm256_permute2f128_ps(r[c], r[c + 4], 0x20));
    _mm256_storeu_ps(out + (c + 4) * ld_out, _mm256_permute2f128_ps(r[c], r[c + 4], 0x31));
  }
}

// The same for rows [k0, k0 + kc) of op(B): B is (k, n) row-major with row stride ldb, or, for trans_b,
// (n, k) row-major (op(B) = B^T).
__attribute__((target("avx512f"))) inline void pack_panels(bool trans_b, const float* b, int64_t ldb, int64_t k0,
                                                           int64_t kc, int64_t j0, int64_t width, float* out) {
  if (!trans_b) return pack_rows([&](int64_t kk) { return b + (k0 + kk) * ldb; }, kc, j0, width, out);
  // op(B)[kk][j] = B[j][kk]: a transpose, 8 x 8 blocks in registers; the edges of a panel (fewer than 8
  // columns of B left, or of k) one element at a time.
  const int64_t panels = (width + kPanelCols - 1) / kPanelCols;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t c0 = j0 + p * kPanelCols, valid = std::min(kPanelCols, j0 + width - c0);
    float* panel = out + p * kc * kPanelCols;
    const float* src = b + c0 * ldb + k0;  // row j of this panel's B block: src + j * ldb
    const int64_t j8 = valid / 8 * 8, k8 = kc / 8 * 8;
    for (int64_t j = 0; j < j8; j += 8)
      for (int64_t kk = 0; kk < k8; kk += 8)
        transpose_8x8(src + j * ldb + kk, ldb, panel + kk * kPanelCols + j, kPanelCols);
    for (int64_t kk = 0; kk < kc; ++kk) {
      float* row = panel + kk * kPanelCols;
      const int64_t j_from = kk < k8 ? j8 : 0;  // rows below k8 already hold their first j8 columns
      for (int64_t j = j_from; j < kPanelCols; ++j) row[j] = j < valid ? src[j * ldb + kk] : 0.0f;
    }
  }
}

}  // namespace luong::cpu::avx512
