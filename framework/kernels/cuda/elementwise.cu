// Elementwise kernels; the semantics (and the accumulate-vs-overwrite of each) are kernels/cpu/elementwise.h's.
#include "framework/core/philox.h"
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

template <class T>
__global__ void unary_forward_kernel(UnaryKind k, int64_t n, const T* x, T* y) {
  for (int64_t i = global_index(); i < n; i += global_stride()) {
    const T v = x[i];
    switch (k) {
      case UnaryKind::tanh: y[i] = dev_tanh(v); break;
      case UnaryKind::sigmoid: y[i] = dev_sigmoid(v); break;
      case UnaryKind::relu: y[i] = v > T(0) ? v : T(0); break;
      case UnaryKind::exp: y[i] = dev_exp(v); break;
      case UnaryKind::log: y[i] = dev_log(v); break;
      case UnaryKind::neg: y[i] = -v; break;
      case UnaryKind::sqrt: y[i] = dev_sqrt(v); break;
    }
  }
}

// x or y may be null when the derivative of `k` does not read it (as on the CPU).
template <class T>
__global__ void unary_backward_kernel(UnaryKind k, int64_t n, const T* x, const T* y, const T* gy, T* gx) {
  for (int64_t i = global_index(); i < n; i += global_stride()) {
    const T g = gy[i];
    switch (k) {
      case UnaryKind::tanh: gx[i] += g * (T(1) - y[i] * y[i]); break;
      case UnaryKind::sigmoid: gx[i] += g * y[i] * (T(1) - y[i]); break;
      case UnaryKind::relu: gx[i] += x[i] > T(0) ? g : T(0); break;
      case UnaryKind::exp: gx[i] += g * y[i]; break;
      case UnaryKind::log: gx[i] += g / x[i]; break;
      case UnaryKind::neg: gx[i] -= g; break;
      case UnaryKind::sqrt: gx[i] += g / (T(2) * y[i]); break;
    }
  }
}

template <class T>
__device__ inline T apply(BinaryKind k, T a, T b) {
  switch (k) {
    case BinaryKind::add: return a + b;
    case BinaryKind::sub: return a - b;
    case BinaryKind::mul: return a * b;
    case BinaryKind::div: return a / b;
  }
  return a;
}

template <class T>
__global__ void binary_same_kernel(BinaryKind k, int64_t n, const T* a, const T* b, T* out) {
  for (int64_t i = global_index(); i < n; i += global_stride()) out[i] = apply(k, a[i], b[i]);
}

// One operand repeats: a[i % na], b[i % nb] (na, nb divide n).
template <class T>
__global__ void binary_broadcast_kernel(BinaryKind k, int64_t n, int64_t na, const T* a, int64_t nb, const T* b,
                                        T* out) {
  for (int64_t i = global_index(); i < n; i += global_stride()) out[i] = apply(k, a[i % na], b[i % nb]);
}

// out[j] += sum_r x[r, j], rows in order: the CPU's summation order, bit for bit.
template <class T>
__global__ void sum_rows_kernel(int64_t rows, int64_t cols, const T* x, T* out) {
  for (int64_t j = global_index(); j < cols; j += global_stride()) {
    T acc = out[j];
    for (int64_t r = 0; r < rows; ++r) acc += x[r * cols + j];
    out[j] = acc;
  }
}

// Tall inputs: chunk c sums rows [c * chunk_rows, ...) of every column into partial[c, j].
template <class T>
__global__ void sum_rows_chunked_kernel(int64_t rows, int64_t cols, int64_t chunk_rows, const T* x, T* partial) {
  const int64_t c = blockIdx.y;
  const int64_t r0 = c * chunk_rows, r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  for (int64_t j = global_index(); j < cols; j += global_stride()) {
    T acc = T(0);
    for (int64_t r = r0; r < r1; ++r) acc += x[r * cols + j];
    partial[c * cols + j] = acc;
  }
}

template <class T>
__global__ void affine_kernel(int64_t n, const T* x, T alpha, T beta, T* y) {
  for (int64_t i = global_index(); i < n; i += global_stride()) y[i] = alpha * x[i] + beta;
}

template <class T>
__global__ void axpy_kernel(int64_t n, T alpha, const T* x, T* y) {
  for (int64_t i = global_index(); i < n; i += global_stride()) y[i] += alpha * x[i];
}

