#ifdef LUONG_WITH_CUDA
// bf16 x bf16 GEMM with float32 accumulation (CUBLAS_COMPUTE_32F): the tensor-core path for mixed precision,
// through a cached cublasLt plan (gemm_lt.h), or cublasGemmEx where cublasLt offers none. Same
// row-major-as-transposed-column-major convention as gemm.cpp.
#include "framework/kernels/cuda/gemm_lt.h"
#include "framework/kernels/cuda/kernels.h"
#include "framework/kernels/cuda/runtime.h"

namespace luong::cuda {
namespace {

void bf16_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a, const uint16_t* b,
               float beta, void* c, cudaDataType_t c_type) {
  if (m == 0 || n == 0) return;
  LUONG_CHECK(k > 0, "gemm_bf16: k must be positive, got (m, n, k) = (", m, ", ", n, ", ", k, ")");
  gemm_ex(ta, tb, m, n, k, alpha, a, b, CUDA_R_16BF, beta, c, c_type, CUBLAS_COMPUTE_32F);
}

}  // namespace

void gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
               const uint16_t* b, float beta, float* c) {
  bf16_gemm(trans_a, trans_b, m, n, k, alpha, a, b, beta, c, CUDA_R_32F);
}

void gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
               const uint16_t* b, float beta, uint16_t* c) {
  bf16_gemm(trans_a, trans_b, m, n, k, alpha, a, b, beta, c, CUDA_R_16BF);
}

}  // namespace luong::cuda
#endif  // LUONG_WITH_CUDA
