#include "framework/kernels/cpu/softmax.h"

#include <cmath>
#include <limits>

#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/softmax_row.h"

namespace luong::cpu {

template <class T>
void softmax_forward(bool log, int64_t rows, int64_t cols, const T* x, const uint8_t* mask, T* y) {
  parallel_ranges(rows, rows * cols > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      softmax_row(log, cols, x + r * cols, mask ? mask + r * cols : nullptr, y + r * cols);
  });
}

template <class T>
void softmax_backward(bool log, int64_t rows, int64_t cols, const T* y, const T* gy, const uint8_t* mask, T* gx) {
  parallel_ranges(rows, rows * cols > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
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
  });
}

template <class T>
void cross_entropy_forward(int64_t rows, int64_t cols, const T* logits, const int64_t* target, int64_t ignore_index,
                           T eps, T* logp, T* row_loss) {
  softmax_forward<T>(true, rows, cols, logits, nullptr, logp);
  parallel_ranges(rows, rows * cols > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
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
  });
}

template <class T>
void cross_entropy_backward(int64_t rows, int64_t cols, const T* logp, const int64_t* target, int64_t ignore_index,
                            T eps, T g, T* glogits) {
  const T uniform = eps / static_cast<T>(cols);
  parallel_ranges(rows, rows * cols > kParallelGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t t = target[r];
      if (t == ignore_index) continue;
      const T* lr = logp + r * cols;
      T* gr = glogits + r * cols;
      for (int64_t j = 0; j < cols; ++j) gr[j] += g * (std::exp(lr[j]) - uniform);
      gr[t] -= g * (T(1) - eps);
    }
  });
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
