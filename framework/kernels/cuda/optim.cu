// Fused optimizer updates over flat buffers; semantics (and expression order) are
// kernels/cpu/optim_kernels.h's. Every element is independent: one pass, deterministic. Built with --fmad=false
// (CMakeLists.txt), as the CPU file is without contraction: every operation rounded as written, the same bits.
#include "framework/kernels/cuda/common.cuh"
#include "framework/kernels/cuda/kernels.h"

namespace luong::cuda {
namespace {

template <class T>
__global__ void sgd_kernel(int64_t n, T* param, const T* grad, T grad_scale, T* m, T lr, T momentum, T weight_decay) {
  for (int64_t i = global_index(); i < n; i += global_stride()) {
    if (m == nullptr) {
      param[i] -= lr * (grad_scale * grad[i] + weight_decay * param[i]);
    } else {
      const T g = grad_scale * grad[i] + weight_decay * param[i];
      m[i] = momentum * m[i] + g;
      param[i] -= lr * m[i];
    }
  }
}

template <class T>
__global__ void adam_kernel(int64_t n, T* param, const T* grad, T grad_scale, T* m, T* v, T lr, T beta1, T beta2, T eps,
                            T coupled_wd, T decoupled_wd, T bias_correction1, T bias_correction2) {
  for (int64_t i = global_index(); i < n; i += global_stride()) {
    const T p = param[i];
    const T g = grad_scale * grad[i] + coupled_wd * p;
    const T mi = beta1 * m[i] + (T(1) - beta1) * g;
    const T vi = beta2 * v[i] + (T(1) - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const T m_hat = mi / bias_correction1;
    const T v_hat = vi / bias_correction2;
    param[i] = p - lr * (m_hat / (dev_sqrt(v_hat) + eps) + decoupled_wd * p);
  }
}

template <class T>
__global__ void ema_kernel(int64_t n, T* average, const T* param, T weight) {
  for (int64_t i = global_index(); i < n; i += global_stride()) average[i] += weight * (param[i] - average[i]);
}

template <class T>
__global__ void swap_kernel(int64_t n, T* a, T* b) {
  for (int64_t i = global_index(); i < n; i += global_stride()) {
    const T t = a[i];
    a[i] = b[i];
    b[i] = t;
  }
}

}  // namespace

template <class T>
void ema_update(int64_t n, T* average, const T* param, T weight) {
  if (n == 0) return;
  ema_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, average, param, weight);
  LUONG_CUDA_CHECK_LAUNCH("ema_kernel");
}

template <class T>
void swap_values(int64_t n, T* a, T* b) {
  if (n == 0) return;
  swap_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, a, b);
  LUONG_CUDA_CHECK_LAUNCH("swap_kernel");
}

template <class T>
void sgd_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T lr, T momentum, T weight_decay) {
  if (n == 0) return;
  sgd_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, param, grad, grad_scale, m, lr, momentum, weight_decay);
  LUONG_CUDA_CHECK_LAUNCH("sgd_kernel");
}

template <class T>
void adam_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T* v, T lr, T beta1, T beta2, T eps,
                 T weight_decay, bool decoupled, T bias_correction1, T bias_correction2) {
  if (n == 0) return;
  const T coupled_wd = decoupled ? T(0) : weight_decay;
  const T decoupled_wd = decoupled ? weight_decay : T(0);
  adam_kernel<<<grid_for(n), kThreads, 0, stream()>>>(n, param, grad, grad_scale, m, v, lr, beta1, beta2, eps,
                                                      coupled_wd, decoupled_wd, bias_correction1, bias_correction2);
  LUONG_CUDA_CHECK_LAUNCH("adam_kernel");
}

#define LUONG_INSTANTIATE(T)                                                                 \
  template void sgd_update<T>(int64_t, T*, const T*, T, T*, T, T, T);                        \
  template void adam_update<T>(int64_t, T*, const T*, T, T*, T*, T, T, T, T, T, bool, T, T); \
  template void ema_update<T>(int64_t, T*, const T*, T);                                     \
  template void swap_values<T>(int64_t, T*, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cuda
