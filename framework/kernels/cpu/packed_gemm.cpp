#include "framework/kernels/cpu/packed_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "framework/core/error.h"
#include "framework/kernels/cpu/avx512_microkernel.h"
#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/path_switch.h"
#include "framework/kernels/cpu/scale_by_beta.h"
#include "framework/kernels/cpu/stealing_ranges.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace luong::cpu {
namespace {

using avx512::kTileRows;
using avx512::lane_mask;
using avx512::Microkernel;

constexpr int64_t kDepthBlock = 256;  // k per pass, so a B panel slice (32 KB) and an A block stay in L1/L2
constexpr int64_t kUnitPanels = 2;    // panels per unit of work handed between threads

bool detect_supported() {
  __builtin_cpu_init();  // libgcc's check includes the OS saving the AVX-512 registers (XCR0)
  return __builtin_cpu_supports("avx512f");
}

bool enabled_by_environment() {
  const char* env = std::getenv("LUONG_PACKED_GEMM");
  return !(env && std::strcmp(env, "0") == 0);
}

PathSwitch& path() {
  static PathSwitch s(detect_supported(), enabled_by_environment());
  return s;
}

}  // namespace

bool packed_gemm_supported() { return path().supported(); }

bool packed_gemm_enabled() { return path().on(); }

bool set_packed_gemm_enabled(bool on) { return path().set(on); }

int64_t packed_size(int64_t k, int64_t n) { return (n + kPanelCols - 1) / kPanelCols * kPanelCols * k; }

void pack_b(bool trans_b, int64_t k, int64_t n, const float* b, float* packed) {
  // B read by rows: groups of up to 8 panels per task, enough of each row read in order (see pack_panels)
  // to pay for the jumps, but no more than an even share, so a 256-column weight keeps both threads busy.
  // B transposed: a panel reads its own 32 rows of B, so one panel per task.
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols;
  const int64_t group = trans_b ? 1 : std::clamp<int64_t>((panels + num_threads() - 1) / num_threads(), 1, 8);
  const int64_t groups = (panels + group - 1) / group;
  parallel_ranges(groups, k * n >= kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t g = lo; g < hi; ++g) {
      const int64_t j0 = g * group * kPanelCols, width = std::min(group * kPanelCols, n - j0);
      avx512::pack_panels(trans_b, b, trans_b ? k : n, 0, k, j0, width, packed + j0 * k);
    }
  });
}

void gemm_packed(int64_t m, int64_t n, int64_t k, const float* a, const float* packed_b, float beta, float* c) {
  LUONG_CHECK(packed_gemm_supported(), "gemm_packed: this CPU has no AVX-512F (check packed_gemm_enabled() first)");
  if (m == 0 || n == 0) return;
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols;
  const int64_t row_blocks = (m + kTileRows - 1) / kTileRows;
  if (k == 0) return scale_by_beta(m * n, beta, c);
  // Panels [p0, p1) by row tiles [r0, r1), every depth slice: a C tile is finished by the one call that
  // owns it, summed in the same order, so the bits do not depend on who runs it.
  auto tiles = [&](int64_t p0, int64_t p1, int64_t r0, int64_t r1) {
    for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
      const int64_t kc = std::min(kDepthBlock, k - k0);
      const avx512::DepthRun run{a + k0, kc};
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t i0 = r * kTileRows, rows = std::min(kTileRows, m - i0);
        const Microkernel kernel = avx512::select_microkernel(rows, false);
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t j0 = p * kPanelCols;
          kernel(&run, 1, i0 * k, k, packed_b + p * k * kPanelCols + k0 * kPanelCols, c + i0 * n + j0, n,
                 lane_mask(n - j0), lane_mask(n - j0 - 16), k0 == 0, 1.0f, beta);
        }
      }
    }
  };
  const int threads = (2 * m * n * k >= (int64_t{1} << 21)) ? num_threads() : 1;
#ifdef _OPENMP
  if (threads > 1) {
    // Units of at most kUnitPanels panels, as many as a multiple of the thread count and within one panel of
    // each other in size (every thread reads all of A, which is small for the shapes this serves); a
    // contiguous run per thread, the rest stolen by whoever is done first (stealing_ranges.h). Too few
    // panels for that, and the row tiles are split instead, a fixed share each.
    const int64_t units = balanced_units(panels, kUnitPanels, threads);
    if (units >= 2 * threads && units <= panels)
      return run_stealing(panels, units, threads, [&](int64_t p0, int64_t p1) { tiles(p0, p1, 0, row_blocks); });
#pragma omp parallel num_threads(threads)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      tiles(0, panels, row_blocks * t / nt, row_blocks * (t + 1) / nt);
    }
    return;
  }
#endif
  tiles(0, panels, 0, row_blocks);
}

}  // namespace luong::cpu
