#include "models/nmt/model.h"

#include "framework/nn/attention/attention.h"
#include "models/nmt/model_ids.h"

namespace luong::nmt {
namespace {

void check_config(const ModelConfig& c) {
  LUONG_CHECK(c.src_vocab > 0 && c.tgt_vocab > 0, "model: vocab sizes must be set, got src ", c.src_vocab, ", tgt ",
              c.tgt_vocab);
  LUONG_CHECK(c.pad_id >= 0 && c.pad_id < c.src_vocab && c.pad_id < c.tgt_vocab, "model: pad_id ", c.pad_id,
              " outside the vocabularies");
  LUONG_CHECK(c.layers >= 1 && c.hidden_size >= 1 && c.embedding_size >= 1, "model: layers, hidden_size and ",
              "embedding_size must be positive, got ", c.layers, ", ", c.hidden_size, ", ", c.embedding_size);
  LUONG_CHECK(AttentionRegistry::instance().contains(c.attention), "model.attention: unknown variant '", c.attention,
              "' (registered: ", [] {
                std::string s;
                for (auto& n : AttentionRegistry::instance().names()) s += (s.empty() ? "" : ", ") + n;
                return s;
              }(), ")");
}

// Rows `rows` of x (B, ...) -> (rows.size(), ...), differentiable (a table lookup of x's rows).
Variable gather_rows(const Variable& x, const Tensor& ids) {
  Shape s = x.shape();
  const int64_t rest = x.data().numel() / s[0];
  s[0] = ids.numel();
  return reshape(embedding(reshape(x, {x.size(0), rest}), ids), s);
}

}  // namespace

NmtModel::NmtModel(const ModelConfig& cfg, DType dtype) : cfg_(cfg) {
  check_config(cfg);
  encoder_ = register_module("encoder", std::make_shared<Encoder>(cfg, dtype));
  decoder_ = register_module("decoder", std::make_shared<Decoder>(cfg, dtype));
  assign_parameter_names();
}

NmtModel::NmtModel(const ModelConfig& cfg, Generator& init_gen, DType dtype) : NmtModel(cfg, dtype) {
  init_parameters(cfg.init, cfg.init_range, init_gen);
}

std::map<std::string, VocabularyAxis> NmtModel::vocabulary_axes() const {
  std::map<std::string, VocabularyAxis> out{{"encoder.embedding.weight", {false, 0}},
                                            {"decoder.embedding.weight", {true, 0}}};
  if (cfg_.tie_embeddings) {
    out["decoder.output_bias"] = {true, 0};  // the weight is the target embedding's
  } else {
    out["decoder.output.weight"] = {true, 1};  // Linear stores (in, out)
    out["decoder.output.bias"] = {true, 0};
  }
  // A renamed or reshaped parameter must not be carried along the wrong axis without notice.
  std::map<std::string, Shape> shapes;
  for (const auto& [name, v] : named_parameters()) shapes[name] = v.shape();
  for (const auto& [name, a] : out) {
    const auto it = shapes.find(name);
    LUONG_CHECK(it != shapes.end() && a.axis < static_cast<int>(it->second.size()) &&
                    it->second[static_cast<size_t>(a.axis)] == (a.target ? cfg_.tgt_vocab : cfg_.src_vocab),
                "vocabulary_axes: parameter ", name, " is not shaped by the ", a.target ? "target" : "source",
                " vocabulary along axis ", a.axis);
  }
  return out;
}

Variable NmtModel::decode_all(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                              Generator* gen) const {
  check_id_batch("model target", tgt_in, {});
  LUONG_CHECK(tgt_in.size(0) == src.size(0), "model: source batch ", src.size(0), " vs target batch ",
              tgt_in.size(0));
  DecoderState state = encode(src, src_lengths, gen);
  const Tensor tgt = time_major_ids(tgt_in, decoder_->embedding().weight().device());  // (T, B)
  Variable h_tilde = decoder_->forward(tgt, state, gen);                               // (T, B, H)
  return reshape(h_tilde, {tgt.numel(), cfg_.hidden_size});                            // row t * B + b
}

Variable NmtModel::forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                           Generator* gen) const {
  return decoder_->logits(decode_all(src, src_lengths, tgt_in, gen), gen);  // (T * B, V): one GEMM
}

