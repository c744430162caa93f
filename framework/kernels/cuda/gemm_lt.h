// GEMMs through cublasLt with a cached plan per shape: the matmul descriptor, the three layouts and the
// algorithm the heuristic chose are built on the first call of a shape and reused after.
//
// Why: a training step of the paper model makes ~1,400 small GEMM calls (recurrent and per-step products,
// and their gradients), and the step is bound by the host. cublasGemmEx spent 10.3 us of host time per call
// on an H200's host (tools/diag/launch_census.cpp, 2026-11-30): it builds descriptors and asks the
// heuristic again on every call. A cached plan leaves only cublasLtMatmul itself.
//
// Column-major, as cuBLAS: D = C = alpha op_a(A) op_b(B) + beta C with A stored rows_a x cols_a (lda),
// and so on; callers in gemm.cpp / gemm_bf16.cpp do the row-major swap as they do for cublasGemmEx.
#pragma once
#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>

namespace luong::cuda {

struct LtGemm {
  cublasOperation_t op_a, op_b;
  int64_t m, n, k;  // of the column-major product: op_a(A) is m x k, op_b(B) is k x n, C is m x n
  const void* a;
  cudaDataType_t a_type;
  int64_t lda;
  const void* b;
  cudaDataType_t b_type;
  int64_t ldb;
  void* c;
  cudaDataType_t c_type;
  int64_t ldc;
  cublasComputeType_t compute;
};

// Runs the GEMM on the current device's stream with float alpha and beta and returns true, or returns false
// (having done nothing) when cublasLt offers no algorithm for it; the caller then uses cublasGemmEx.
bool lt_gemm(const LtGemm& g, float alpha, float beta);

}  // namespace luong::cuda
