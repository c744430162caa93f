#include "framework/kernels/cpu/blocked_gemm.h"

#include <algorithm>
#include <vector>

#include "framework/core/error.h"
#include "framework/kernels/cpu/avx512_microkernel.h"
#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/kernels/cpu/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong::cpu {
namespace {

using avx512::kTileRows;
using avx512::lane_mask;

// Depth slice and column block, swept on the step's shapes (KC 128-768 x NC 128-512): 512 x 256 was best or
// within noise of it on every shape. The packed block (512 x 256 floats, 512 KB) fits a Zen 4 core's 1 MB L2
// beside the A tile it meets; a deeper slice means fewer passes over C.
constexpr int64_t kKcBlock = 512;
constexpr int64_t kNcBlock = 256;
constexpr int64_t kPanelsPerBlock = kNcBlock / kPanelCols;

// Below this much work (2 m n k flops) OpenBLAS is as fast and per-call packing is not worth it.
constexpr int64_t kMinFlops = int64_t{1} << 26;

// One thread's share: column panels [p0, p1) and row tiles [r0, r1), every depth slice.
void run_share(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
               const float* b, float beta, float* c, int64_t p0, int64_t p1, int64_t r0, int64_t r1) {
  // The packed block lives per thread for the life of the process (512 KB): no allocation per call.
  thread_local std::vector<float> block;
  if (block.size() < static_cast<size_t>(kKcBlock * kNcBlock)) block.resize(static_cast<size_t>(kKcBlock * kNcBlock));
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  for (int64_t k0 = 0; k0 < k; k0 += kKcBlock) {
    const int64_t kc = std::min(kKcBlock, k - k0);
    for (int64_t pb = p0; pb < p1; pb += kPanelsPerBlock) {
      const int64_t pe = std::min(p1, pb + kPanelsPerBlock), j0 = pb * kPanelCols;
      avx512::pack_panels(trans_b, b, ldb, k0, kc, j0, std::min(pe * kPanelCols, n) - j0, block.data());
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t i0 = r * kTileRows, rows = std::min(kTileRows, m - i0);
        const float* a_tile = trans_a ? a + k0 * lda + i0 : a + i0 * lda + k0;
        const avx512::Microkernel kernel = avx512::select_microkernel(rows, trans_a);
        for (int64_t p = pb; p < pe; ++p) {
          const int64_t j = p * kPanelCols;
          kernel(kc, a_tile, lda, block.data() + (p - pb) * kc * kPanelCols, c + i0 * n + j, n, lane_mask(n - j),
                 lane_mask(n - j - 16), k0 == 0, alpha, beta);
        }
      }
    }
  }
}

}  // namespace

bool blocked_gemm_pays(int64_t m, int64_t n, int64_t k) {
  return packed_gemm_enabled() && 2 * m * n * k >= kMinFlops;
}

void blocked_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c) {
  LUONG_CHECK(packed_gemm_supported(), "blocked_gemm: this CPU has no AVX-512F (check blocked_gemm_pays() first)");
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0f) {  // no products: C = beta C (and 0 * inf in A or B must not reach C)
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return;
  }
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols, row_tiles = (m + kTileRows - 1) / kTileRows;
  const int threads = (2 * m * n * k >= (int64_t{1} << 21)) ? num_threads() : 1;
  // Columns split over threads when there are enough panels (each thread packs only its own B and reads all of
  // A); otherwise rows (each packs the same B). Either way a C tile is one thread's.
  const bool split_columns = panels >= 2 * threads || row_tiles < threads;
  auto share = [&](int t, int nt) {
    const int64_t p0 = split_columns ? panels * t / nt : 0, p1 = split_columns ? panels * (t + 1) / nt : panels;
    const int64_t r0 = split_columns ? 0 : row_tiles * t / nt, r1 = split_columns ? row_tiles : row_tiles * (t + 1) / nt;
    run_share(trans_a, trans_b, m, n, k, alpha, a, b, beta, c, p0, p1, r0, r1);
  };
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    share(omp_get_thread_num(), omp_get_num_threads());
    return;
  }
#endif
  share(0, 1);
}

}  // namespace luong::cpu
