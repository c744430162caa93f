// The pointwise half of the fused LSTM cell (gate order i, f, g, o as in PyTorch):
//   i = sigmoid(z_i), f = sigmoid(z_f), g = tanh(z_g), o = sigmoid(z_o)
//   c = f * c_prev + i * g,  h = o * tanh(c)
// The GEMMs that produce z = x W + h_prev U + b run through gemm(); this kernel does everything after.
#pragma once
#include <cstdint>

namespace luong::cpu {

// z (B, 4H) pre-activations, plus bias (4H) when given (else z has it already); writes activated gates (B, 4H),
// c (B, H) and h (B, H). Adding the bias here saves a cell with its own input product a zero fill and a
// broadcast add before its GEMMs (two launches per layer and step on CUDA).
template <class T>
void lstm_cell_forward(int64_t batch, int64_t hidden, const T* z, const T* c_prev, T* gates, T* c, T* h,
                       const T* bias = nullptr);
// From dh, dc (either may be null = zero) to dz (B, 4H, overwritten) and dc_prev (may be null): accumulated,
// or with accumulate_dc_prev false overwritten, with exactly the values that zero-filling it first and
// accumulating would give (0 + x, so -0 becomes +0 as there), in the same pass: no separate fill (on CUDA
// that fill was a device memset per step and layer, and the step is bound by the host's calls).
// c is the step's cell state (forward's output): tanh(c) is recomputed from it, with the forward's function,
// so it need not be saved (a (T, B, H) buffer per layer; the recomputation costs well under 1% of a step).
template <class T>
void lstm_cell_backward(int64_t batch, int64_t hidden, const T* gates, const T* c_prev, const T* c, const T* dh,
                        const T* dc, T* dz, T* dc_prev, bool accumulate_dc_prev = true);

// Padding in a sequence (ops/lstm_sequence.cpp): rows r with keep[r] == 0 take prev's row (or zeros when
// prev is null) in x (rows, cols); rows with keep[r] != 0 are left alone.
template <class T>
void lstm_carry_rows(int64_t rows, int64_t cols, const uint8_t* keep, const T* prev, T* x);

}  // namespace luong::cpu
