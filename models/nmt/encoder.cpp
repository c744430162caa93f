#include "models/nmt/encoder.h"

#include "models/nmt/model_ids.h"

namespace luong::nmt {

Encoder::Encoder(const ModelConfig& cfg, DType dtype) : reverse_source_(cfg.reverse_source) {
  embedding_ = register_module("embedding",
                               std::make_shared<Embedding>(cfg.src_vocab, cfg.embedding_size, cfg.pad_id, dtype));
  LstmOptions lo;
  lo.input_size = cfg.embedding_size, lo.hidden_size = cfg.hidden_size, lo.layers = cfg.layers;
  lo.dropout = cfg.dropout, lo.bidirectional_first = cfg.bidirectional_encoder, lo.dtype = dtype;
  lstm_ = register_module("lstm", std::make_shared<Lstm>(lo));
}

EncoderOutput Encoder::forward(const Tensor& src, const std::vector<int64_t>& lengths, Generator* gen) const {
  check_id_batch("encoder", src, lengths);
  const Device dev = embedding_->weight().device();
  const Tensor ids = time_major_ids(src, dev, lengths, reverse_source_);  // (S, B)
  LstmSequence seq = lstm_->forward(embedding_->forward(ids), lengths, gen);
  EncoderOutput out;
  out.memory = transpose(seq.outputs, 0, 1);  // (S, B, H) -> (B, S, H), once per batch
  out.mask = length_mask(lengths, src.size(1), dev);
  out.lengths = lengths;
  out.final = std::move(seq.final);
  return out;
}

}  // namespace luong::nmt
