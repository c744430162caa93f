#include "framework/kernels/cpu/blocked_gemm.h"

#include <algorithm>
#include <vector>

#include "framework/core/error.h"
#include "framework/kernels/cpu/avx512_microkernel.h"
#include "framework/kernels/cpu/packed_gemm.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/scale_by_beta.h"
#include "framework/kernels/cpu/stealing_ranges.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong::cpu {
namespace {

// Depth slice and column block, swept on the step's shapes (KC 128-768 x NC 128-512): 512 x 256 was best or
// within noise of it on every shape. The packed block (512 x 256 floats, 512 KB) fits a Zen 4 core's 1 MB L2
// beside the A tile it meets; a deeper slice means fewer passes over C.
constexpr int64_t kKcBlock = 512;
constexpr int64_t kNcBlock = 256;
constexpr int64_t kPanelsPerBlock = kNcBlock / kPanelCols;

// Below this much work (2 m n k flops) OpenBLAS is as fast and per-call packing is not worth it.
constexpr int64_t kMinFlops = int64_t{1} << 26;

// The operands of one call: either plain matrices (a, b as blocked_gemm takes them) or, for A^T B, row
// pieces of both (segments, not null).
struct Operands {
  bool trans_a, trans_b;
  int64_t m, n, k;
  const float* a;
  const float* b;
  const std::vector<GemmSegment>* segments;
};

// The depth runs of A and the row starts of B for depth rows [k0, k0 + kc) of row-pieced operands.
void segment_slice(const Operands& op, int64_t k0, int64_t kc, std::vector<avx512::DepthRun>& runs,
                   const float** b_rows) {
  runs.clear();
  int64_t start = 0;  // first depth row of the current piece
  for (const GemmSegment& seg : *op.segments) {
    const int64_t lo = std::max(k0, start), hi = std::min(k0 + kc, start + seg.rows);
    if (lo < hi) {
      runs.push_back({seg.a + (lo - start) * op.m, hi - lo});
      for (int64_t r = lo; r < hi; ++r) b_rows[r - k0] = seg.b + (r - start) * op.n;
    }
    start += seg.rows;
    if (start >= k0 + kc) break;
  }
}

// One thread's share: column panels [p0, p1) and row tiles [r0, r1), every depth slice.
void run_share(const Operands& op, float alpha, float beta, float* c, int64_t p0, int64_t p1, int64_t r0, int64_t r1) {
  // Per-thread buffers that live for the process: the packed block (512 KB) and the slice's depth runs and B
  // rows. No allocation per call in steady state.
  thread_local std::vector<float> block;
  thread_local std::vector<avx512::DepthRun> runs;
  thread_local std::vector<const float*> b_rows;
  if (block.size() < static_cast<size_t>(kKcBlock * kNcBlock)) block.resize(static_cast<size_t>(kKcBlock * kNcBlock));
  if (b_rows.size() < static_cast<size_t>(kKcBlock)) b_rows.resize(static_cast<size_t>(kKcBlock));
  const int64_t m = op.m, n = op.n, k = op.k;
  const int64_t lda = op.trans_a ? m : k, ldb = op.trans_b ? k : n;
  for (int64_t k0 = 0; k0 < k; k0 += kKcBlock) {
    const int64_t kc = std::min(kKcBlock, k - k0);
    if (op.segments) {
      segment_slice(op, k0, kc, runs, b_rows.data());
    } else {
      runs.assign(1, {op.trans_a ? op.a + k0 * lda : op.a + k0, kc});
    }
    for (int64_t pb = p0; pb < p1; pb += kPanelsPerBlock) {
      const int64_t pe = std::min(p1, pb + kPanelsPerBlock), j0 = pb * kPanelCols;
      const int64_t width = std::min(pe * kPanelCols, n) - j0;
      if (op.segments) {
        avx512::pack_rows([&](int64_t kk) { return b_rows[static_cast<size_t>(kk)]; }, kc, j0, width, block.data());
      } else {
        avx512::pack_panels(op.trans_b, op.b, ldb, k0, kc, j0, width, block.data());
      }
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t i0 = r * avx512::kTileRows, rows = std::min(avx512::kTileRows, m - i0);
        const avx512::Microkernel kernel = avx512::select_microkernel(rows, op.trans_a);
        const int64_t a_offset = op.trans_a ? i0 : i0 * lda;
        for (int64_t p = pb; p < pe; ++p) {
          const int64_t j = p * kPanelCols;
          kernel(runs.data(), static_cast<int64_t>(runs.size()), a_offset, lda,
                 block.data() + (p - pb) * kc * kPanelCols, c + i0 * n + j, n, avx512::lane_mask(n - j),
                 avx512::lane_mask(n - j - 16), k0 == 0, alpha, beta);
        }
      }
    }
  }
}

