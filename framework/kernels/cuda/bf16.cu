// float32 <-> bf16 conversions on the device. Round to nearest even, as Tensor::to(DType::bf16) does on
// the host, so a tensor cast on either side holds the same bits (NaN payloads aside).
#include <cuda_bf16.h>

#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

__global__ void float_to_bf16_kernel(int64_t n, const float* x, uint16_t* y) {
  for (int64_t i = global_index(); i < n; i += global_stride())
    y[i] = __bfloat16_as_ushort(__float2bfloat16_rn(x[i]));
}

__global__ void bf16_to_float_kernel(int64_t n, const uint16_t* x, float* y) {
  for (int64_t i = global_index(); i < n; i += global_stride()) y[i] = __uint_as_float(static_cast<unsigned>(x[i]) << 16);
}

}  // namespace

void float_to_bf16(int64_t n, const float* x, uint16_t* y) {
  if (n == 0) return;
  float_to_bf16_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, x, y);
  LUONG_CUDA_CHECK_LAUNCH("float_to_bf16_kernel");
}

void bf16_to_float(int64_t n, const uint16_t* x, float* y) {
  if (n == 0) return;
  bf16_to_float_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, x, y);
  LUONG_CUDA_CHECK_LAUNCH("bf16_to_float_kernel");
}

}  // namespace luong::cuda
