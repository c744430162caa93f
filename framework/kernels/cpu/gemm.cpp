#include "framework/kernels/cpu/gemm.h"

#include <cblas.h>

namespace luong::cpu {
namespace {

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
          float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(ta ? m : k), b,
              static_cast<int>(tb ? k : n), beta, c, static_cast<int>(n));
}

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(ta ? m : k), b,
              static_cast<int>(tb ? k : n), beta, c, static_cast<int>(n));
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta,
          T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS leaves C untouched for k == 0 only when beta == 1; make beta explicit.
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == T(0) ? T(0) : beta * c[i];
    return;
  }
  blas(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  const T* b, T beta, T* c) {
  for (int64_t i = 0; i < batch; ++i) gemm<T>(trans_a, trans_b, m, n, k, alpha, a + i * m * k, b + i * k * n, beta, c + i * m * n);
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*, float, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*, double,
                           double*);
template void gemm_batched<float>(bool, bool, int64_t, int64_t, int64_t, int64_t, float, const float*, const float*,
                                  float, float*);
template void gemm_batched<double>(bool, bool, int64_t, int64_t, int64_t, int64_t, double, const double*,
                                   const double*, double, double*);

}  // namespace luong::cpu