template <class T>
__global__ void mul_kernel(int64_t n, const T* x, const T* m, T* y) {
  for (int64_t i = global_index(); i < n; i += global_stride()) y[i] = x[i] * m[i];
}

template <class T>
__global__ void masked_fill_kernel(int64_t n, const T* x, int64_t n_mask, const uint8_t* mask, T value, T* y) {
  for (int64_t i = global_index(); i < n; i += global_stride()) y[i] = mask[i % n_mask] ? value : x[i];
}

template <class T>
__global__ void window_mask_kernel(int64_t rows, int64_t cols, const T* centers, const uint8_t* src_mask,
                                   double radius, uint8_t* out) {
  for (int64_t i = global_index(); i < rows * cols; i += global_stride()) {
    const double d = static_cast<double>(i % cols) - static_cast<double>(centers[i / cols]);
    out[i] = src_mask[i] != 0 && fabs(d) <= radius ? 1 : 0;
  }
}

template <class T>
__global__ void masked_fill_backward_kernel(int64_t n, const T* gy, int64_t n_mask, const uint8_t* mask, T* gx) {
  for (int64_t i = global_index(); i < n; i += global_stride())
    if (!mask[i % n_mask]) gx[i] += gy[i];
}

// One Philox call yields the 4 uniforms of elements 4q .. 4q+3, exactly philox_uniform_at's values.
template <class T>
__global__ void dropout_mask_kernel(int64_t n, float p, T scale, uint64_t seed, uint64_t offset, T* m) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t q = global_index(); q < groups; q += global_stride()) {
    const Philox4x32 r = philox4x32_10(offset + static_cast<uint64_t>(q), 0, seed);
    for (int j = 0; j < 4; ++j) {
      const int64_t i = 4 * q + j;
      if (i < n) m[i] = philox_uniform(r.v[j]) >= p ? scale : T(0);
    }
  }
}

}  // namespace

template <class T>
void unary_forward(UnaryKind k, int64_t n, const T* x, T* y) {
  if (n == 0) return;
  unary_forward_kernel<<<grid_for(n), kThreads, 0, stream()>>>(k, n, x, y);
  LUONG_CUDA_CHECK_LAUNCH("unary_forward_kernel");
}

template <class T>
void unary_backward(UnaryKind k, int64_t n, const T* x, const T* y, const T* gy, T* gx) {
  if (n == 0) return;
  unary_backward_kernel<<<grid_for(n), kThreads, 0, stream()>>>(k, n, x, y, gy, gx);
  LUONG_CUDA_CHECK_LAUNCH("unary_backward_kernel");
}

template <class T>
void binary_forward(BinaryKind k, int64_t n, int64_t na, const T* a, int64_t nb, const T* b, T* out) {
  if (n == 0 || na == 0 || nb == 0) return;
  if (na == n && nb == n) {
    binary_same_kernel<<<grid_for(n), kThreads, 0, stream()>>>(k, n, a, b, out);
    LUONG_CUDA_CHECK_LAUNCH("binary_same_kernel");
  } else {
    binary_broadcast_kernel<<<grid_for(n), kThreads, 0, stream()>>>(k, n, na, a, nb, b, out);
    LUONG_CUDA_CHECK_LAUNCH("binary_broadcast_kernel");
  }
}

template <class T>
void sum_rows_accumulate(int64_t rows, int64_t cols, const T* x, T* out) {
  if (rows == 0 || cols == 0) return;
  // A thread per column walks its rows: enough parallelism with few rows, or with so many columns that they
  // alone fill the device. Otherwise the rows are cut into chunks whose size depends on the shape alone
  // (deterministic), and the chunk partials are then summed in chunk order. Deferred bias gradients are the
  // tall case: batch x steps rows of 4 x hidden columns (6,400 x 4,096 for a 1024-wide layer, where a thread
  // per column would run 16 blocks on the whole device).
  if (rows <= 256 || cols >= 65536) {
    sum_rows_kernel<<<grid_for(cols), kThreads, 0, stream()>>>(rows, cols, x, out);
    LUONG_CUDA_CHECK_LAUNCH("sum_rows_kernel");
    return;
  }
  // At most 256 chunks, so that the second pass, a thread per column over the chunks, stays short.
  int64_t chunk_rows = 64;
  while ((rows + chunk_rows - 1) / chunk_rows > 256) chunk_rows *= 2;
  const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  DeviceBuffer partial(sizeof(T) * static_cast<size_t>(chunks * cols));
  const dim3 grid(grid_for(cols), static_cast<unsigned>(chunks));
  sum_rows_chunked_kernel<<<grid, kThreads, 0, stream()>>>(rows, cols, chunk_rows, x, partial.as<T>());
  LUONG_CUDA_CHECK_LAUNCH("sum_rows_chunked_kernel");
  sum_rows_kernel<<<grid_for(cols), kThreads, 0, stream()>>>(chunks, cols, partial.as<T>(), out);
  LUONG_CUDA_CHECK_LAUNCH("sum_rows_kernel");
}

