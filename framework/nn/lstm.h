// Stacked LSTM over padded, time-major batches.
//
// Padding: a batch holds sentences of different lengths, padded at the end. For steps past a sentence's
// length the layer carries the previous (h, c) forward with a 0/1 mask, so the final state and the outputs
// at valid positions equal those of the unpadded sentence (exactly: the carry is m*new + (1-m)*old with m
// in {0, 1}). The mask is only applied at steps where some sentence has ended, so equal-length batches
// pay nothing for it.
//
// Speed: each layer computes its input projection x W for all time steps in one GEMM and feeds the fused
// lstm_cell op the projected rows, so the step loop does only the recurrent GEMM.
#pragma once
#include <memory>
#include <vector>

#include "framework/nn/dropout.h"
#include "framework/nn/module.h"
#include "framework/ops/ops.h"

namespace luong {

struct LstmSequence {
  Variable outputs;                 // (T, B, H) top layer, one row per step (carried state past a length)
  std::vector<LstmState> final;     // per layer: state after each sentence's last valid step, (B, H)
};

// One LSTM layer in one direction. Gates in (i, f, g, o) order, as the lstm_cell op expects.
class LstmLayer : public Module {
 public:
  LstmLayer(int64_t input_size, int64_t hidden_size, DType dtype = DType::f32);
  const Variable& weight_ih() const { return weight_ih_; }  // (I, 4H)
  const Variable& weight_hh() const { return weight_hh_; }  // (H, 4H)
  const Variable& bias() const { return bias_; }            // (4H)
  int64_t input_size() const { return input_; }
  int64_t hidden_size() const { return hidden_; }

  // x (T, B, I); lengths: B valid lengths in [1, T]; init: (B, H) each, undefined = zeros. With `reverse`
  // the layer reads each sentence from its last valid step to its first (padding never enters the state).
  // Returns outputs (T, B, H) and final = {state after the last step read}.
  LstmSequence run(const Variable& x, const std::vector<int64_t>& lengths, const LstmState& init,
                   bool reverse = false) const;
  // One step: x (B, I) -> state (B, H).
  LstmState step(const Variable& x, const LstmState& prev) const;
  // One step from a precomputed input projection x W of shape (B, 4H).
  LstmState step_projected(const Variable& x_proj, const LstmState& prev) const;

 private:
  int64_t input_, hidden_;
  Variable weight_ih_, weight_hh_, bias_;
};

struct LstmOptions {
  int64_t input_size = 0;
  int64_t hidden_size = 0;          // output size; each direction of a bidirectional layer has half
  int64_t layers = 1;
  double dropout = 0.0;             // on the input of every layer above the first
  bool bidirectional_first = false; // layer 0 reads both ways and concatenates [forward; backward]
  DType dtype = DType::f32;
};

class Lstm : public Module {
 public:
  explicit Lstm(const LstmOptions& opt);
  const LstmOptions& options() const { return opt_; }
  int64_t layers() const { return opt_.layers; }
  // Layer l (unidirectional layers; for a bidirectional layer 0 use direction()).
  const LstmLayer& layer(int64_t l) const;
  const LstmLayer& direction(bool backward) const;  // the two halves of a bidirectional layer 0

  // x (T, B, I) -> outputs (T, B, H) and the final state of every layer. init: empty or one per layer.
  LstmSequence forward(const Variable& x, const std::vector<int64_t>& lengths, Generator* gen,
                       const std::vector<LstmState>& init = {}) const;
  // One step of the whole stack (unidirectional only). x0_proj: layer 0's input already multiplied by its
  // weight_ih, (B, 4H) (lets a caller assemble it from pieces, e.g. input feeding). Updates `states` in
  // place and returns the top layer's h (B, H).
  Variable step_projected(const Variable& x0_proj, std::vector<LstmState>& states, Generator* gen) const;

 private:
  LstmOptions opt_;
  std::vector<std::shared_ptr<LstmLayer>> layers_;  // layer 0 is [fwd, bwd] when bidirectional
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace luong
