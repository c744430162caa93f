// Float32 GEMM on luong's AVX-512 microkernel, for the large products of a training step.
//
// Why: OpenBLAS 0.3.21 runs the step's large float32 GEMMs (the generator's 256 x 8000 x 256 chunks, the
// weight gradients with K = batch x steps, the encoder's input projections) at 145-200 GFLOP/s on the 2 Zen 4
// cores of the build machine, whose measured FMA peak is 235. This kernel reaches 180-205 on the same shapes
// (bench/engine_bench, "Large GEMM"), reusing the microkernel of packed_gemm.h.
//
// Scheme (GotoBLAS's, with A read in place): C is cut into column blocks of kNcBlock columns and depth
// slices of kKcBlock. For each slice and block a thread packs that piece of op(B) (512 KB, stays in L2) and
// sweeps every 8-row tile of A over it. Each thread starts on its own run of column blocks and then steals
// from the others' (stealing_ranges.h); a narrow C is split by a fixed share of columns or row tiles. Either
// way each C tile is finished by one thread, summed in the same order: the result is bitwise the same for
// any thread count. It differs from OpenBLAS's in the last bits, as two BLAS libraries do.
#pragma once
#include <cstdint>
#include <vector>

namespace luong::cpu {

// Whether gemm() should send this float32 product here: AVX-512 present, packed GEMM enabled
// (LUONG_PACKED_GEMM, packed_gemm.h) and the product large enough for per-call packing to pay.
bool blocked_gemm_pays(int64_t m, int64_t n, int64_t k);

// C (m, n) = alpha op(A) op(B) + beta C; all contiguous row-major, op(A) (m, k), op(B) (k, n), the
// operands stored transposed when trans_a / trans_b (as cblas_sgemm with CblasRowMajor and tight strides).
// beta 0 never reads C. Requires packed_gemm_supported().
void blocked_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c);

// One piece of row-stacked operands: `rows` rows of A (rows, m) and of B (rows, n), contiguous row-major.
struct GemmSegment {
  const float* a;
  const float* b;
  int64_t rows;
};

// C (m, n) = sum over segments of A_s^T B_s + beta C: A^T B for A and B stacked from the pieces by rows,
// without stacking them (deferred weight gradients, autograd/weight_grad_deferral.h, whose copies cost 33 MB
// of serial memcpy per training step). Bitwise equal to blocked_gemm(true, false, ...) on the stacked operands.
void blocked_gemm_tn_segments(int64_t m, int64_t n, const std::vector<GemmSegment>& segments, float beta, float* c);

}  // namespace luong::cpu
