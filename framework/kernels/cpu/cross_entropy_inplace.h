// The generator's loss kernels (ops/linear_cross_entropy.cpp): softmax cross-entropy computed IN PLACE in
// the (rows, cols) logits buffer, which then holds the probabilities, and backward turns those into the
// logits' gradient in the same buffer. One vocabulary-sized buffer per batch instead of three (logits,
// log-probabilities, gradient): at 1280 x 8000 that is 41 MB instead of 123 MB.
#pragma once
#include <cstdint>

namespace luong::cpu {

// z (rows, cols): logits in, softmax probabilities out. row_loss[r] = the label-smoothed negative
// log-likelihood of row r (PyTorch's definition, as cross_entropy_forward); rows whose target is
// ignore_index get loss 0 and probabilities 0, so backward leaves them out of every gradient.
template <class T>
void cross_entropy_inplace_forward(int64_t rows, int64_t cols, T* z, const int64_t* target, int64_t ignore_index,
                                   T eps, T* row_loss);
// p (rows, cols): probabilities in, g * (p - q) out, q the smoothed target distribution (0 for ignored rows).
template <class T>
void cross_entropy_inplace_backward(int64_t rows, int64_t cols, T* p, const int64_t* target, int64_t ignore_index,
                                    T eps, T g);
// The training path in one pass over each row while it is in L1: z (+ bias, when not null) -> row_loss as
// cross_entropy_inplace_forward, then, with `grad`, z := p - q as cross_entropy_inplace_backward with g = 1
// (bitwise the same results as the three separate passes). Separately, each pass streamed the whole
// (rows, cols) chunk through memory again: 8 MB a pass per chunk on the benchmark model.
template <class T>
void cross_entropy_inplace_fused(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target,
                                 int64_t ignore_index, T eps, T* row_loss, bool grad);

}  // namespace luong::cpu
