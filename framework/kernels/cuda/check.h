// Error checks for CUDA runtime and cuBLAS calls: every call is wrapped, and a failure throws luong::Error
// naming the error, the call and its place ("cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation (out of
// memory) at framework/kernels/cuda/device.cpp:42").
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace luong::cuda::detail {

[[noreturn]] void fail_cuda(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void fail_cublas(cublasStatus_t s, const char* call, const char* file, int line);

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) fail_cuda(e, call, file, line);
}
inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) fail_cublas(s, call, file, line);
}

}  // namespace luong::cuda::detail

#define LUONG_CUDA_CHECK(call) ::luong::cuda::detail::check_cuda((call), #call, __FILE__, __LINE__)
#define LUONG_CUBLAS_CHECK(call) ::luong::cuda::detail::check_cublas((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: reports a bad configuration (or an earlier asynchronous fault) by kernel name.
#define LUONG_CUDA_CHECK_LAUNCH(kernel_name) \
  ::luong::cuda::detail::check_cuda(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)
