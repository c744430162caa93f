// One row of the masked softmax / log-softmax on a block: the single definition of padding, fully masked
// rows and NaN, shared by the softmax kernels (softmax.cu) and the fused attention step (attention_step.cu).
// Semantics are kernels/cpu/softmax_row.h's.
#pragma once
#include "framework/kernels/cuda/common.cuh"

namespace luong::cuda {

// Writes y for one row; returns log-sum-exp of the unmasked entries, -inf for a fully masked row (all
// zeros) and NaN when an unmasked entry is NaN (all NaN). Masked entries of x are never read; y may be x.
// Every thread of the block must call it (it holds barriers); the caller syncs before reading y.
template <class T>
__device__ T softmax_row(bool log, int64_t cols, const T* xr, const uint8_t* mr, T* yr) {
  const T neg_inf = neg_infinity<T>();
  T mx = neg_inf, nan = T(0);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    if (!mr || mr[j]) {
      mx = xr[j] > mx ? xr[j] : mx;
      nan = xr[j] != xr[j] ? T(1) : nan;
    }
  mx = block_max(mx);
  if (block_max(nan) > T(0)) {  // NaN propagates to the whole row, as on the CPU
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = dev_nan<T>();
    return dev_nan<T>();
  }
  if (mx == neg_inf) {  // fully masked row: all zeros, as on the CPU
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = T(0);
    return neg_inf;
  }
  T sum = T(0);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    if (!mr || mr[j]) sum += dev_exp(xr[j] - mx);
  sum = block_sum(sum);
  const T lse = mx + dev_log(sum);
  if (log) {
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = (!mr || mr[j]) ? xr[j] - lse : neg_inf;
  } else {
    const T inv = T(1) / sum;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = (!mr || mr[j]) ? dev_exp(xr[j] - mx) * inv : T(0);
  }
  return lse;
}

}  // namespace luong::cuda
