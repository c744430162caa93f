#ifdef LUONG_WITH_CUDA
// Row-major GEMM through cuBLAS, which is column-major: a row-major (m, n) C is a column-major (n, m) C^T,
// and C^T = op(B)^T op(A)^T, so each call passes B before A with m and n swapped. The leading dimensions
// are the row-major ones (lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n), as in kernels/cpu/gemm.cpp.
// The _64 entry points take int64 sizes, so no extent needs narrowing.
//
// float32 GEMMs follow gemm_precision() (framework/core/precision.h), read on every call:
//   fp32  cublasSgemm (no tensor cores: the handle's math mode stays CUBLAS_DEFAULT_MATH),
//   tf32  a cached cublasLt plan (gemm_lt.h; cublasGemmEx where it has none) / cublasGemmStridedBatchedEx
//         on float32 data with CUBLAS_COMPUTE_32F_FAST_TF32,
//   bf16  A and B converted to bf16 (round to nearest even) in scratch from the caching allocator (no
//         cudaMalloc once the cache is warm), then gemm_bf16 / cublasGemmStridedBatchedEx with CUDA_R_16BF
//         inputs, CUBLAS_COMPUTE_32F and float32 C, with the caller's alpha and beta.
// The precision is a per-call compute type, not handle state, so it cannot go stale on a handle.
#include <type_traits>

#include "framework/core/precision.h"
#include "framework/kernels/cuda/gemm_lt.h"
#include "framework/kernels/cuda/kernels.h"
#include "framework/kernels/cuda/runtime.h"

namespace luong::cuda {
namespace {

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Both operands of one (batched) GEMM as bf16 in device scratch, freed (back to the cache) on scope exit.
struct Bf16Operands {
  DeviceBuffer a, b;
  Bf16Operands(int64_t a_count, const float* a_src, int64_t b_count, const float* b_src)
      : a(sizeof(uint16_t) * static_cast<size_t>(a_count)), b(sizeof(uint16_t) * static_cast<size_t>(b_count)) {
    float_to_bf16(a_count, a_src, a.as<uint16_t>());
    float_to_bf16(b_count, b_src, b.as<uint16_t>());
  }
};

// Returns true when it ran the GEMM in tf32 or bf16, false for fp32.
bool reduced(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
             float beta, float* c) {
  const GemmPrecision p = gemm_precision();
  if (p == GemmPrecision::tf32) {
    gemm_ex(ta, tb, m, n, k, alpha, a, b, CUDA_R_32F, beta, c, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
    return true;
  }
  if (p == GemmPrecision::bf16) {
    const Bf16Operands x(m * k, a, k * n, b);
    gemm_bf16(ta, tb, m, n, k, alpha, x.a.as<uint16_t>(), x.b.as<uint16_t>(), beta, c);
    return true;
  }
  return false;
}

bool reduced_batched(bool ta, bool tb, int64_t batch, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     const float* b, float beta, float* c) {
  const GemmPrecision p = gemm_precision();
  if (p == GemmPrecision::fp32) return false;
  if (p == GemmPrecision::tf32) {
    LUONG_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
        cublas_handle(), op(tb), op(ta), n, m, k, &alpha, b, CUDA_R_32F, tb ? k : n, k * n, a, CUDA_R_32F,
        ta ? m : k, m * k, &beta, c, CUDA_R_32F, n, m * n, batch, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    return true;
  }
  const Bf16Operands x(batch * m * k, a, batch * k * n, b);
  LUONG_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
      cublas_handle(), op(tb), op(ta), n, m, k, &alpha, x.b.as<uint16_t>(), CUDA_R_16BF, tb ? k : n, k * n,
      x.a.as<uint16_t>(), CUDA_R_16BF, ta ? m : k, m * k, &beta, c, CUDA_R_32F, n, m * n, batch, CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  return true;
}

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
  if constexpr (std::is_same_v<T, float>) {  // float64 GEMMs are always full precision
    if (reduced(trans_a, trans_b, m, n, k, alpha, a, b, beta, c)) return;
  }
  blas(trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

template <class T>
void gemm_batched(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  const T* b, T beta, T* c) {
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) return scale_only(batch * m * n, beta, c);
  if constexpr (std::is_same_v<T, float>) {
    if (reduced_batched(trans_a, trans_b, batch, m, n, k, alpha, a, b, beta, c)) return;
  }
  blas_batched(trans_a, trans_b, batch, m, n, k, alpha, a, b, beta, c);
}

void gemm_bf16_weight(bool trans_w, int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* w, float beta,
                      float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_only(m * n, beta, c);
  const DeviceBuffer a16(sizeof(uint16_t) * static_cast<size_t>(m * k));
  float_to_bf16(m * k, a, a16.as<uint16_t>());
  gemm_bf16(false, trans_w, m, n, k, 1.0f, a16.as<uint16_t>(), w, beta, c);
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
