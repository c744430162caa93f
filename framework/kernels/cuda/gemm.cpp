#ifdef LUONG_WITH_CUDA
// Row-major GEMM through cuBLAS, which is column-major: a row-major (m, n) C is a column-major (n, m) C^T,
// and C^T = op(B)^T op(A)^T, so each call passes B before A with m and n swapped. The leading dimensions
// are the row-major ones (lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n), as in kernels/cpu/gemm.cpp.
// The _64 entry points take int64 sizes, so no extent needs narrowing.
#include "framework/kernels/cuda/kernels.h"
#include "framework/kernels/cuda/runtime.h"

namespace luong::cuda {
namespace {

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
          float* c) {
  LUONG_CUBLAS_CHECK(cublasSgemm_64(cublas_handle(), op(tb), op(ta), n, m, k, &alpha, b, tb ? k : n, a, ta ? m : k,
                                    &beta, c, n));
}

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c) {
  LUONG_CUBLAS_CHECK(cublasDgemm_64(cublas_handle(), op(tb), op(ta), n, m, k, &alpha, b, tb ? k : n, a, ta ? m : k,
                                    &beta, c, n));
}

void blas_batched(bool ta, bool tb, int64_t batch, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c) {
  LUONG_CUBLAS_CHECK(cublasSgemmStridedBatched_64(cublas_handle(), op(tb), op(ta), n, m, k, &alpha, b, tb ? k : n,
                                                  k * n, a, ta ? m : k, m * k, &beta, c, n, m * n, batch));
}

void blas_batched(bool ta, bool tb, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                  const double* b, double beta, double* c) {
  LUONG_CUBLAS_CHECK(cublasDgemmStridedBatched_64(cublas_handle(), op(tb), op(ta), n, m, k, &alpha, b, tb ? k : n,
                                                  k * n, a, ta ? m : k, m * k, &beta, c, n, m * n, batch));
}

// k == 0: C = beta * C, with beta == 0 meaning zero (not 0 * C, which would keep NaNs), as on the CPU.
template <class T>
void scale_only(int64_t count, T beta, T* c) {
  if (beta == T(0)) {
    LUONG_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(T) * static_cast<size_t>(count), stream()));
  } else if (beta != T(1)) {
    scale<T>(count, beta, c);
  }
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta,
          T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_only(m * n, beta, c);
  blas(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  const T* b, T beta, T* c) {
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) return scale_only(batch * m * n, beta, c);
  blas_batched(trans_a, trans_b, batch, m, n, k, alpha, a, b, beta, c);
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*, float, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*, double,
                           double*);
template void gemm_batched<float>(bool, bool, int64_t, int64_t, int64_t, int64_t, float, const float*, const float*,
                                  float, float*);
template void gemm_batched<double>(bool, bool, int64_t, int64_t, int64_t, int64_t, double, const double*,
                                   const double*, double, double*);

}  // namespace luong::cuda
#endif  // LUONG_WITH_CUDA
