// Reductions. All are deterministic for any thread count: fixed blocks, partials combined in order.
#pragma once
#include <cstdint>

namespace luong::cpu {

// Sum of n values, accumulated in double.
template <class T> double sum_all(int64_t n, const T* x);
// *out = T(sum_all(n, x)): the sum left in memory, as the device kernel leaves it on the device.
template <class T> void sum_all_to(int64_t n, const T* x, T* out);
// Sum of squares of n values, accumulated in double (for global gradient norms).
template <class T> double sum_squares(int64_t n, const T* x);
// *out = sum_squares(n, x), left in memory (the device kernel leaves it on the device).
template <class T> void sum_squares_to(int64_t n, const T* x, double* out);
// out[o, i] = sum_r x[o, r, i] for x of shape (outer, len, inner).
template <class T> void sum_dim(int64_t outer, int64_t len, int64_t inner, const T* x, T* out);
// gx[o, r, i] += gy[o, i]: the backward of sum_dim.
template <class T> void sum_dim_backward(int64_t outer, int64_t len, int64_t inner, const T* gy, T* gx);
// x *= alpha
template <class T> void scale(int64_t n, T alpha, T* x);
// The global-norm clip with its decision in memory (optim/average_and_clip.h, average_and_clip_on_device_):
// clip_decide turns stats[0] = sum of squares into stats = {norm, finite ? 1 : 0, factor} (the factor
// 1 / tokens times clip / norm when the norm exceeds a positive clip; tokens <= 0: no averaging);
// scale_or_zero then multiplies x by T(factor), or writes zeros when the sum was not finite.
void clip_decide(double* stats, int64_t tokens, double clip_norm);
template <class T> void scale_or_zero(int64_t n, const double* stats, T* x);
template <class T> void scale(int64_t n, T alpha, T* x);
// 1 when any of the n values is NaN or infinite.
template <class T> bool has_non_finite(int64_t n, const T* x);

}  // namespace luong::cpu
