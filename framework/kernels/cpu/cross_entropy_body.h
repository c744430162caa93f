// The loss kernel, compiled once per vector build (wide_vectors.h): cross_entropy_inplace.cpp includes this with
// LUONG_CPU_ISA = x86_v3 (the library's baseline flags), cross_entropy_inplace_avx512.cpp with x86_v4
// (-march=x86-64-v4, 512-bit vectors). Everything here lives in luong::cpu::LUONG_CPU_ISA, so the two builds never
// share a symbol (see lstm_cell_body.h). No include guard: one inclusion per file, by design.
#ifndef LUONG_CPU_ISA
#error "define LUONG_CPU_ISA (the namespace of this build of the kernel) before including cross_entropy_body.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/vec_math.h"

namespace luong::cpu::LUONG_CPU_ISA {
namespace {

// Per row: the bias added (when given), the max, the sum of the logits (for smoothing), and e^(z - max)
// written in place with its sum. float takes the vectorised path; double keeps libm's exp for exact gradient
// checks.
struct RowStats {
  double max, sum_z, sum_exp;
};

// Two vectorised passes: a loop that both stores z + b and reduces the max did not vectorise (GCC 12) and
// ran 15% slower on the whole kernel than add-then-max.
float add_bias_max(float* __restrict z, const float* __restrict bias, int64_t n) {
  if (bias)
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
    for (int64_t j = 0; j < n; ++j) z[j] = z[j] + bias[j];
  return row_max(z, n);
}

RowStats exp_row(float* z, const float* bias, int64_t cols, bool need_sum_z) {
  const float mx = add_bias_max(z, bias, cols);
  const float sz = need_sum_z ? row_sum(z, cols) : 0.0f;
  return {mx, sz, exp_shifted_sum(z, mx, z, cols)};
}

// Unused in the AVX-512 build, which is float only.
[[maybe_unused]] RowStats exp_row(double* z, const double* bias, int64_t cols, bool need_sum_z) {
  if (bias)
    for (int64_t j = 0; j < cols; ++j) z[j] = z[j] + bias[j];
  double mx = -HUGE_VAL, sz = 0.0, se = 0.0;
  for (int64_t j = 0; j < cols; ++j) mx = z[j] > mx ? z[j] : mx;
  if (need_sum_z)
    for (int64_t j = 0; j < cols; ++j) sz += z[j];
  for (int64_t j = 0; j < cols; ++j) se += (z[j] = std::exp(z[j] - mx));
  return {mx, sz, se};
}

// One row: logits (plus bias) in; the loss returned and, in z, the probabilities or, with `grad`, p - q.
// Four passes over the row (bias, max, exp and sum, normalisation with the gradient), while it is in L1/L2;
// it was five when the normalisation and the gradient each had their own (1.31 -> 1.23 ms per 256 x 8000
// chunk on 2 threads).
template <class T>
T row_loss_and_grad(int64_t cols, T* zr, const T* bias, int64_t t, int64_t ignore_index, T eps, bool grad) {
  if (t == ignore_index) {  // loss 0, and z = 0 so the row drops out of every gradient
    std::fill_n(zr, cols, T(0));
    return T(0);
  }
  const T zt = bias ? zr[t] + bias[t] : zr[t];
  const RowStats s = exp_row(zr, bias, cols, eps != T(0));
  const T lse = static_cast<T>(s.max) + std::log(static_cast<T>(s.sum_exp));
  T nll = lse - zt;  // -log p_t
  if (eps != T(0)) nll = (T(1) - eps) * nll + eps * (lse - static_cast<T>(s.sum_z) / static_cast<T>(cols));
  const T inv = T(1) / static_cast<T>(s.sum_exp);
  if (grad && eps != T(0)) {  // p - q with q = eps / cols everywhere and 1 - eps more at the target
    const T uniform = eps / static_cast<T>(cols);
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
    for (int64_t j = 0; j < cols; ++j) {
      const T p = zr[j] * inv;
      zr[j] = p - uniform;
    }
  } else {
    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
    for (int64_t j = 0; j < cols; ++j) zr[j] *= inv;
  }
  if (grad) zr[t] -= T(1) - eps;
  return nll;
}

}  // namespace

template <class T>
void cross_entropy_inplace(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target, int64_t ignore_index,
                           T eps, T* row_loss, bool grad) {
  parallel_ranges(rows, rows * cols > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      row_loss[r] = row_loss_and_grad(cols, z + r * cols, bias, target[r], ignore_index, eps, grad);
  });
}

}  // namespace luong::cpu::LUONG_CPU_ISA
