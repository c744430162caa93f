// The decoder (Luong et al. 2015, §3): target embeddings with input feeding (§3.3: the previous attentional
// state h̃_{t-1} is concatenated to the input), a stacked LSTM started from the encoder's final state,
// attention from the registry, h̃_t = tanh(W_c [c_t; h_t]) (eq. 5), and the output projection (eq. 6).
#pragma once
#include <memory>
#include <vector>

#include "framework/nn/attention/attention.h"
#include "framework/nn/dropout.h"
#include "framework/nn/embedding.h"
#include "framework/nn/linear.h"
#include "framework/nn/lstm.h"
#include "models/nmt/encoder.h"
#include "models/nmt/model_config.h"

namespace luong::nmt {

// Everything a decoder step reads and updates; one row per hypothesis.
struct DecoderState {
  std::vector<LstmState> lstm;  // per layer, (B, H)
  Variable feed;                // (B, H) h̃_{t-1}; zeros before the first step
  AttentionMemory memory;       // the prepared encoder memory (B, S, H)
  int64_t t = 0;                // index of the next target step
};

class Decoder : public Module {
 public:
  Decoder(const ModelConfig& cfg, DType dtype);

  DecoderState initial_state(const EncoderOutput& enc) const;
  // tgt_in (T, B) time-major int64 -> h̃ for every step (T, B, H); advances `state` by T steps.
  // attention_weights, when given, receives one (B, S) per step.
  Variable forward(const Tensor& tgt_in, DecoderState& state, Generator* gen,
                   std::vector<Variable>* attention_weights = nullptr) const;
  // h̃ (..., H) -> logits (..., V), after dropout: one GEMM for all positions.
  Variable logits(const Variable& h_tilde, Generator* gen) const;
  // The same generator fused with its loss (ops/linear_cross_entropy.cpp): h̃ (N, H), targets (N) int64 ->
  // summed cross-entropy over the targets that are not ignore_index. Draws the same dropout as logits().
  CrossEntropy loss(const Variable& h_tilde, const Tensor& targets, int64_t ignore_index, double label_smoothing,
                    Generator* gen) const;

  const Embedding& embedding() const { return *embedding_; }
  const Attention& attention() const { return *attention_; }

 private:
  // The generator's weight (H, V) and bias: the output layer's, or the transposed target embedding and
  // output_bias_ when tied. logits() and loss() both use it.
  struct OutputLayer {
    Variable weight, bias;
  };
  OutputLayer output_layer() const;

  // One step: emb_proj (B, 4H) is the embedding's share of layer 0's input projection, feed_weight (H, 4H)
  // the share of h̃_{t-1} (undefined without input feeding).
  Variable step(const Variable& emb_proj, const Variable& feed_weight, DecoderState& state, Generator* gen,
                Variable* weights) const;

  const ModelConfig cfg_;
  std::shared_ptr<Embedding> embedding_;
  std::shared_ptr<Lstm> lstm_;
  std::shared_ptr<Attention> attention_;
  std::shared_ptr<Linear> combine_;  // W_c (2H, H), no bias (eq. 5)
  std::shared_ptr<Linear> output_;   // (H, V); null when tied to the embeddings
  Variable output_bias_;             // (V) when tied
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace luong::nmt
