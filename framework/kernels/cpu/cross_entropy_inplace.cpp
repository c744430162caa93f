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

// One row's loss; z goes from logits to probabilities.
template <class T>
T loss_row(int64_t cols, T* zr, int64_t t, int64_t ignore_index, T eps) {
  if (t == ignore_index) {
    std::fill_n(zr, cols, T(0));
    return T(0);
  }
  const T zt = zr[t];
  const RowStats s = exp_row(zr, cols, eps != T(0));
  const T lse = static_cast<T>(s.max) + std::log(static_cast<T>(s.sum_exp));
  T nll = lse - zt;  // -log p_t
  if (eps != T(0)) nll = (T(1) - eps) * nll + eps * (lse - static_cast<T>(s.sum_z) / static_cast<T>(cols));
  const T inv = T(1) / static_cast<T>(s.sum_exp);
  for (int64_t j = 0; j < cols; ++j) zr[j] *= inv;
  return nll;
}

// One row's gradient: probabilities in, p - q out (an ignored row is already all zeros).
template <class T>
void gradient_row(int64_t cols, T* pr, int64_t t, int64_t ignore_index, T eps) {
  if (t == ignore_index) return;
  const T uniform = eps / static_cast<T>(cols);
  for (int64_t j = 0; j < cols; ++j) pr[j] = pr[j] - uniform;
  pr[t] -= T(1) - eps;
}

template <class T>
void add_row(int64_t cols, T* __restrict zr, const T* __restrict bias) {
  for (int64_t j = 0; j < cols; ++j) zr[j] = zr[j] + bias[j];
}

}  // namespace

template <class T>
void cross_entropy_inplace(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target,
                           int64_t ignore_index, T eps, T* row_loss, bool grad) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    T* zr = z + r * cols;
    if (bias) add_row(cols, zr, bias);
    row_loss[r] = loss_row(cols, zr, target[r], ignore_index, eps);
    if (grad) gradient_row(cols, zr, target[r], ignore_index, eps);
  }
}

template void cross_entropy_inplace<float>(int64_t, int64_t, float*, const float*, const int64_t*, int64_t, float,
                                           float*, bool);
template void cross_entropy_inplace<double>(int64_t, int64_t, double*, const double*, const int64_t*, int64_t, double,
                                            double*, bool);

}  // namespace luong::cpu
