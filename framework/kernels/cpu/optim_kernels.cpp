#include "framework/kernels/cpu/optim_kernels.h"

#include <cmath>

#include "framework/kernels/cpu/parallel.h"

namespace luong::cpu {

template <class T>
void sgd_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T lr, T momentum, T weight_decay) {
  if (m == nullptr) {
    parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
      // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
      for (int64_t i = lo; i < hi; ++i) param[i] -= lr * (grad_scale * grad[i] + weight_decay * param[i]);
    });
    return;
  }
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) {
      const T g = grad_scale * grad[i] + weight_decay * param[i];
      m[i] = momentum * m[i] + g;
      param[i] -= lr * m[i];
    }
  });
}

template <class T>
void adam_update(int64_t n, T* param, const T* grad, T grad_scale, T* m, T* v, T lr, T beta1, T beta2, T eps,
                 T weight_decay, bool decoupled, T bias_correction1, T bias_correction2) {
  const T coupled_wd = decoupled ? T(0) : weight_decay;
  const T decoupled_wd = decoupled ? weight_decay : T(0);
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) {
      const T p = param[i];
      const T g = grad_scale * grad[i] + coupled_wd * p;
      m[i] = beta1 * m[i] + (T(1) - beta1) * g;
      v[i] = beta2 * v[i] + (T(1) - beta2) * g * g;
      const T m_hat = m[i] / bias_correction1;
      const T v_hat = v[i] / bias_correction2;
      param[i] = p - lr * (m_hat / (std::sqrt(v_hat) + eps) + decoupled_wd * p);
    }
  });
}

template <class T>
void ema_update(int64_t n, T* average, const T* param, T weight) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
  // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) average[i] += weight * (param[i] - average[i]);
  });
}

template <class T>
void swap_values(int64_t n, T* a, T* b) {
  parallel_ranges(n, n > kParallelGrain, [=](int64_t lo, int64_t hi) {
  // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
#pragma omp simd
    for (int64_t i = lo; i < hi; ++i) {
      const T t = a[i];
      a[i] = b[i];
      b[i] = t;
    }
  });
}

#define LUONG_INSTANTIATE(T)                                                                 \
  template void sgd_update<T>(int64_t, T*, const T*, T, T*, T, T, T);                        \
  template void adam_update<T>(int64_t, T*, const T*, T, T*, T*, T, T, T, T, T, bool, T, T); \
  template void ema_update<T>(int64_t, T*, const T*, T);                                     \
  template void swap_values<T>(int64_t, T*, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cpu