template <class T>
void affine(int64_t n, const T* x, T alpha, T beta, T* y) {
  if (n == 0) return;
  affine_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, x, alpha, beta, y);
  LUONG_CUDA_CHECK_LAUNCH("affine_kernel");
}

template <class T>
void axpy(int64_t n, T alpha, const T* x, T* y) {
  if (n == 0) return;
  axpy_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, alpha, x, y);
  LUONG_CUDA_CHECK_LAUNCH("axpy_kernel");
}

template <class T>
void mul(int64_t n, const T* x, const T* m, T* y) {
  if (n == 0) return;
  mul_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, x, m, y);
  LUONG_CUDA_CHECK_LAUNCH("mul_kernel");
}

template <class T>
void masked_fill(int64_t n, const T* x, int64_t n_mask, const uint8_t* mask, T value, T* y) {
  if (n == 0) return;
  masked_fill_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, x, n_mask, mask, value, y);
  LUONG_CUDA_CHECK_LAUNCH("masked_fill_kernel");
}

template <class T>
void window_mask(int64_t rows, int64_t cols, const T* centers, const uint8_t* src_mask, double radius, uint8_t* out) {
  if (rows * cols == 0) return;
  window_mask_kernel<<<grid_for(rows * cols), kThreads, 0, stream()>>>(rows, cols, centers, src_mask, radius, out);
  LUONG_CUDA_CHECK_LAUNCH("window_mask_kernel");
}

template <class T>
void masked_fill_backward(int64_t n, const T* gy, int64_t n_mask, const uint8_t* mask, T* gx) {
  if (n == 0) return;
  masked_fill_backward_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, gy, n_mask, mask, gx);
  LUONG_CUDA_CHECK_LAUNCH("masked_fill_backward_kernel");
}

template <class T>
void dropout_mask(int64_t n, float p, uint64_t seed, uint64_t offset, T* m) {
  if (n == 0) return;
  const T scale = T(1) / (T(1) - static_cast<T>(p));  // the CPU kernel's expression, for identical values
  dropout_mask_kernel<<<grid_for((n + 3) / 4), kThreads, 0, stream()>>>(n, p, scale, seed, offset, m);
  LUONG_CUDA_CHECK_LAUNCH("dropout_mask_kernel");
}

#define LUONG_INSTANTIATE(T)                                                                       \
  template void unary_forward<T>(UnaryKind, int64_t, const T*, T*);                                \
  template void unary_backward<T>(UnaryKind, int64_t, const T*, const T*, const T*, T*);           \
  template void binary_forward<T>(BinaryKind, int64_t, int64_t, const T*, int64_t, const T*, T*);  \
  template void sum_rows_accumulate<T>(int64_t, int64_t, const T*, T*);                            \
  template void affine<T>(int64_t, const T*, T, T, T*);                                            \
  template void axpy<T>(int64_t, T, const T*, T*);                                                 \
  template void mul<T>(int64_t, const T*, const T*, T*);                                           \
  template void masked_fill<T>(int64_t, const T*, int64_t, const uint8_t*, T, T*);                 \
  template void masked_fill_backward<T>(int64_t, const T*, int64_t, const uint8_t*, T*);           \
  template void window_mask<T>(int64_t, int64_t, const T*, const uint8_t*, double, uint8_t*);      \
  template void dropout_mask<T>(int64_t, float, uint64_t, uint64_t, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cuda
