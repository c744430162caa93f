// The differentiable ops of the engine. Each takes and returns Variables, records itself on the graph when
// any input requires a gradient, and is implemented in ops/<family>.cpp with forward and backward together.
// Shapes are in comments; "broadcast" means the smaller operand's shape is a suffix of the larger's.
#pragma once
#include <vector>

#include "framework/autograd/variable.h"
#include "framework/core/philox.h"

namespace luong {

// --- linear algebra (ops/matmul.cpp) ---
// a (..., K) x b (K, N) -> (..., N): leading dims of a are flattened into GEMM rows.
Variable matmul(const Variable& a, const Variable& b);
// a (B, M, K) x b (B, K, N) -> (B, M, N); with trans_b, b is (B, N, K) and is used transposed.
Variable bmm(const Variable& a, const Variable& b, bool trans_b = false);

// --- elementwise (ops/binary.cpp, ops/unary.cpp, ops/scalar.cpp) ---
Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
Variable mul(const Variable& a, const Variable& b);
Variable div(const Variable& a, const Variable& b);
Variable add_scalar(const Variable& x, double s);
Variable mul_scalar(const Variable& x, double s);
Variable tanh(const Variable& x);
Variable sigmoid(const Variable& x);
Variable relu(const Variable& x);
Variable exp(const Variable& x);
Variable log(const Variable& x);

// --- softmax family (ops/softmax.cpp, ops/cross_entropy.cpp) ---
// Over the last dim; mask (same shape, uint8, 1 = keep) excludes positions (e.g. source padding).
Variable softmax(const Variable& x, const Tensor& mask = {});
Variable log_softmax(const Variable& x, const Tensor& mask = {});
// logits (N, V), targets (N) int64. Returns the SUM of token losses (a scalar) and the number of tokens
// that were not ignore_index, so callers can average per token across batches and ranks.
struct CrossEntropy {
  Variable loss;   // () summed loss
  int64_t tokens;  // targets != ignore_index (-1 for device targets inside a captured step: core/capture_guard.h)
  // (N) each row's term of `loss` (0 where the target is ignore_index; the smoothed term under label
  // smoothing), on the logits' device, outside the graph. What an ensemble needs to mix members per token
  // (models/nmt/ensemble_loss.cpp) without the (N, V) log-probabilities.
  Tensor row_losses;
};
CrossEntropy cross_entropy(const Variable& logits, const Tensor& targets, int64_t ignore_index = -100,
                           double label_smoothing = 0.0);
// The generator and its loss fused (ops/linear_cross_entropy.cpp): cross_entropy(x W + b, ...) for x (N, H),
// weight (H, V), bias (V) or undefined, materialising at most chunk_rows rows of the (N, V) logits at a
// time (0: a per-device budget, 8 MB of float logits on a CPU). When a backward pass may follow, the input
// gradients are computed during forward, chunk by chunk, and only scaled by the upstream gradient later.
CrossEntropy linear_cross_entropy(const Variable& x, const Variable& weight, const Variable& bias,
                                  const Tensor& targets, int64_t ignore_index = -100, double label_smoothing = 0.0,
                                  int64_t chunk_rows = 0);

// --- lookup (ops/embedding.cpp) ---
// weight (V, E), ids int64 of any shape -> (ids..., E). The padding row receives no gradient.
Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx = -1);

// --- shape (ops/shape.cpp) ---
Variable concat(const std::vector<Variable>& xs, int64_t dim);
std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& sizes, int64_t dim);
Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t length);
Variable select(const Variable& x, int64_t dim, int64_t index);  // removes dim
Variable stack(const std::vector<Variable>& xs);                  // n x (...) -> (n, ...)
Variable transpose(const Variable& x, int64_t dim0, int64_t dim1);
Variable reshape(const Variable& x, const Shape& shape);

// --- reductions (ops/reduce.cpp) ---
Variable sum(const Variable& x);               // -> ()
Variable sum(const Variable& x, int64_t dim);  // removes dim
Variable mean(const Variable& x);              // -> ()

// --- regularisation and masking (ops/dropout.cpp, ops/masked_fill.cpp) ---
// Inverted dropout: keeps each element with probability 1 - p and scales it by 1 / (1 - p). The mask is
// drawn from gen (Philox), so it is reproducible and identical on CPU and CUDA. Identity when !training.
Variable dropout(const Variable& x, double p, Generator& gen, bool training = true);
// y = mask ? value : x, mask uint8 with x's shape or a suffix of it.
Variable masked_fill(const Variable& x, const Tensor& mask, double value);

// --- fused LSTM cell (ops/lstm_cell.cpp) ---
// gates = x W + h U + b, (i, f, g, o) order; c' = f c + i g; h' = o tanh(c').
// x (B, I), h/c (B, H), W (I, 4H), U (H, 4H), b (4H). W may be undefined: x is then already the input
// projection (B, 4H), precomputed for all time steps at once.
struct LstmState {
  Variable h;  // (B, H)
  Variable c;  // (B, H)
};
LstmState lstm_cell(const Variable& x, const LstmState& prev, const Variable& W, const Variable& U, const Variable& b);

// --- a whole LSTM layer over a sequence (ops/lstm_sequence.cpp) ---
// x_proj (T, B, 4H): the input projection x W of every step (bias not included); init h/c (B, H); U (H, 4H);
// b (4H). Row b's steps t >= lengths[b] are padding: its state is carried through them unchanged. reverse
// runs t = T-1 .. 0. outputs (T, B, H) by position; final = the state after the last processed step.
struct LstmSequenceResult {
  Variable outputs;
  LstmState final;
};
LstmSequenceResult lstm_sequence(const Variable& x_proj, const LstmState& init, const Variable& U, const Variable& b,
                                 const std::vector<int64_t>& lengths, bool reverse = false);

// --- one step of global attention, fused (ops/attention_step.cpp) ---
// query (B, H), keys and values (B, S, H), mask (B, S) uint8 (1 = real source token) or undefined:
// weights = softmax over the unmasked positions of the scores keys_b · query_b (zero where masked),
// context = Σ_s weights_s values_s. keys and values may be the same variable.
struct AttentionStep {
  Variable context;  // (B, H)
  Variable weights;  // (B, S)
};
AttentionStep attention_step(const Variable& query, const Variable& keys, const Variable& values, const Tensor& mask);

}  // namespace luong
