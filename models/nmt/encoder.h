// The encoder (Luong et al. 2015, §3): source embeddings -> stacked LSTM (optionally the source reversed
// within each sentence, optionally a bidirectional first layer). Its top-layer states are the attention
// memory, and its final (h, c) per layer start the decoder.
#pragma once
#include <memory>
#include <vector>

#include "framework/nn/embedding.h"
#include "framework/nn/lstm.h"
#include "models/nmt/model_config.h"

namespace luong::nmt {

struct EncoderOutput {
  Variable memory;               // (B, S, H) top-layer states, in the order the encoder read the source
  Tensor mask;                   // (B, S) uint8, 1 = real token
  std::vector<int64_t> lengths;  // (B)
  std::vector<LstmState> final;  // per layer, (B, H) each: the state after each sentence's last token
};

class Encoder : public Module {
 public:
  Encoder(const ModelConfig& cfg, DType dtype);
  // src (B, S) int64 padded with pad_id after each sentence; lengths (B) in [1, S].
  EncoderOutput forward(const Tensor& src, const std::vector<int64_t>& lengths, Generator* gen) const;
  const Embedding& embedding() const { return *embedding_; }

 private:
  bool reverse_source_;
  std::shared_ptr<Embedding> embedding_;
  std::shared_ptr<Lstm> lstm_;
};

}  // namespace luong::nmt