void run(const Operands& op, float alpha, float beta, float* c) {
  LUONG_CHECK(packed_gemm_supported(), "blocked_gemm: this CPU has no AVX-512F (check blocked_gemm_pays() first)");
  const int64_t m = op.m, n = op.n, k = op.k;
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0f) return scale_by_beta(m * n, beta, c);
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols, row_tiles = (m + avx512::kTileRows - 1) / avx512::kTileRows;
  const int threads = (2 * m * n * k >= (int64_t{1} << 21)) ? num_threads() : 1;
  // Column blocks of at most kPanelsPerBlock panels, as many as a multiple of the thread count, sized
  // within one panel of each other: the threads' own runs start equal, as a fixed split would (with blocks of
  // exactly 8 panels the generator's 250 split 128 / 122, 3% slower on a quiet host).
  const int64_t blocks = balanced_units(panels, kPanelsPerBlock, threads);
  if (threads > 1 && blocks >= 2 * threads) {
    // Wide C: a contiguous run of blocks per thread, the rest stolen by whoever is done first
    // (stealing_ranges.h). Each block, every row tile and depth slice, packs its own B and is finished by
    // one thread.
    return run_stealing(panels, blocks, threads,
                        [&](int64_t p0, int64_t p1) { run_share(op, alpha, beta, c, p0, p1, 0, row_tiles); });
  }
  // Narrow C: a fixed share each. Columns split over threads when there are enough panels (each thread packs
  // only its own B and reads all of A); otherwise rows (each packs the same B). Either way a C tile is one
  // thread's. (Finer units here would re-read A, 8 MB for the generator's dX, once per unit.)
  const bool split_columns = panels >= 2 * threads || row_tiles < threads;
  auto share = [&](int t, int nt) {
    const int64_t p0 = split_columns ? panels * t / nt : 0, p1 = split_columns ? panels * (t + 1) / nt : panels;
    const int64_t r0 = split_columns ? 0 : row_tiles * t / nt,
                  r1 = split_columns ? row_tiles : row_tiles * (t + 1) / nt;
    run_share(op, alpha, beta, c, p0, p1, r0, r1);
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

}  // namespace

bool blocked_gemm_pays(int64_t m, int64_t n, int64_t k) { return packed_gemm_enabled() && 2 * m * n * k >= kMinFlops; }

void blocked_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c) {
  run({trans_a, trans_b, m, n, k, a, b, nullptr}, alpha, beta, c);
}

void blocked_gemm_tn_segments(int64_t m, int64_t n, const std::vector<GemmSegment>& segments, float beta, float* c) {
  int64_t k = 0;
  for (const GemmSegment& seg : segments) {
    LUONG_CHECK(seg.rows >= 0, "blocked_gemm_tn_segments: a segment of ", seg.rows, " rows");
    k += seg.rows;
  }
  run({true, false, m, n, k, nullptr, nullptr, &segments}, 1.0f, beta, c);
}

}  // namespace luong::cpu