// tgt_out (B, T) as the time-major flat targets of the rows of forward() / decode_all().
Tensor NmtModel::flat_targets(const Tensor& tgt_out, int64_t rows, Device device) const {
  check_id_batch("model loss target", tgt_out, {});
  LUONG_CHECK(rows == tgt_out.numel(), "model loss: ", rows, " output rows do not match targets ",
              shape_str(tgt_out.shape()));
  return time_major_ids(tgt_out, device).view({tgt_out.numel()});
}

CrossEntropy NmtModel::loss(const Variable& logits, const Tensor& tgt_out, double label_smoothing) const {
  LUONG_CHECK(logits.dim() == 2, "model loss: logits must be (rows, vocabulary), got ", shape_str(logits.shape()));
  return cross_entropy(logits, flat_targets(tgt_out, logits.size(0), logits.device()), cfg_.pad_id, label_smoothing);
}

CrossEntropy NmtModel::forward_loss(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                   const Tensor& tgt_in, const Tensor& tgt_out, double label_smoothing,
                                   Generator* gen) const {
  Variable h_tilde = decode_all(src, src_lengths, tgt_in, gen);
  const Tensor targets = flat_targets(tgt_out, h_tilde.size(0), h_tilde.device());
  return decoder_->loss(h_tilde, targets, cfg_.pad_id, label_smoothing, gen);
}

DecoderState NmtModel::encode(const Tensor& src, const std::vector<int64_t>& src_lengths, Generator* gen) const {
  return decoder_->initial_state(encoder_->forward(src, src_lengths, gen));
}

DecodeStep NmtModel::decode_step(const DecoderState& state, const Tensor& prev_tokens, Generator* gen) const {
  const int64_t B = state.feed.size(0);
  LUONG_CHECK(prev_tokens.dtype() == DType::i64 && prev_tokens.numel() == B, "decode_step: prev_tokens must be ",
              "int64 with ", B, " entries, got ", prev_tokens.describe());
  DecodeStep out;
  out.state = state;
  std::vector<Variable> weights;
  Variable h_tilde = decoder_->forward(prev_tokens.view({1, B}), out.state, gen, &weights);  // (1, B, H)
  out.log_probs = log_softmax(reshape(decoder_->logits(h_tilde, gen), {B, cfg_.tgt_vocab}));
  out.attention = weights[0];
  return out;
}

DecoderState NmtModel::select_rows(const DecoderState& state, const std::vector<int64_t>& rows) const {
  const int64_t B = state.feed.size(0);
  for (int64_t r : rows) LUONG_CHECK(r >= 0 && r < B, "select_rows: row ", r, " outside a batch of ", B);
  const Tensor ids = Tensor::from_ids(rows, {static_cast<int64_t>(rows.size())}, state.feed.device());
  DecoderState out;
  for (const auto& s : state.lstm) out.lstm.push_back({gather_rows(s.h, ids), gather_rows(s.c, ids)});
  out.feed = gather_rows(state.feed, ids);
  out.t = state.t;
  std::vector<int64_t> lengths;
  for (int64_t r : rows) lengths.push_back(state.memory.lengths[static_cast<size_t>(r)]);
  // The attention's per-batch keys have a layout of their own: prepare them again for the new rows.
  const Tensor mask = length_mask(lengths, state.memory.memory.size(1), state.feed.device());
  out.memory = decoder_->attention().prepare(gather_rows(state.memory.memory, ids), mask, lengths);
  return out;
}

}  // namespace luong::nmt
