// The NMT model: parameter names, whole-model gradients, padding invariance, the step-wise decoding API
// against teacher forcing, the loss helper and configuration errors.
#include <gtest/gtest.h>

#include "models/nmt/greedy.h"
#include "models/nmt/model.h"
#include "tests/support/error_of.h"
#include "tests/support/gradcheck.h"

namespace luong::nmt {
namespace {

using luong::testing::gradcheck;
using luong::testing::GradCheckResult;
using luong::testing::max_abs_diff;

ModelConfig tiny_config() {
  ModelConfig c;
  c.src_vocab = 7, c.tgt_vocab = 6, c.pad_id = 0, c.layers = 2, c.hidden_size = 4, c.embedding_size = 4;
  c.dropout = 0.0, c.attention = "general", c.attention_window = 2;
  return c;
}

// Two sentences of lengths 3 and 2 (source) and 3 and 2 (target), padded with 0.
struct Batch {
  Tensor src = Tensor::from_ids({3, 5, 2, 6, 4, 0}, {2, 3});
  std::vector<int64_t> src_lengths{3, 2};
  Tensor tgt_in = Tensor::from_ids({1, 4, 3, 1, 5, 0}, {2, 3});
  Tensor tgt_out = Tensor::from_ids({4, 3, 2, 5, 2, 0}, {2, 3});
};

using luong::testing::error_of;

TEST(NmtModel, ParameterNamesFollowTheModuleTree) {
  ModelConfig c = tiny_config();
  c.bidirectional_encoder = true;
  Generator g(1);
  NmtModel m(c, g);
  std::vector<std::string> names;
  for (auto& [n, p] : m.named_parameters()) {
    names.push_back(n);
    EXPECT_EQ(p.name(), n);
  }
  const std::vector<std::string> expect{
      "encoder.embedding.weight", "encoder.lstm.0.fwd.weight_ih", "encoder.lstm.0.fwd.weight_hh",
      "encoder.lstm.0.fwd.bias", "encoder.lstm.0.bwd.weight_ih", "encoder.lstm.0.bwd.weight_hh",
      "encoder.lstm.0.bwd.bias", "encoder.lstm.1.weight_ih", "encoder.lstm.1.weight_hh", "encoder.lstm.1.bias",
      "decoder.embedding.weight", "decoder.lstm.0.weight_ih", "decoder.lstm.0.weight_hh", "decoder.lstm.0.bias",
      "decoder.lstm.1.weight_ih", "decoder.lstm.1.weight_hh", "decoder.lstm.1.bias",
      "decoder.attention.score.weight", "decoder.combine.weight", "decoder.output.weight", "decoder.output.bias"};
  EXPECT_EQ(names, expect);
  // Input feeding widens the decoder's first layer input to E + H.
  EXPECT_EQ(m.named_parameters()[11].second.shape(), (Shape{8, 16}));
}

TEST(NmtModel, WholeModelGradientsMatchFiniteDifferences) {
  struct Variant {
    const char* what;
    ModelConfig cfg;
  };
  std::vector<Variant> variants;
  {
    ModelConfig c = tiny_config();
    c.bidirectional_encoder = true, c.reverse_source = true, c.tie_embeddings = true;
    variants.push_back({"general, bidirectional, reversed, tied", c});
  }
  {
    ModelConfig c = tiny_config();
    c.attention = "local-p", c.attention_score = "concat", c.dropout = 0.3;
    variants.push_back({"local-p/concat with dropout", c});
  }
  {
    ModelConfig c = tiny_config();
    c.attention = "dot", c.input_feeding = false, c.layers = 1;
    variants.push_back({"dot without input feeding", c});
  }
  Batch batch;
  for (const auto& v : variants) {
    Generator init(3);
    NmtModel m(v.cfg, DType::f64);
    m.init_parameters("uniform", 0.5, init);
    const GradCheckResult r = gradcheck(
        [&](const std::vector<Variable>&) {
          Generator drop(77);  // the same masks on every evaluation
          return m.loss(m.forward(batch.src, batch.src_lengths, batch.tgt_in, &drop), batch.tgt_out).loss;
        },
        m.parameters());
    EXPECT_LE(r.max_rel_error, 1e-6) << v.what << ": " << r.worst;
  }
}

// The training path (forward_loss: the generator fused with its loss) computes what forward() + loss() do:
// same loss and same gradient for every parameter, with dropout, label smoothing and tied embeddings.
TEST(NmtModel, ForwardLossEqualsForwardThenLoss) {
  for (bool tied : {false, true}) {
    ModelConfig c = tiny_config();
    c.dropout = 0.3, c.tie_embeddings = tied;
    Generator init(5);
    NmtModel m(c, init, DType::f64);
    Batch batch;
    auto run = [&](bool fused) {
      for (auto& p : m.parameters()) p.set_grad_buffer(Tensor());
      Generator drop(21);
      CrossEntropy ce = fused ? m.forward_loss(batch.src, batch.src_lengths, batch.tgt_in, batch.tgt_out, 0.1, &drop)
                              : m.loss(m.forward(batch.src, batch.src_lengths, batch.tgt_in, &drop), batch.tgt_out, 0.1);
      ce.loss.backward();
      std::vector<Tensor> grads;
      for (auto& p : m.parameters()) grads.push_back(p.grad().clone());
      return std::make_pair(ce, grads);
    };
    const auto [fused, fused_grads] = run(true);
    const auto [plain, plain_grads] = run(false);
    EXPECT_EQ(fused.tokens, plain.tokens);
    EXPECT_NEAR(fused.loss.data().item(), plain.loss.data().item(), 1e-12) << "tied " << tied;
    for (size_t k = 0; k < plain_grads.size(); ++k)
      EXPECT_LT(max_abs_diff(fused_grads[k], plain_grads[k]), 1e-12) << "tied " << tied << " parameter " << k;
  }
}

TEST(NmtModel, PaddingDoesNotChangeAnySentence) {
  for (const char* att : {"general", "local-m", "local-p", "concat"}) {
    ModelConfig c = tiny_config();
    c.attention = att, c.bidirectional_encoder = true, c.reverse_source = true;
    Generator g(4);
    NmtModel m(c, g, DType::f64);
    Batch batch;
    Variable logits = m.forward(batch.src, batch.src_lengths, batch.tgt_in);  // (T * B, V), row t * B + b
    // Sentence 1 alone: source [6, 4], target in [1, 5].
    Variable alone = m.forward(Tensor::from_ids({6, 4}, {1, 2}), {2}, Tensor::from_ids({1, 5}, {1, 2}));
    for (int64_t t = 0; t < 2; ++t)
      EXPECT_LE(max_abs_diff(logits.data().select(t * 2 + 1), alone.data().select(t)), 1e-12) << att << " t " << t;
  }
}

TEST(NmtModel, DecodeStepsReproduceTeacherForcing) {
  for (const char* att : {"general", "local-p"}) {
    ModelConfig c = tiny_config();
    c.attention = att, c.tie_embeddings = true;
    Generator g(5);
    NmtModel m(c, g, DType::f64);
    Batch batch;
    Variable logits = m.forward(batch.src, batch.src_lengths, batch.tgt_in);
    Variable logp = log_softmax(logits);
    DecoderState state = m.encode(batch.src, batch.src_lengths);
    const auto in = batch.tgt_in.to_vector();
    for (int64_t t = 0; t < 3; ++t) {
      Tensor prev = Tensor::from_ids({static_cast<int64_t>(in[static_cast<size_t>(t)]),
                                      static_cast<int64_t>(in[static_cast<size_t>(3 + t)])},
                                     {2});
      DecodeStep s = m.decode_step(state, prev);
      EXPECT_EQ(s.attention.shape(), (Shape{2, 3}));
      EXPECT_LE(max_abs_diff(s.log_probs.data(), logp.data().narrow(t * 2, 2)), 1e-12) << att << " step " << t;
      state = s.state;
    }
  }
}

TEST(NmtModel, SelectRowsReordersAndRepeatsHypotheses) {
  ModelConfig c = tiny_config();
  c.attention = "concat";
  Generator g(6);
  NmtModel m(c, g, DType::f64);
  Batch batch;
  DecoderState s0 = m.encode(batch.src, batch.src_lengths);
  DecodeStep a = m.decode_step(s0, Tensor::from_ids({1, 1}, {2}));
  DecoderState picked = m.select_rows(a.state, {1, 0, 1});
  DecodeStep b = m.decode_step(a.state, Tensor::from_ids({4, 3}, {2}));
  DecodeStep p = m.decode_step(picked, Tensor::from_ids({3, 4, 3}, {3}));
  EXPECT_LE(max_abs_diff(p.log_probs.data().select(0), b.log_probs.data().select(1)), 1e-13);
  EXPECT_LE(max_abs_diff(p.log_probs.data().select(1), b.log_probs.data().select(0)), 1e-13);
  EXPECT_LE(max_abs_diff(p.log_probs.data().select(2), b.log_probs.data().select(1)), 1e-13);
  EXPECT_LE(max_abs_diff(p.attention.data().select(2), b.attention.data().select(1)), 1e-13);
  EXPECT_NE(error_of([&] { m.select_rows(a.state, {2}); }).find("row 2 outside a batch of 2"), std::string::npos);
}

TEST(NmtModel, LossSumsTokensAndIgnoresPadding) {
  Generator g(7);
  NmtModel m(tiny_config(), g, DType::f64);
  Batch batch;
  Variable logits = m.forward(batch.src, batch.src_lengths, batch.tgt_in);
  EXPECT_EQ(logits.shape(), (Shape{6, 6}));
  CrossEntropy ce = m.loss(logits, batch.tgt_out);
  EXPECT_EQ(ce.tokens, 5);
  // By hand: -log p(target) over the 5 real tokens, rows t * B + b of the time-major logits.
  const auto lp = log_softmax(logits).data().to_vector();
  const auto out = batch.tgt_out.to_vector();
  double expect = 0;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 3; ++t) {
      const auto y = static_cast<int64_t>(out[static_cast<size_t>(b * 3 + t)]);
      if (y != 0) expect -= lp[static_cast<size_t>((t * 2 + b) * 6 + y)];
    }
  EXPECT_NEAR(ce.loss.data().item(), expect, 1e-12);
}

TEST(NmtModel, ConfigurationErrorsNameTheKey) {
  ModelConfig c = tiny_config();
  c.attention = "bahdanau";
  EXPECT_NE(error_of([&] { NmtModel m(c); }).find("model.attention: unknown variant 'bahdanau'"), std::string::npos);
  c = tiny_config();
  c.tie_embeddings = true, c.embedding_size = 3;
  EXPECT_NE(error_of([&] { NmtModel m(c); }).find("tie_embeddings needs embedding_size == hidden_size"),
            std::string::npos);
  c = tiny_config();
  c.dropout = 0.5;
  NmtModel m(c);
  Batch batch;
  EXPECT_NE(error_of([&] { m.forward(batch.src, batch.src_lengths, batch.tgt_in); }).find("needs a generator"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m.forward(batch.src, {3, 4}, batch.tgt_in); }).find("length 4 outside [1, 3]"),
            std::string::npos);
}

TEST(NmtModel, SameSeedSameModel) {
  Generator g1(9), g2(9);
  NmtModel a(tiny_config(), g1), b(tiny_config(), g2);
  const auto pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(max_abs_diff(pa[i].data(), pb[i].data()), 0.0);
  for (double v : a.encoder().embedding().weight().data().select(0).to_vector()) EXPECT_EQ(v, 0.0);  // pad row
}

}  // namespace
}  // namespace luong::nmt
