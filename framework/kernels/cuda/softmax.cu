// Softmax, log-softmax and the fused cross-entropy over the last dim; semantics are kernels/cpu/softmax.h's.
// A block per row (rows strided over the grid), block-wide max and sum through the fixed reduction tree.
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"
#include "framework/kernels/cuda/softmax_row.cuh"

namespace luong::cuda {
namespace {

template <class T>
__global__ void softmax_forward_kernel(bool log, int64_t rows, int64_t cols, const T* x, const uint8_t* mask, T* y) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    softmax_row(log, cols, x + r * cols, mask ? mask + r * cols : nullptr, y + r * cols);
}

template <class T>
__global__ void softmax_backward_kernel(bool log, int64_t rows, int64_t cols, const T* y, const T* gy,
                                        const uint8_t* mask, T* gx) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* yr = y + r * cols;
    const T* gr = gy + r * cols;
    const uint8_t* mr = mask ? mask + r * cols : nullptr;
    T* gxr = gx + r * cols;
    T dot = T(0);
    if (log) {  // gx += gy - exp(y) sum(gy), over unmasked positions
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        if (!mr || mr[j]) dot += gr[j];
      dot = block_sum(dot);
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        if (!mr || mr[j]) gxr[j] += gr[j] - dev_exp(yr[j]) * dot;
    } else {  // gx += y (gy - sum(gy y)); masked y are 0
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) dot += gr[j] * yr[j];
      dot = block_sum(dot);
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) gxr[j] += yr[j] * (gr[j] - dot);
    }
  }
}

template <class T>
__global__ void cross_entropy_forward_kernel(int64_t rows, int64_t cols, const T* logits, const int64_t* target,
                                             int64_t ignore_index, T eps, T* logp, T* row_loss) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = logits + r * cols;
    const T lse = softmax_row(true, cols, xr, static_cast<const uint8_t*>(nullptr), logp + r * cols);
    const int64_t t = target[r];
    T sum_lp = T(0);  // sum of the row's log-probabilities, for the smoothing term
    if (eps != T(0)) {
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum_lp += xr[j] - lse;
      sum_lp = block_sum(sum_lp);
    }
    if (threadIdx.x == 0) {
      if (t == ignore_index) {
        row_loss[r] = T(0);
      } else {
        T nll = -(xr[t] - lse);  // -logp[t], the value written to logp
        if (eps != T(0)) nll = (T(1) - eps) * nll - eps * (sum_lp / static_cast<T>(cols));
        row_loss[r] = nll;
      }
    }
  }
}

// glogits += g (softmax - q): elementwise, the target column's two terms applied in the CPU's order.
template <class T>
__global__ void cross_entropy_backward_kernel(int64_t rows, int64_t cols, const T* logp, const int64_t* target,
                                              int64_t ignore_index, T eps, T g, T* glogits) {
  const T uniform = eps / static_cast<T>(cols);
  const int64_t total = rows * cols;
  for (int64_t idx = global_index(); idx < total; idx += global_stride()) {
    const int64_t r = idx / cols, j = idx % cols;
    const int64_t t = target[r];
    if (t == ignore_index) continue;
    T acc = glogits[idx] + g * (dev_exp(logp[idx]) - uniform);
    if (j == t) acc -= g * (T(1) - eps);
    glogits[idx] = acc;
  }
}

}  // namespace

template <class T>
void softmax_forward(bool log, int64_t rows, int64_t cols, const T* x, const uint8_t* mask, T* y) {
  if (rows == 0 || cols == 0) return;
  softmax_forward_kernel<<<row_grid(rows), row_threads(cols), 0, stream()>>>(log, rows, cols, x, mask, y);
  LUONG_CUDA_CHECK_LAUNCH("softmax_forward_kernel");
}

template <class T>
void softmax_backward(bool log, int64_t rows, int64_t cols, const T* y, const T* gy, const uint8_t* mask, T* gx) {
  if (rows == 0 || cols == 0) return;
  softmax_backward_kernel<<<row_grid(rows), row_threads(cols), 0, stream()>>>(log, rows, cols, y, gy, mask, gx);
  LUONG_CUDA_CHECK_LAUNCH("softmax_backward_kernel");
}

template <class T>
void cross_entropy_forward(int64_t rows, int64_t cols, const T* logits, const int64_t* target, int64_t ignore_index,
                           T eps, T* logp, T* row_loss) {
  if (rows == 0 || cols == 0) return;
  cross_entropy_forward_kernel<<<row_grid(rows), row_threads(cols), 0, stream()>>>(rows, cols, logits, target,
                                                                                   ignore_index, eps, logp, row_loss);
  LUONG_CUDA_CHECK_LAUNCH("cross_entropy_forward_kernel");
}

template <class T>
void cross_entropy_backward(int64_t rows, int64_t cols, const T* logp, const int64_t* target, int64_t ignore_index,
                            T eps, T g, T* glogits) {
  if (rows == 0 || cols == 0) return;
  cross_entropy_backward_kernel<<<grid_for(rows * cols), kThreads, 0, stream()>>>(rows, cols, logp, target,
                                                                                  ignore_index, eps, g, glogits);
  LUONG_CUDA_CHECK_LAUNCH("cross_entropy_backward_kernel");
}

#define LUONG_INSTANTIATE(T)                                                                                      \
  template void softmax_forward<T>(bool, int64_t, int64_t, const T*, const uint8_t*, T*);                        \
  template void softmax_backward<T>(bool, int64_t, int64_t, const T*, const T*, const uint8_t*, T*);             \
  template void cross_entropy_forward<T>(int64_t, int64_t, const T*, const int64_t*, int64_t, T, T*, T*);        \
  template void cross_entropy_backward<T>(int64_t, int64_t, const T*, const int64_t*, int64_t, T, T, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cuda
