// One row of the masked softmax / log-softmax: the single definition of how padding, fully masked rows and
// NaN are treated, shared by softmax_forward and the fused attention step (kernels/cpu/attention_step.cpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "framework/kernels/cpu/vec_math.h"

namespace luong::cpu {

enum class SoftmaxRow { normal, all_masked, nan };

// y = softmax(x) or log_softmax(x) over n entries; mask (n) uint8 or null, mask == 0 entries are excluded
// (probability 0, log-probability -inf) and never read. y may be x. A NaN in an unmasked entry makes the
// whole row NaN (a max that skips NaN would otherwise take the row for a fully masked one); a row with no
// unmasked entry is all zeros.
template <class T>
SoftmaxRow softmax_row(bool log, int64_t n, const T* x, const uint8_t* mask, T* y) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  if constexpr (std::is_same_v<T, float>) {
    // Unmasked float log-softmax (the generator's in decoding: 8,000+ columns per row, every step): the
    // lane-wise max and the vectorised exp of vec_math.h (within 2 ulps) for the normaliser instead of a
    // scalar std::exp per element. The output x - lse is exact for -inf entries, whose fast_exp term
    // (~1e-38) cannot move a sum that holds e^0 = 1; a NaN reaches every output through the sum. Masked
    // rows, plain softmax and float64 (gradient checks) take the loops below.
    if (log && !mask) {
      const float mx = row_max(x, n);
      if (mx != neg_inf) {
        const float lse = mx + std::log(exp_shifted_sum(x, mx, y, n));
        for (int64_t j = 0; j < n; ++j) y[j] = x[j] - lse;
        return lse == lse ? SoftmaxRow::normal : SoftmaxRow::nan;
      }
    }
  }
  T mx = neg_inf;
  bool nan = false;
  for (int64_t j = 0; j < n; ++j)
    if (!mask || mask[j]) {
      mx = x[j] > mx ? x[j] : mx;
      nan = nan || x[j] != x[j];
    }
  if (nan) {
    for (int64_t j = 0; j < n; ++j) y[j] = std::numeric_limits<T>::quiet_NaN();
    return SoftmaxRow::nan;
  }
  if (mx == neg_inf) {
    for (int64_t j = 0; j < n; ++j) y[j] = T(0);
    return SoftmaxRow::all_masked;
  }
  T sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (!mask || mask[j]) ? std::exp(x[j] - mx) : T(0);
  if (log) {
    const T lse = mx + std::log(sum);
    for (int64_t j = 0; j < n; ++j) y[j] = (!mask || mask[j]) ? x[j] - lse : neg_inf;
  } else {
    const T inv = T(1) / sum;
    for (int64_t j = 0; j < n; ++j) y[j] = (!mask || mask[j]) ? std::exp(x[j] - mx) * inv : T(0);
  }
  return SoftmaxRow::normal;
}

}  // namespace luong::cpu
