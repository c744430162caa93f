// Row-major GEMM through CBLAS (OpenBLAS): C = alpha * op(A) op(B) + beta * C,
// op(A) (m, k), op(B) (k, n), C (m, n).
#pragma once
#include <cstdint>

namespace luong::cpu {

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c);
// `batch` independent GEMMs with contiguous operands of the given per-item sizes.
template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  const T* b, T beta, T* c);

}  // namespace luong::cpu
