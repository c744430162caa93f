// The generator's in-place softmax cross-entropy; semantics are kernels/cpu/cross_entropy_inplace.h's.
// Forward: a block per row (max, sum of logits, e^(z - max) written in place with its sum, then the scale
// to probabilities). Gradient: elementwise over the buffer.
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

template <class T>
__global__ void cross_entropy_inplace_forward_kernel(int64_t rows, int64_t cols, T* z, const int64_t* target,
                                                     int64_t ignore_index, T eps, T* row_loss) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* zr = z + r * cols;
    const int64_t t = target[r];
    if (t == ignore_index) {  // uniform across the block: no thread reaches a barrier the others skip
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) zr[j] = T(0);
      if (threadIdx.x == 0) row_loss[r] = T(0);
      continue;
    }
    const T zt = zr[t];  // read by every thread before any write below (block_max holds a barrier)
    T mx = neg_infinity<T>(), sz = T(0);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      mx = zr[j] > mx ? zr[j] : mx;
      sz += zr[j];
    }
    mx = block_max(mx);
    if (eps != T(0)) sz = block_sum(sz);
    T se = T(0);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const T e = dev_exp(zr[j] - mx);
      zr[j] = e;
      se += e;
    }
    se = block_sum(se);
    const T lse = mx + dev_log(se);
    if (threadIdx.x == 0) {
      T nll = lse - zt;
      if (eps != T(0)) nll = (T(1) - eps) * nll + eps * (lse - sz / static_cast<T>(cols));
      row_loss[r] = nll;
    }
    const T inv = T(1) / se;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) zr[j] *= inv;
    __syncthreads();  // the next row's reductions reuse the shared scratch
  }
}

// Probabilities in, p - q out; an ignored row is already all zeros.
template <class T>
__global__ void cross_entropy_inplace_gradient_kernel(int64_t rows, int64_t cols, T* p, const int64_t* target,
                                                      int64_t ignore_index, T eps) {
  const T uniform = eps / static_cast<T>(cols);
  const int64_t total = rows * cols;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    const int64_t r = idx / cols, j = idx % cols;
    const int64_t t = target[r];
    if (t == ignore_index) continue;
    T v = p[idx] - uniform;
    if (j == t) v -= T(1) - eps;
    p[idx] = v;
  }
}

}  // namespace

// On the GPU the chunk is one buffer in HBM either way: bias, loss and gradient are one kernel pass each
// (a row per block for the loss, an element per thread for the rest), with the CPU kernel's semantics.
template <class T>
void cross_entropy_inplace(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target,
                           int64_t ignore_index, T eps, T* row_loss, bool grad) {
  if (rows == 0 || cols == 0) return;
  if (bias) binary_forward<T>(BinaryKind::add, rows * cols, rows * cols, z, cols, bias, z);
  cross_entropy_inplace_forward_kernel<<<row_grid(rows), row_threads(cols), 0, stream()>>>(rows, cols, z, target,
                                                                                           ignore_index, eps, row_loss);
  LUONG_CUDA_CHECK_LAUNCH("cross_entropy_inplace_forward_kernel");
  if (!grad) return;
  cross_entropy_inplace_gradient_kernel<<<grid_for(rows * cols), kThreads, 0, stream()>>>(rows, cols, z, target,
                                                                                          ignore_index, eps);
  LUONG_CUDA_CHECK_LAUNCH("cross_entropy_inplace_gradient_kernel");
}

template void cross_entropy_inplace<float>(int64_t, int64_t, float*, const float*, const int64_t*, int64_t, float,
                                           float*, bool);
template void cross_entropy_inplace<double>(int64_t, int64_t, double*, const double*, const int64_t*, int64_t, double,
                                            double*, bool);

}  // namespace luong::cuda
