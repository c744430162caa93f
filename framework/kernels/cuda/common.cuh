// Device-side helpers shared by the .cu files: grid-stride indexing, float/double math overloads and
// deterministic block reductions (a fixed shuffle tree, so the same block size gives the same bits).
#pragma once
#include <cstdint>

#include "framework/kernels/cuda/runtime.h"

namespace luong::cuda {

__device__ inline int64_t global_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t global_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// The precise (not fast-math) single- and double-precision functions, picked by overload.
__device__ inline float dev_exp(float x) { return expf(x); }
__device__ inline double dev_exp(double x) { return ::exp(x); }
__device__ inline float dev_log(float x) { return logf(x); }
__device__ inline double dev_log(double x) { return ::log(x); }
__device__ inline float dev_tanh(float x) { return tanhf(x); }
__device__ inline double dev_tanh(double x) { return ::tanh(x); }
__device__ inline float dev_sqrt(float x) { return sqrtf(x); }
__device__ inline double dev_sqrt(double x) { return ::sqrt(x); }
template <class T>
__device__ inline T dev_sigmoid(T x) {
  return T(1) / (T(1) + dev_exp(-x));
}

template <class T>
__device__ inline T neg_infinity() {
  return -static_cast<T>(INFINITY);
}
template <class T>
__device__ inline T dev_nan() {
  return static_cast<T>(NAN);
}

struct SumOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct MaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};

// Reduces v over the block (blockDim.x a multiple of 32, at most 1024) and returns the result to every
// thread. Safe to call repeatedly in one kernel: the leading barrier keeps the previous call's readers
// ahead of this call's writers.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T partial[32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = threadIdx.x < (blockDim.x >> 5) ? partial[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

template <class T>
__device__ T block_sum(T v) {
  return block_reduce(v, SumOp{}, T(0));
}
template <class T>
__device__ T block_max(T v) {
  return block_reduce(v, MaxOp{}, neg_infinity<T>());
}

// Blocks for a row-wise kernel (a block per row, rows strided over the grid past the 65,535 limit).
inline unsigned row_grid(int64_t rows) { return static_cast<unsigned>(rows < 65535 ? rows : 65535); }

// Threads per block for a row-wise kernel over `cols` columns: a power of two in [32, 1024].
inline int row_threads(int64_t cols) {
  int t = 32;
  while (t < 1024 && t < cols) t <<= 1;
  return t;
}

}  // namespace luong::cuda
