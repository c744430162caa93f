// The CUDA-typed half of the runtime (device.h is the plain C++ half): each device's stream, cuBLAS handle
// and the small scratch buffers that reductions return their results through. For code in this directory
// and for other CUDA-aware code (the NCCL process group orders its stream against stream()).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "framework/kernels/cuda/check.h"
#include "framework/kernels/cuda/device.h"

namespace luong::cuda {

// Upper bound on the first-pass blocks of a deterministic reduction (see reduce.cu).
constexpr int kMaxReduceBlocks = 1024;

struct DeviceContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  void* blas_workspace = nullptr;  // cuBLAS workspace bound to the handle: keeps its kernels deterministic
  size_t blas_workspace_bytes = 0;  // its size; cublasLt (gemm_lt.cpp) uses the same buffer on the same stream
  // Reduction scratch: first-pass partials and one result slot on the device, a pinned result on the host.
  // Guarded by scratch_mutex from the first kernel that writes them to the read of the result.
  double* partials = nullptr;    // kMaxReduceBlocks
  double* result = nullptr;      // 1 double (or int64 / flag bits)
  double* host_result = nullptr; // pinned, 1 double
  std::mutex scratch_mutex;
};

// Makes `device` current for a scope and restores the previous one. Launchers use the current device's stream,
// so whatever must run on a given device's stream (a graph's capture and replay) runs under one of these.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    LUONG_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device) LUONG_CUDA_CHECK(cudaSetDevice(device));
    changed_ = prev_ != device;
  }
  ~DeviceGuard() {
    if (changed_) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = 0;
  bool changed_ = false;
};

// The context of the calling thread's current device / of a given device (created on first use).
DeviceContext& context();
DeviceContext& context(int device);
inline cudaStream_t stream() { return context().stream; }
inline cublasHandle_t cublas_handle() { return context().blas; }

// Copies `bytes` from the device scratch result to the pinned host slot and waits for the stream.
void read_result(DeviceContext& ctx, size_t bytes);

// A temporary device buffer from the caching allocator of the current device: free after the kernels that
// use it are queued is safe, because the next user of the block is queued behind them on the same stream.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  int device_;
  size_t bytes_;
  void* ptr_;
};

// Launch shape for an elementwise loop over n items: 256 threads, blocks capped (kernels stride the grid).
constexpr int kThreads = 256;
inline unsigned int grid_for(int64_t n, int threads = kThreads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace luong::cuda
