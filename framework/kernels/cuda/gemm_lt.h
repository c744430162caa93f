// GEMMs through cublasLt with a cached plan per shape: the matmul descriptor, the three layouts and the
// algorithm the heuristic chose are built on the first call of a shape and reused after.
//
// Why: a training step of the paper model makes ~1,400 small GEMM calls (recurrent and per-step products,
// and their gradients), and the step is bound by the host. cublasGemmEx spent 10.3 us of host time per call
// on an H200's host (tools/diag/launch_census.cpp, 2026-11-30): it builds descriptors and asks the
// heuristic again on every call. A cached plan leaves only cublasLtMatmul itself.
//
// Row-major C (m, n) = alpha op(A) op(B) + beta C with A and B of ab_type, C of c_type, accumulated in
// `compute`, on the current device's stream; the same conventions as gemm() (kernels.h): the row-major
// operands are passed to cuBLAS swapped, as the transposed column-major product. Runs a cached cublasLt plan,
// or cublasGemmEx where cublasLt offers no algorithm for the shape. k must be positive.
#pragma once
#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>

namespace luong::cuda {

void gemm_ex(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a, const void* b,
             cudaDataType_t ab_type, float beta, void* c, cudaDataType_t c_type, cublasComputeType_t compute);

}  // namespace luong::cuda
