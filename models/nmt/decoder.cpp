#include "models/nmt/decoder.h"

#include "framework/ops/weight_gemm.h"

namespace luong::nmt {

Decoder::Decoder(const ModelConfig& cfg, DType dtype) : cfg_(cfg) {
  const int64_t E = cfg.embedding_size, H = cfg.hidden_size;
  embedding_ = register_module("embedding", std::make_shared<Embedding>(cfg.tgt_vocab, E, cfg.pad_id, dtype));
  LstmOptions lo;
  lo.input_size = E + (cfg.input_feeding ? H : 0), lo.hidden_size = H, lo.layers = cfg.layers;
  lo.dropout = cfg.dropout, lo.dtype = dtype;
  lstm_ = register_module("lstm", std::make_shared<Lstm>(lo));
  AttentionOptions ao;
  ao.hidden_size = H, ao.score = cfg.attention_score, ao.window = cfg.attention_window, ao.dtype = dtype;
  attention_ = register_module("attention", make_attention(cfg.attention, ao));
  combine_ = register_module("combine", std::make_shared<Linear>(2 * H, H, false, dtype));
  if (cfg.tie_embeddings) {
    LUONG_CHECK(E == H, "model: tie_embeddings needs embedding_size == hidden_size, got ", E, " and ", H);
    output_bias_ = register_parameter("output_bias", {cfg.tgt_vocab}, dtype);
  } else {
    output_ = register_module("output", std::make_shared<Linear>(H, cfg.tgt_vocab, true, dtype));
  }
  dropout_ = register_module("dropout", std::make_shared<Dropout>(cfg.dropout));
}

DecoderState Decoder::initial_state(const EncoderOutput& enc) const {
  LUONG_CHECK(static_cast<int64_t>(enc.final.size()) == cfg_.layers, "decoder: encoder has ", enc.final.size(),
              " layers, decoder ", cfg_.layers);
  DecoderState s;
  s.lstm = enc.final;  // the decoder starts where the encoder ended
  const Tensor& h0 = enc.final[0].h.data();
  s.feed = Variable(Tensor::zeros(h0.shape(), h0.dtype(), h0.device()));
  s.memory = attention_->prepare(enc.memory, enc.mask, enc.lengths);
  s.t = 0;
  return s;
}

Variable Decoder::step(const Variable& emb_proj, const Variable& feed_weight, DecoderState& state, Generator* gen,
                       Variable* weights) const {
  Variable x0 = emb_proj;
  if (cfg_.input_feeding) x0 = add(x0, matmul(state.feed, feed_weight));  // [emb; h̃_{t-1}] W = emb W_e + h̃_{t-1} W_f
  Variable h = dropout_->forward(lstm_->step_projected(x0, state.lstm, gen), gen);
  AttentionOutput a = attention_->attend(h, state.memory, state.t);
  Variable h_tilde = tanh(combine_->forward(concat({a.context, h}, 1)));  // eq. 5
  if (weights) *weights = a.weights;
  state.feed = h_tilde;
  ++state.t;
  return h_tilde;
}

Variable Decoder::forward(const Tensor& tgt_in, DecoderState& state, Generator* gen,
                          std::vector<Variable>* attention_weights) const {
  LUONG_CHECK(tgt_in.dtype() == DType::i64 && tgt_in.dim() == 2, "decoder: tgt_in must be int64 (T, B), got ",
              tgt_in.describe());
  const int64_t T = tgt_in.size(0), E = cfg_.embedding_size;
  // The weights are read-only for the whole loop: each step's products reuse one packed copy of each.
  PackedWeightScope packed_weights;
  // Layer 0's input projection of the embeddings for all T steps in one GEMM.
  Variable emb_proj = matmul(embedding_->forward(tgt_in), slice(lstm_->layer(0).weight_ih(), 0, 0, E));
  // W_f sliced once for all steps: its T uses then share one weight gradient, which the backward pass sums
  // in one GEMM (autograd/weight_grad_deferral.h), as it does for the LSTM matrices and W_c.
  const Variable feed_weight =
      cfg_.input_feeding ? slice(lstm_->layer(0).weight_ih(), 0, E, cfg_.hidden_size) : Variable();
  std::vector<Variable> outs;
  outs.reserve(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    Variable w;
    outs.push_back(step(select(emb_proj, 0, t), feed_weight, state, gen, attention_weights ? &w : nullptr));
    if (attention_weights) attention_weights->push_back(w);
  }
  return stack(outs);
}

Decoder::OutputLayer Decoder::output_layer() const {
  if (output_) return {output_->weight(), output_->bias()};
  return {transpose(embedding_->weight(), 0, 1), output_bias_};  // eq. 6 with W_s = embeddingᵀ
}

Variable Decoder::logits(const Variable& h_tilde, Generator* gen) const {
  Variable h = dropout_->forward(h_tilde, gen);
  const OutputLayer g = output_layer();
  Variable z = matmul(h, g.weight);
  return g.bias.defined() ? add(z, g.bias) : z;
}

CrossEntropy Decoder::loss(const Variable& h_tilde, const Tensor& targets, int64_t ignore_index,
                           double label_smoothing, Generator* gen) const {
  Variable h = dropout_->forward(h_tilde, gen);
  const OutputLayer g = output_layer();
  return linear_cross_entropy(h, g.weight, g.bias, targets, ignore_index, label_smoothing);
}

}  // namespace luong::nmt
