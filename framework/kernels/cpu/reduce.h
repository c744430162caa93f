// Reductions. All are deterministic for any thread count: fixed blocks, partials combined in order.
#pragma once
#include <cstdint>

namespace luong::cpu {

// Sum of n values, accumulated in double.
template <class T> double sum_all(int64_t n, const T* x);
// Sum of squares of n values, accumulated in double (for global gradient norms).
template <class T> double sum_squares(int64_t n, const T* x);
// out[o, i] = sum_r x[o, r, i] for x of shape (outer, len, inner).
template <class T> void sum_dim(int64_t outer, int64_t len, int64_t inner, const T* x, T* out);
// gx[o, r, i] += gy[o, i]: the backward of sum_dim.
template <class T> void sum_dim_backward(int64_t outer, int64_t len, int64_t inner, const T* gy, T* gx);
// x *= alpha
template <class T> void scale(int64_t n, T alpha, T* x);
// 1 when any of the n values is NaN or infinite.
template <class T> bool has_non_finite(int64_t n, const T* x);

}  // namespace luong::cpu
