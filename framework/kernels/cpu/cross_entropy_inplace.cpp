#include "framework/kernels/cpu/cross_entropy_inplace.h"

#include <algorithm>
#include <cmath>

#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/vec_math.h"

namespace luong::cpu {
namespace {

// Per row: the max, the sum of the logits (for smoothing), and e^(z - max) written in place with its sum.
// float takes the vectorised path; double keeps libm's exp for exact gradient checks.
struct RowStats {
  double max, sum_z, sum_exp;
};

RowStats exp_row(float* z, int64_t cols, bool need_sum_z) {
  const float mx = row_max(z, cols);
  const float sz = need_sum_z ? row_sum(z, cols) : 0.0f;
  return {mx, sz, exp_shifted_sum(z, mx, z, cols)};
}

RowStats exp_row(double* z, int64_t cols, bool need_sum_z) {
  double mx = -HUGE_VAL, sz = 0.0, se = 0.0;
  for (int64_t j = 0; j < cols; ++j) mx = z[j] > mx ? z[j] : mx;
  if (need_sum_z)
    for (int64_t j = 0; j < cols; ++j) sz += z[j];
  for (int64_t j = 0; j < cols; ++j) se += (z[j] = std::exp(z[j] - mx));
  return {mx, sz, se};
}

}  // namespace

template <class T>
void cross_entropy_inplace_forward(int64_t rows, int64_t cols, T* z, const int64_t* target, int64_t ignore_index,
                                   T eps, T* row_loss) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    T* zr = z + r * cols;
    const int64_t t = target[r];
    if (t == ignore_index) {
      std::fill_n(zr, cols, T(0));
      row_loss[r] = T(0);
      continue;
    }
    const T zt = zr[t];
    const RowStats s = exp_row(zr, cols, eps != T(0));
    const T lse = static_cast<T>(s.max) + std::log(static_cast<T>(s.sum_exp));
    T nll = lse - zt;  // -log p_t
    if (eps != T(0)) nll = (T(1) - eps) * nll + eps * (lse - static_cast<T>(s.sum_z) / static_cast<T>(cols));
    row_loss[r] = nll;
    const T inv = T(1) / static_cast<T>(s.sum_exp);
    for (int64_t j = 0; j < cols; ++j) zr[j] *= inv;
  }
}

template <class T>
void cross_entropy_inplace_backward(int64_t rows, int64_t cols, T* p, const int64_t* target, int64_t ignore_index,
                                    T eps, T g) {
  const T uniform = eps / static_cast<T>(cols);
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    T* pr = p + r * cols;
    const int64_t t = target[r];
    if (t == ignore_index) {
      std::fill_n(pr, cols, T(0));
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) pr[j] = g * (pr[j] - uniform);
    pr[t] -= g * (T(1) - eps);
  }
}

#define LUONG_INSTANTIATE(T)                                                                                   \
  template void cross_entropy_inplace_forward<T>(int64_t, int64_t, T*, const int64_t*, int64_t, T, T*);        \
  template void cross_entropy_inplace_backward<T>(int64_t, int64_t, T*, const int64_t*, int64_t, T, T);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cpu
