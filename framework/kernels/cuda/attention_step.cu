// Fused global attention for one decoder step; semantics are kernels/cpu/attention_step.h's. A block per
// batch row (rows strided over the grid): a warp per source position for the dot products (lane-strided
// over H, then a fixed shuffle tree), block-wide max and sum for the softmax, a thread per hidden unit for
// the context. Every reduction has a fixed order, so results are deterministic.
#include "framework/core/error.h"
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"
#include "framework/kernels/cuda/softmax_row.cuh"

namespace luong::cuda {
namespace {

constexpr int kAttentionThreads = 256;  // 8 warps
constexpr size_t kSharedLimit = 48 * 1024;  // the default dynamic shared memory a block may use

// The full sum lands in lane 0.
template <class T>
__device__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

template <class T>
__global__ void attention_step_forward_kernel(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k,
                                              const T* v, const uint8_t* mask, T* weights, T* context) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* qb = q + b * dim;
    const uint8_t* mb = mask ? mask + b * src : nullptr;
    T* wb = weights + b * src;  // the scores, then (in place) the weights
    for (int64_t j = warp; j < src; j += warps) {
      if (mb && !mb[j]) continue;
      const T* kj = k + (b * src + j) * dim;
      T s = T(0);
      for (int64_t h = lane; h < dim; h += 32) s += qb[h] * kj[h];
      s = warp_sum(s);
      if (lane == 0) wb[j] = s;
    }
    __syncthreads();
    const T lse = softmax_row(false, src, wb, mb, wb);  // in place; lse block-uniform
    __syncthreads();
    T* cb = context + b * dim;
    if (!(lse > neg_infinity<T>())) {  // NaN row (NaN context) or fully masked row (zero context)
      for (int64_t h = threadIdx.x; h < dim; h += blockDim.x) cb[h] = lse != lse ? dev_nan<T>() : T(0);
      continue;
    }
    for (int64_t h = threadIdx.x; h < dim; h += blockDim.x) {
      T c = T(0);
      for (int64_t j = 0; j < src; ++j) c += wb[j] * v[(b * src + j) * dim + h];
      cb[h] = c;
    }
    __syncthreads();
  }
}

// dk and dv may be one buffer: each element of both is updated by one thread, in sequence.
template <class T>
__global__ void attention_step_backward_kernel(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k,
                                               const T* v, const T* weights, const T* gc, const T* gw, T* dq, T* dk,
                                               T* dv) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* ds = reinterpret_cast<T*>(shared_bytes);  // (src): dL/da, then dL/dscore
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* wb = weights + b * src;
    const T* gcb = gc ? gc + b * dim : nullptr;
    for (int64_t j = warp; j < src; j += warps) {
      T g = T(0);
      if (gcb && wb[j] != T(0)) {
        const T* vj = v + (b * src + j) * dim;
        for (int64_t h = lane; h < dim; h += 32) g += gcb[h] * vj[h];
        g = warp_sum(g);
      }
      if (lane == 0) ds[j] = g + (gw ? gw[b * src + j] : T(0));
    }
    __syncthreads();
    T weighted = T(0);
    for (int64_t j = threadIdx.x; j < src; j += blockDim.x) weighted += wb[j] * ds[j];
    weighted = block_sum(weighted);
    for (int64_t j = threadIdx.x; j < src; j += blockDim.x) ds[j] = wb[j] * (ds[j] - weighted);
    __syncthreads();
    if (dq)
      for (int64_t h = threadIdx.x; h < dim; h += blockDim.x) {
        T acc = T(0);
        for (int64_t j = 0; j < src; ++j) acc += ds[j] * k[(b * src + j) * dim + h];
        dq[b * dim + h] += acc;
      }
    if (dk || (dv && gcb))
      for (int64_t i = threadIdx.x; i < src * dim; i += blockDim.x) {
        const int64_t j = i / dim, h = i % dim, at = b * src * dim + i;
        if (dk) dk[at] += ds[j] * q[b * dim + h];
        if (dv && gcb) dv[at] += wb[j] * gcb[h];
      }
    __syncthreads();
  }
}

}  // namespace

template <class T>
void attention_step_forward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                            const uint8_t* mask, T* weights, T* context) {
  if (batch == 0 || src == 0 || dim == 0) return;
  attention_step_forward_kernel<<<row_grid(batch), kAttentionThreads, 0, stream()>>>(batch, src, dim, q, k, v, mask,
                                                                                     weights, context);
  LUONG_CUDA_CHECK_LAUNCH("attention_step_forward_kernel");
}

template <class T>
void attention_step_backward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                             const T* weights, const T* gc, const T* gw, T* dq, T* dk, T* dv) {
  if (batch == 0 || src == 0 || dim == 0) return;
  const size_t shared = static_cast<size_t>(src) * sizeof(T);
  LUONG_CHECK(shared <= kSharedLimit, "attention_step backward on CUDA: ", src, " source positions need ", shared,
              " bytes of shared memory, more than the ", kSharedLimit, " a block has (at most ",
              kSharedLimit / sizeof(T), " positions for this dtype)");
  attention_step_backward_kernel<<<row_grid(batch), kAttentionThreads, shared, stream()>>>(batch, src, dim, q, k, v,
                                                                                           weights, gc, gw, dq, dk, dv);
  LUONG_CUDA_CHECK_LAUNCH("attention_step_backward_kernel");
}

#define LUONG_INSTANTIATE(T)                                                                                       \
  template void attention_step_forward<T>(int64_t, int64_t, int64_t, const T*, const T*, const T*, const uint8_t*, \
                                          T*, T*);                                                                 \
  template void attention_step_backward<T>(int64_t, int64_t, int64_t, const T*, const T*, const T*, const T*,      \
                                           const T*, const T*, T*, T*, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cuda
