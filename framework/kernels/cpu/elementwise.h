// Elementwise kernels on raw pointers. Shapes are flattened by the caller; broadcasting of b over a is
// expressed as (outer, n_b) so that a's element i pairs with b[i % n_b] ("b is a suffix of a") or, for the
// general case, through an index map computed by the op.
#pragma once
#include <cstdint>

namespace luong {
// Shared by the CPU and CUDA kernels.
enum class UnaryKind { tanh, sigmoid, relu, exp, log, neg, sqrt };
enum class BinaryKind { add, sub, mul, div };
}  // namespace luong

namespace luong::cpu {

// y = f(x)
template <class T> void unary_forward(UnaryKind k, int64_t n, const T* x, T* y);
// gx += gy * f'(x), using x and/or y = f(x) as the derivative needs.
template <class T> void unary_backward(UnaryKind k, int64_t n, const T* x, const T* y, const T* gy, T* gx);

// out[i] = a[i % na] op b[i % nb] for i < n, where na and nb are n or divide it: the smaller operand's
// shape is a suffix of the output's (broadcasting over leading dims).
template <class T>
void binary_forward(BinaryKind k, int64_t n, int64_t na, const T* a, int64_t nb, const T* b, T* out);
// out[j] += sum over r of x[r * cols + j]: reduces a broadcast gradient back to the operand's shape.
template <class T> void sum_rows_accumulate(int64_t rows, int64_t cols, const T* x, T* out);
// y = alpha * x + beta
template <class T> void affine(int64_t n, const T* x, T alpha, T beta, T* y);
// y += alpha * x
template <class T> void axpy(int64_t n, T alpha, const T* x, T* y);
// y = x * m where m is a 0/1-scaled dropout mask.
template <class T> void mul(int64_t n, const T* x, const T* m, T* y);
// y = mask ? value : x  (mask has n_mask elements, broadcast as a suffix when n_mask < n)
template <class T> void masked_fill(int64_t n, const T* x, int64_t n_mask, const uint8_t* mask, T value, T* y);
// The window of local attention (Luong et al. 2015, §3.2) from centres on the device: for (rows, cols),
// out[r, c] = src_mask[r, c] && |c - centers[r]| <= radius, compared in double (as the host-built mask).
template <class T>
void window_mask(int64_t rows, int64_t cols, const T* centers, const uint8_t* src_mask, double radius, uint8_t* out);
// gx += mask ? 0 : gy
template <class T> void masked_fill_backward(int64_t n, const T* gy, int64_t n_mask, const uint8_t* mask, T* gx);
// Dropout mask from Philox: m[i] = (u_i >= p) / (1 - p), u_i the i-th uniform at (seed, offset).
template <class T> void dropout_mask(int64_t n, float p, uint64_t seed, uint64_t offset, T* m);

}  // namespace luong::cpu
