// Softmax, log-softmax and the fused cross-entropy, all over the last dim of a (rows, cols) view.
#pragma once
#include <cstdint>

namespace luong::cpu {

// y = softmax(x) or log_softmax(x) per row; where mask (rows, cols) is given, mask == 0 positions are
// excluded (probability 0; log-probability -inf). A row with no unmasked position is all zeros; a NaN in
// an unmasked position makes its row NaN (kernels/cpu/softmax_row.h).
template <class T>
void softmax_forward(bool log, int64_t rows, int64_t cols, const T* x, const uint8_t* mask, T* y);
// gx += J^T gy. softmax: y (gy - sum(gy y)); log_softmax: gy - exp(y) sum(gy).
template <class T>
void softmax_backward(bool log, int64_t rows, int64_t cols, const T* y, const T* gy, const uint8_t* mask, T* gx);

// Fused log-softmax + negative log-likelihood with label smoothing eps (PyTorch's definition: the target
// distribution is (1 - eps) one-hot + eps / cols uniform). Rows whose target == ignore_index contribute
// nothing. Writes per-row losses to row_loss and the log-probabilities to logp (kept for backward).
template <class T>
void cross_entropy_forward(int64_t rows, int64_t cols, const T* logits, const int64_t* target, int64_t ignore_index,
                           T eps, T* logp, T* row_loss);
// glogits += g * (softmax - q) per non-ignored row, with q the smoothed target distribution.
template <class T>
void cross_entropy_backward(int64_t rows, int64_t cols, const T* logp, const int64_t* target, int64_t ignore_index,
                            T eps, T g, T* glogits);

}  // namespace luong::cpu
