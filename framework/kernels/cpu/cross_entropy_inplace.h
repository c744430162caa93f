// The generator's loss kernel (ops/linear_cross_entropy.cpp): softmax cross-entropy computed IN PLACE in
// the (rows, cols) logits buffer, which then holds the probabilities or, when a backward pass may follow,
// the logits' gradient. One vocabulary-sized buffer per chunk instead of three (logits, log-probabilities,
// gradient).
#pragma once
#include <cstdint>

namespace luong::cpu {

// z (rows, cols): logits in (bias, when not null, is added to every row first). row_loss[r] = the
// label-smoothed negative log-likelihood of row r (PyTorch's definition, as cross_entropy_forward). z out:
// the softmax probabilities p, or with `grad` the gradient of the summed loss, p - q (q the smoothed target
// distribution). Rows whose target is ignore_index get loss 0 and z = 0, so they drop out of every gradient.
// Each row is done in one visit while it is in L1: as three passes (bias, loss, gradient) each streamed the
// whole chunk through memory again, 8 MB a pass per chunk on the benchmark model.
template <class T>
void cross_entropy_inplace(int64_t rows, int64_t cols, T* z, const T* bias, const int64_t* target,
                           int64_t ignore_index, T eps, T* row_loss, bool grad);

}  // namespace luong::cpu
