#include "framework/kernels/cpu/attention_step.h"

#include <cmath>
#include <limits>
#include <vector>

#include "framework/kernels/cpu/parallel.h"
#include "framework/kernels/cpu/softmax_row.h"

namespace luong::cpu {
namespace {

// x · y with 16 independent partial sums, so the compiler vectorises it without reassociating.
template <class T>
T dot(const T* x, const T* y, int64_t n) {
  constexpr int64_t kLanes = 16;
  T lane[kLanes] = {};
  int64_t i = 0;
  // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += x[i + l] * y[i + l];
  T s = T(0);
  for (; i < n; ++i) s += x[i] * y[i];
  for (int64_t l = 0; l < kLanes; ++l) s += lane[l];
  return s;
}

// y += alpha x
template <class T>
void axpy_row(T alpha, const T* x, T* y, int64_t n) {
  // hot loop: must vectorise (tests/codegen/check_hot_loops.py)
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

bool parallel_rows(int64_t batch, int64_t src, int64_t dim) { return batch > 1 && batch * src * dim > kParallelGrain; }

}  // namespace

template <class T>
void attention_step_forward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                            const uint8_t* mask, T* weights, T* context) {
  parallel_ranges(batch, parallel_rows(batch, src, dim), [=](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const T* qb = q + b * dim;
      const uint8_t* mb = mask ? mask + b * src : nullptr;
      T* wb = weights + b * src;  // the scores, then (in place) the weights
      T* cb = context + b * dim;
      for (int64_t j = 0; j < src; ++j)
        if (!mb || mb[j]) wb[j] = dot(qb, k + (b * src + j) * dim, dim);
      const SoftmaxRow kind = softmax_row(false, src, wb, mb, wb);
      const T fill = kind == SoftmaxRow::nan ? std::numeric_limits<T>::quiet_NaN() : T(0);  // NaN poisons the context
      for (int64_t h = 0; h < dim; ++h) cb[h] = fill;
      if (kind != SoftmaxRow::normal) continue;
      for (int64_t j = 0; j < src; ++j)
        if (wb[j] != T(0)) axpy_row(wb[j], v + (b * src + j) * dim, cb, dim);
    }
  });
}

template <class T>
void attention_step_backward(int64_t batch, int64_t src, int64_t dim, const T* q, const T* k, const T* v,
                             const T* weights, const T* gc, const T* gw, T* dq, T* dk, T* dv) {
  parallel_ranges(batch, parallel_rows(batch, src, dim), [=](int64_t lo, int64_t hi) {
    std::vector<T> ds(static_cast<size_t>(src));
    for (int64_t b = lo; b < hi; ++b) {
      const T* wb = weights + b * src;
      const T* gcb = gc ? gc + b * dim : nullptr;
      // dL/da_j = gw_j + gc · v_j; then the softmax Jacobian: ds_j = a_j (dL/da_j - Σ_i a_i dL/da_i).
      T weighted = T(0);
      for (int64_t j = 0; j < src; ++j) {
        T g = gw ? gw[b * src + j] : T(0);
        if (gcb && wb[j] != T(0)) g += dot(gcb, v + (b * src + j) * dim, dim);
        ds[static_cast<size_t>(j)] = g;
        weighted += wb[j] * g;
      }
      for (int64_t j = 0; j < src; ++j) ds[static_cast<size_t>(j)] = wb[j] * (ds[static_cast<size_t>(j)] - weighted);
      for (int64_t j = 0; j < src; ++j) {
        const T d = ds[static_cast<size_t>(j)];
        const int64_t row = (b * src + j) * dim;
        if (dq) axpy_row(d, k + row, dq + b * dim, dim);          // dq_b += ds_j k_j
        if (dk) axpy_row(d, q + b * dim, dk + row, dim);          // dk_j += ds_j q_b
        if (dv && gcb) axpy_row(wb[j], gcb, dv + row, dim);       // dv_j += a_j gc_b (dk may be dv)
      }
    }
  });
}

#define LUONG_INSTANTIATE(T)                                                                                       \
  template void attention_step_forward<T>(int64_t, int64_t, int64_t, const T*, const T*, const T*, const uint8_t*, \
                                          T*, T*);                                                                 \
  template void attention_step_backward<T>(int64_t, int64_t, int64_t, const T*, const T*, const T*, const T*,      \
                                           const T*, const T*, T*, T*, T*);
LUONG_INSTANTIATE(float)
LUONG_INSTANTIATE(double)
#undef LUONG_INSTANTIATE

}  // namespace luong::cpu
