// The Luong et al. (2015) NMT model: Encoder + Decoder, built from a ModelConfig.
//
// Training: forward() runs the whole target with teacher forcing and returns time-major logits
// (row t * B + b), projected in one GEMM; loss() is the summed token cross-entropy ignoring padding.
// Decoding: encode() then decode_step() one token at a time; beam search reorders hypotheses with
// select_rows().
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/ops/ops.h"
#include "models/nmt/decoder.h"
#include "models/nmt/encoder.h"
#include "models/nmt/model_config.h"

namespace luong::nmt {

struct DecodeStep {
  Variable log_probs;  // (B, V)
  DecoderState state;  // after this step
  Variable attention;  // (B, S) weights this step used
};

// A parameter with one entry per token of a vocabulary along one axis: an embedding's rows, the output
// layer's columns and bias. train.init_vocabulary carries such entries from one vocabulary to another by token.
struct VocabularyAxis {
  bool target = false;  // the target vocabulary's (else the source's)
  int axis = 0;
};

class NmtModel : public Module {
 public:
  // Parameters are zero until init_parameters() (or a checkpoint load). dtype: f32, or f64 for
  // gradient checks. Parameter names are assigned ("encoder.lstm.0.weight_ih", ...).
  NmtModel(const ModelConfig& cfg, DType dtype = DType::f32);
  // Also initialises with cfg.init / cfg.init_range from `init_gen`.
  NmtModel(const ModelConfig& cfg, Generator& init_gen, DType dtype = DType::f32);

  // src (B, S) int64, src_lengths (B), tgt_in (B, T) int64 (BOS + target, padded) -> logits (T * B, V),
  // time-major. gen: the dropout stream (may be null in eval mode or with dropout 0).
  Variable forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                   Generator* gen = nullptr) const;
  // logits from forward(), tgt_out (B, T) int64 (target + EOS, padded with pad_id, which is ignored).
  CrossEntropy loss(const Variable& logits, const Tensor& tgt_out, double label_smoothing = 0.0) const;
  // forward() and loss() in one, with the generator fused into the loss: the logits are never a tensor of
  // their own (one vocabulary-sized buffer instead of three). What training and validation use.
  CrossEntropy forward_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                            const Tensor& tgt_out, double label_smoothing = 0.0, Generator* gen = nullptr) const;

  // The step-wise API.
  DecoderState encode(const Tensor& src, const std::vector<int64_t>& src_lengths, Generator* gen = nullptr) const;
  // prev_tokens (B) int64 -> log-probabilities of the next token, the new state and the attention weights.
  DecodeStep decode_step(const DecoderState& state, const Tensor& prev_tokens, Generator* gen = nullptr) const;
  // The state of rows `rows` (any length; rows may repeat, e.g. to expand each sentence into k beams).
  DecoderState select_rows(const DecoderState& state, const std::vector<int64_t>& rows) const;

  const ModelConfig& config() const { return cfg_; }
  // Every parameter shaped by a vocabulary, by parameter name ("decoder.output.weight": the target's, axis 1);
  // the others do not depend on the vocabularies.
  std::map<std::string, VocabularyAxis> vocabulary_axes() const;
  const Encoder& encoder() const { return *encoder_; }
  const Decoder& decoder() const { return *decoder_; }

 private:
  // Encoder and teacher-forced decoder: h̃ of every target position, (T * B, H), time-major.
  Variable decode_all(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                      Generator* gen) const;
  Tensor flat_targets(const Tensor& tgt_out, int64_t rows, Device device) const;

  const ModelConfig cfg_;
  std::shared_ptr<Encoder> encoder_;
  std::shared_ptr<Decoder> decoder_;
};

}  // namespace luong::nmt
