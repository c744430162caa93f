// Row-major GEMM through CBLAS (OpenBLAS): C = alpha * op(A) op(B) + beta * C,
// op(A) (m, k), op(B) (k, n), C (m, n).
#pragma once
#include <cstdint>
#include <vector>

#include "framework/kernels/cpu/blocked_gemm.h"

namespace luong::cpu {

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c);
// `batch` independent GEMMs with contiguous operands of the given per-item sizes.
template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  const T* b, T beta, T* c);
// C (m, n) = sum over pieces of A_s^T B_s + beta C, reading the row pieces in place, when gemm() would run
// this float32 product (k = the pieces' total rows) on luong's blocked kernel; returns false and does
// nothing otherwise, and the caller stacks the pieces and calls gemm().
bool gemm_tn_pieces(int64_t m, int64_t n, int64_t k, const std::vector<GemmSegment>& pieces, float beta, float* c);
// Whether gemm_tn_pieces runs (rather than returns false) for this shape.
bool gemm_tn_reads_pieces(int64_t m, int64_t n, int64_t k);

}  // namespace luong::cpu
