// Plain tensor arithmetic with no autograd: what backward passes, optimizers and the reducer use on
// gradients and flat buffers. Each dispatches to the device's kernels.
#pragma once
#include <vector>

#include "framework/tensor/tensor.h"

namespace luong {

void add_(Tensor& dst, const Tensor& src, double alpha = 1.0);  // dst += alpha * src (same numel)
void scale_(Tensor& t, double alpha);                            // t *= alpha
double sum_squares(const Tensor& t);                             // deterministic, accumulated in double
double sum_all(const Tensor& t);
bool has_non_finite(const Tensor& t);
// The three above return to the host (a device sync; refused inside a CaptureScope). This one keeps the
// result on t's device: a 0-d tensor of t's dtype holding sum_all(t), the same double accumulation rounded
// once, bit for bit.
Tensor sum_all_scalar(const Tensor& t);
// c (k, n) += aᵀ g for a (m, k) and g (m, n), any shapes with those element counts: the weight-gradient GEMM.
// overwrite: c = aᵀ g (beta 0: c's old contents are never read, a gradient still to be zeroed).
void add_matmul_tn_(Tensor& c, const Tensor& a, const Tensor& g, bool overwrite = false);
// c (k, n) += Aᵀ G for A and G the row-wise stacks of a_parts (m_i, k) and g_parts (m_i, n): the deferred
// weight gradient of one weight over all time steps (autograd/weight_grad_deferral.h). Float32 products on
// the CPU's blocked GEMM read the parts in place; others stack them first.
// g_stacked, when given, is g_parts already stacked (shared with other deferred products of the same
// gradient: autograd/weight_grad_deferral.h) and is read instead of them: the same numbers.
void add_matmul_tn_stacked_(Tensor& c, const std::vector<Tensor>& a_parts, const std::vector<Tensor>& g_parts,
                            bool overwrite = false, const Tensor* g_stacked = nullptr);
// True when add_matmul_tn_stacked_ into c (k, n) over `rows` stacked rows in all reads the parts in place
// (float32 on the CPU's blocked GEMM) instead of stacking them first.
bool stacked_gemm_reads_parts_in_place(const Tensor& c, int64_t rows);
// The row-wise stack of parts (m_i, cols) as one (Σ m_i, cols) tensor, in one kernel call (on CUDA a launch
// per 32 parts instead of a copy per part).
Tensor stack_rows(const std::vector<Tensor>& parts, int64_t cols);
// c (n) += the column sums of g (m, n): a bias gradient. overwrite: c = those sums (c's old contents never
// read). On the CPU each column is summed row by row in order, so stacking the rows of several calls changes
// no bits. On CUDA more than 256 rows are summed in chunks (an order fixed by the shape: deterministic, but
// not bitwise the sum of per-call results).
void add_column_sums_(Tensor& c, const Tensor& g, bool overwrite = false);

// The global L2 norm of a flat gradient buffer (clipping: optim/average_and_clip.h).
double global_norm(const Tensor& flat);

}  // namespace luong
