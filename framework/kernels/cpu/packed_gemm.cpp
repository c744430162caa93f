#include "framework/kernels/cpu/packed_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "framework/core/error.h"
#include "framework/kernels/cpu/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong::cpu {
namespace {

constexpr int64_t kRowBlock = 8;    // rows of A per microkernel call: 8 x 2 accumulators of 16 floats
constexpr int64_t kDepthBlock = 256;  // k per pass, so a B panel slice (32 KB) and an A block stay in L1/L2

// One microkernel call: C[0..rows, 0..32) (+)= A[0..rows, k0..k0+kc) Bpanel[k0..k0+kc). 16 accumulators
// hide the FMA latency; per k it loads 2 vectors of B and broadcasts `rows` scalars of A. Columns past n are
// masked off at the store (the panel's padding is zero, so they hold zeros anyway).
template <int Rows>
__attribute__((target("avx512f,fma"))) void microkernel(int64_t kc, const float* a, int64_t lda, const float* bp,
                                                          float* c, int64_t ldc, __mmask16 mask0, __mmask16 mask1,
                                                          bool overwrite, float beta) {
  __m512 acc0[Rows], acc1[Rows];
  for (int i = 0; i < Rows; ++i) acc0[i] = _mm512_setzero_ps(), acc1[i] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < kc; ++kk) {
    const __m512 b0 = _mm512_loadu_ps(bp + kk * kPanelCols);
    const __m512 b1 = _mm512_loadu_ps(bp + kk * kPanelCols + 16);
#pragma GCC unroll 8
    for (int i = 0; i < Rows; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i * lda + kk]);
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
    }
  }
  // First depth pass: C = acc + beta C (C not read for beta 0); later passes: C += acc.
  const bool read_c = !overwrite || beta != 0.0f;
  const __m512 scale = _mm512_set1_ps(overwrite ? beta : 1.0f);
  for (int i = 0; i < Rows; ++i) {
    float* row = c + i * ldc;
    __m512 r0 = acc0[i], r1 = acc1[i];
    if (read_c) {
      r0 = _mm512_fmadd_ps(scale, _mm512_maskz_loadu_ps(mask0, row), r0);
      r1 = _mm512_fmadd_ps(scale, _mm512_maskz_loadu_ps(mask1, row + 16), r1);
    }
    _mm512_mask_storeu_ps(row, mask0, r0);
    _mm512_mask_storeu_ps(row + 16, mask1, r1);
  }
}

using Microkernel = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, __mmask16, __mmask16, bool,
                             float);
constexpr Microkernel kMicrokernels[kRowBlock + 1] = {nullptr,         microkernel<1>, microkernel<2>,
                                                      microkernel<3>, microkernel<4>, microkernel<5>,
                                                      microkernel<6>, microkernel<7>, microkernel<8>};

__mmask16 lane_mask(int64_t valid) {  // the first `valid` of 16 lanes (valid may be <= 0 or >= 16)
  if (valid <= 0) return 0;
  if (valid >= 16) return 0xFFFF;
  return static_cast<__mmask16>((1u << valid) - 1u);
}

bool detect_supported() {
  __builtin_cpu_init();  // libgcc's check includes the OS saving the AVX-512 registers (XCR0)
  return __builtin_cpu_supports("avx512f");
}

bool enabled_by_environment() {
  const char* env = std::getenv("LUONG_PACKED_GEMM");
  return !(env && std::strcmp(env, "0") == 0);
}

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag(packed_gemm_supported() && enabled_by_environment());
  return flag;
}

}  // namespace

bool packed_gemm_supported() {
  static const bool supported = detect_supported();
  return supported;
}

bool packed_gemm_enabled() { return enabled_flag().load(std::memory_order_relaxed); }

bool set_packed_gemm_enabled(bool on) { return enabled_flag().exchange(on && packed_gemm_supported()); }

int64_t packed_size(int64_t k, int64_t n) { return (n + kPanelCols - 1) / kPanelCols * kPanelCols * k; }

void pack_b(bool trans_b, int64_t k, int64_t n, const float* b, float* packed) {
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols;
#pragma omp parallel for schedule(static) if (k * n >= kParallelGrain)
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t j0 = p * kPanelCols, width = std::min(kPanelCols, n - j0);
    float* out = packed + p * k * kPanelCols;
    if (!trans_b) {
      for (int64_t kk = 0; kk < k; ++kk) {
        float* row = out + kk * kPanelCols;
        std::memcpy(row, b + kk * n + j0, static_cast<size_t>(width) * sizeof(float));
        std::fill(row + width, row + kPanelCols, 0.0f);
      }
      continue;
    }
    // op(B)[kk][j0 + j] = B[j0 + j][kk]: a transpose, in tiles of 64 k so that the 8 KB of output a tile
    // writes stay in L1 while each row of B is read in order (6x faster than a column at a time).
    constexpr int64_t kTile = 64;
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
      const int64_t kn = std::min(kTile, k - k0);
      for (int64_t j = 0; j < kPanelCols; ++j) {
        float* col = out + k0 * kPanelCols + j;
        if (j >= width) {
          for (int64_t kk = 0; kk < kn; ++kk) col[kk * kPanelCols] = 0.0f;
          continue;
        }
        const float* src = b + (j0 + j) * k + k0;
        for (int64_t kk = 0; kk < kn; ++kk) col[kk * kPanelCols] = src[kk];
      }
    }
  }
}

void gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, const float* packed_b, float beta, float* c) {
  LUONG_CHECK(packed_gemm_supported(), "gemm_packed: this CPU has no AVX-512F (check packed_gemm_enabled() first)");
  if (m == 0 || n == 0) return;
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols;
  const int64_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  if (k == 0) {  // no products: C = beta C
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return;
  }
  // Split the panels over the threads when there are enough (every thread then reads all of A, which is
  // small for the shapes this serves); otherwise split the row blocks. Either way each C tile is one
  // thread's, summed in the same order, so the bits do not depend on the thread count.
  const int threads = (2 * m * n * k >= (int64_t{1} << 21)) ? num_threads() : 1;
  const bool split_panels = panels >= 2 * threads || row_blocks < threads;
  auto run = [&](int t, int nt) {
    const int64_t p0 = split_panels ? panels * t / nt : 0, p1 = split_panels ? panels * (t + 1) / nt : panels;
    const int64_t r0 = split_panels ? 0 : row_blocks * t / nt, r1 = split_panels ? row_blocks : row_blocks * (t + 1) / nt;
    for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
      const int64_t kc = std::min(kDepthBlock, k - k0);
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t i0 = r * kRowBlock, rows = std::min(kRowBlock, m - i0);
        const Microkernel kernel = kMicrokernels[rows];
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t j0 = p * kPanelCols;
          kernel(kc, a + i0 * k + k0, k, packed_b + p * k * kPanelCols + k0 * kPanelCols, c + i0 * n + j0, n,
                 lane_mask(n - j0), lane_mask(n - j0 - 16), k0 == 0, beta);
        }
      }
    }
  };
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    run(omp_get_thread_num(), omp_get_num_threads());
    return;
  }
#endif
  run(0, 1);
}

}  // namespace luong::cpu
