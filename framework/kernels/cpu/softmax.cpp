#include "framework/kernels/cpu/softmax.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/vec_math.h"

namespace luong::cpu {

template <class T>
void softmax_forward(bool log, int64_t rows, int64_t cols, const T* x, const uint8_t* mask, T* y) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const uint8_t* mr = mask ? mask + r * cols : nullptr;
    T* yr = y + r * cols;
    if constexpr (std::is_same_v<T, float>) {
      // Unmasked float log-softmax (the generator's in decoding: 8,000+ columns per row, every step): the
      // lane-wise max and the vectorised exp of vec_math.h (within 2 ulps) for the normaliser instead of a
      // scalar std::exp per element. The output x - lse is exact for -inf entries, whose fast_exp term
      // (~1e-38) cannot move a sum that holds e^0 = 1. Masked rows, plain softmax and float64 (gradient
      // checks) keep the loop below.
      if (log && !mr) {
        const float mx = row_max(xr, cols);
        if (mx != neg_inf) {
          const float lse = mx + std::log(exp_shifted_sum(xr, mx, yr, cols));
          for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - lse;
          continue;
        }
      }
    }
    T mx = neg_inf;
    bool nan = false;
    for (int64_t j = 0; j < cols; ++j)
      if (!mr || mr[j]) {
        mx = xr[j] > mx ? xr[j] : mx;
        nan = nan || xr[j] != xr[j];
      }
    if (nan) {  // NaN propagates to the whole row (a max that skips NaN would hide it, even as "all masked")
      for (int64_t j = 0; j < cols; ++j) yr[j] = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    if (mx == neg_inf) {  // fully masked row
      for (int64_t j = 0; j < cols; ++j) yr[j] = T(0);
      continue;
    }
    T sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += (!mr || mr[j]) ? std::exp(xr[j] - mx) : T(0);
    if (log) {
      const T lse = mx + std::log(sum);
      for (int64_t j = 0; j < cols; ++j) yr[j] = (!mr || mr[j]) ? xr[j] - lse : neg_inf;
    } else {
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < cols; ++j) yr[j] = (!mr || mr[j]) ? std::exp(xr[j] - mx) * inv : T(0);
    }
  }
}

template <class T>
void softmax_backward(bool log, int64_t rows, int64_t cols, const T* y, const T* gy, const uint8_t* mask, T* gx) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const T* yr = y + r * cols;
    const T* gr = gy + r * cols;
    const uint8_t* mr = mask ? mask + r * cols : nullptr;
    T* gxr = gx + r * cols;
    T dot = 0;
    if (log) {
      for (int64_t j = 0; j < cols; ++j)
        if (!mr || mr[j]) dot += gr[j];
      for (int64_t j = 0; j < cols; ++j)
        if (!mr || mr[j]) gxr[j] += gr[j] - std::exp(yr[j]) * dot;
    } else {
      for (int64_t j = 0; j < cols; ++j) dot += gr[j] * yr[j];
      for (int64_t j = 0; j < cols; ++j) gxr[j] += yr[j] * (gr[j] - dot);
    }
  }
}

template <class T>
void cross_entropy_forward(int64_t rows, int64_t cols, const T* logits, const int64_t* target, int64_t ignore_index,
                           T eps, T* logp, T* row_loss) {
  softmax_forward<T>(true, rows, cols, logits, nullptr, logp);
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = target[r];
    if (t == ignore_index) {
      row_loss[r] = T(0);
      continue;
    }
    const T* lr = logp + r * cols;
    T nll = -lr[t];
    if (eps != T(0)) {
      T mean_lp = 0;
      for (int64_t j = 0; j < cols; ++j) mean_lp += lr[j];
      mean_lp /= static_cast<T>(cols);
      nll = (T(1) - eps) * nll - eps * mean_lp;
    }
    row_loss[r] = nll;
  }
}

template <class T>
void cross_entropy_backward(int64_t rows, int64_t cols, const T* logp, const int64_t* target, int64_t ignore_index,
                            T eps, T g, T* glogits) {
  const T uniform = eps / static_cast<T>(cols);
#pragma omp parallel for schedule(static) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = target[r];
    if (t == ignore_index) continue;
    const T* lr = logp + r * cols;
    T* gr = glogits + r * cols;
    for (int64_t j = 0; j < cols; ++j) gr[j] += g * (std::exp(lr[j]) - uniform);
    gr[t] -= g * (T(1) - eps);
  }
}

#define LUONG_INSTANTIATE(T)                                                                                      \
  template void softmax_forward<T>(bool, int64_t, int64_t, const T*, const uint8_t*, T*);                        \
  template void softmax_backward<T>(bool, int64_t, int64_t, const T*, const T*, const uint8_t*, T*);             \
  template void cross_entropy_forward<T>(int64_t, int64_t, const T*, const int64_t*, int64_t, T, T*, T*);        \
  template void cross_entropy_backward<T>(int64_t, int64_t, const T*, const int64_t*, int64_t, T, T, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cpu
