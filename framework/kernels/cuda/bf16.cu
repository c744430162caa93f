// float32 <-> bf16 conversions on the device. Round to nearest even, as Tensor::to(DType::bf16) does on
// the host, so a tensor cast on either side holds the same bits (NaN payloads aside).
#include <cuda_bf16.h>

#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

__device__ unsigned bf16_bits(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }

__global__ void float_to_bf16_kernel(int64_t n, const float* x, uint16_t* y) {
  for (int64_t i = global_index(); i < n; i += global_stride()) y[i] = static_cast<uint16_t>(bf16_bits(x[i]));
}

// Four values a thread per iteration: one 16-byte load and one 8-byte store instead of four 4-byte loads
// and four 2-byte stores (the scalar kernel reached 63-64% of HBM bandwidth on an H200: the narrow stores).
// x 16-byte and y 8-byte aligned; the n % 4 tail is the scalar kernel's. Same rounding, so the same bits.
__global__ void float_to_bf16_x4_kernel(int64_t quads, const float4* x, uint2* y) {
  for (int64_t i = global_index(); i < quads; i += global_stride()) {
    const float4 v = x[i];
    // Little-endian: the lower half of each word is the value at the lower address.
    y[i] = make_uint2(bf16_bits(v.x) | (bf16_bits(v.y) << 16), bf16_bits(v.z) | (bf16_bits(v.w) << 16));
  }
}

__global__ void bf16_to_float_kernel(int64_t n, const uint16_t* x, float* y) {
  for (int64_t i = global_index(); i < n; i += global_stride())
    y[i] = __uint_as_float(static_cast<unsigned>(x[i]) << 16);
}

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

}  // namespace

void float_to_bf16(int64_t n, const float* x, uint16_t* y) {
  if (n == 0) return;
  int64_t done = 0;
  if (n >= 4 && aligned(x, 16) && aligned(y, 8)) {
    const int64_t quads = n / 4;
    float_to_bf16_x4_kernel<<<grid_for(quads), kThreads, 0, stream()>>>(quads, reinterpret_cast<const float4*>(x),
                                                                         reinterpret_cast<uint2*>(y));
    LUONG_CUDA_CHECK_LAUNCH("float_to_bf16_x4_kernel");
    done = quads * 4;
  }
  if (done == n) return;
  float_to_bf16_kernel<<<grid_for(n - done), kThreads, 0, stream()>>>(n - done, x + done, y + done);
  LUONG_CUDA_CHECK_LAUNCH("float_to_bf16_kernel");
}

void bf16_to_float(int64_t n, const uint16_t* x, float* y) {
  if (n == 0) return;
  bf16_to_float_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, x, y);
  LUONG_CUDA_CHECK_LAUNCH("bf16_to_float_kernel");
}

}  // namespace luong::cuda
