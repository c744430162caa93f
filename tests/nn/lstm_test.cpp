// Stacked LSTM: gradients, padded batches equal the unpadded sentences, the step API equals the sequence
// API, errors.
#include <gtest/gtest.h>

#include "framework/nn/lstm.h"
#include "tests/support/gradcheck.h"

namespace luong::testing {
namespace {

std::shared_ptr<Lstm> make_lstm(int64_t in, int64_t hidden, int64_t layers, bool bidir, double p, uint64_t seed) {
  LstmOptions o;
  o.input_size = in, o.hidden_size = hidden, o.layers = layers, o.bidirectional_first = bidir, o.dropout = p;
  o.dtype = DType::f64;
  auto lstm = std::make_shared<Lstm>(o);
  Generator g(seed);
  lstm->init_parameters("uniform", 0.5, g);
  return lstm;
}

// Time step t of sentence b of x (T, B, I) as a (1, 1, I) tensor.
Tensor column(const Tensor& x, int64_t t, int64_t b) {
  const int64_t I = x.size(2);
  return x.select(t).view({x.size(1) * I}).narrow(b * I, I).clone().view({1, 1, I});
}

TEST(Lstm, GradientsMatchFiniteDifferencesWithPaddingAndDropout) {
  for (bool bidir : {false, true}) {
    auto lstm = make_lstm(3, 4, 2, bidir, 0.3, 21);
    Generator g(5);
    Variable x = random_leaf(g, {4, 3, 3});  // (T, B, I)
    Variable h0 = random_leaf(g, {3, 4}), c0 = random_leaf(g, {3, 4});
    const std::vector<int64_t> lengths{4, 2, 3};
    std::vector<Variable> inputs{x, h0, c0};
    for (auto& p : lstm->parameters()) inputs.push_back(p);
    const GradCheckResult r = gradcheck(
        [&](const std::vector<Variable>& v) {
          Generator drop(9);
          LstmSequence s = lstm->forward(v[0], lengths, &drop, {{v[1], v[2]}, {v[2], v[1]}});
          Variable out = weighted_sum(s.outputs, 1);
          for (size_t l = 0; l < s.final.size(); ++l)
            out = add(out, add(weighted_sum(s.final[l].h, 2 + l), weighted_sum(s.final[l].c, 7 + l)));
          return out;
        },
        inputs);
    EXPECT_LE(r.max_rel_error, 1e-6) << (bidir ? "bidirectional: " : "unidirectional: ") << r.worst;
  }
}

TEST(Lstm, PaddingDoesNotChangeAnySentence) {
  for (bool bidir : {false, true}) {
    auto lstm = make_lstm(3, 4, 2, bidir, 0.0, 4);
    Generator g(8);
    const std::vector<int64_t> lengths{2, 5, 3};
    // Each sentence alone (no padding) is the reference for its row of the padded batch.
    Tensor x = random_leaf(g, {5, 3, 3}, -1, 1, false).data();
    LstmSequence batch = lstm->forward(Variable(x), lengths, nullptr);
    for (int64_t b = 0; b < 3; ++b) {
      const int64_t len = lengths[static_cast<size_t>(b)];
      Tensor xb = Tensor::empty({len, 1, 3}, DType::f64);
      for (int64_t t = 0; t < len; ++t) xb.select(t).copy_(column(x, t, b));
      LstmSequence single = lstm->forward(Variable(xb), {len}, nullptr);
      for (int64_t t = 0; t < len; ++t)
        EXPECT_LE(max_abs_diff(column(batch.outputs.data(), t, b), single.outputs.data().select(t)), 1e-12)
            << "sentence " << b << " step " << t << (bidir ? " (bidirectional)" : "");
      for (size_t l = 0; l < 2; ++l) {
        EXPECT_LE(max_abs_diff(batch.final[l].h.data().select(b), single.final[l].h.data().select(0)), 1e-12);
        EXPECT_LE(max_abs_diff(batch.final[l].c.data().select(b), single.final[l].c.data().select(0)), 1e-12);
      }
    }
  }
}

TEST(Lstm, PaddingValuesNeverReachTheResult) {
  auto lstm = make_lstm(2, 4, 1, true, 0.0, 6);
  Generator g(2);
  Tensor x = random_leaf(g, {4, 2, 2}, -1, 1, false).data();
  Tensor y = x.clone();
  // Sentence 1 has length 2: its steps 2 and 3 are padding, filled with huge values in y.
  y.select(2).view({4}).narrow(2, 2).fill_(1e3);
  y.select(3).view({4}).narrow(2, 2).fill_(-1e3);
  LstmSequence a = lstm->forward(Variable(x), {4, 2}, nullptr), b = lstm->forward(Variable(y), {4, 2}, nullptr);
  EXPECT_EQ(max_abs_diff(a.final[0].h.data(), b.final[0].h.data()), 0.0);
  EXPECT_EQ(max_abs_diff(a.final[0].c.data(), b.final[0].c.data()), 0.0);
  for (int64_t t = 0; t < 2; ++t)
    EXPECT_EQ(max_abs_diff(column(a.outputs.data(), t, 1), column(b.outputs.data(), t, 1)), 0.0) << "step " << t;
}

TEST(Lstm, StepByStepEqualsTheSequence) {
  auto lstm = make_lstm(3, 4, 3, false, 0.0, 12);
  Generator g(3);
  Variable x = random_leaf(g, {5, 2, 3}, -1, 1, false);
  LstmSequence seq = lstm->forward(x, {5, 5}, nullptr);
  std::vector<LstmState> states(3, LstmState{Variable(Tensor::zeros({2, 4}, DType::f64)),
                                             Variable(Tensor::zeros({2, 4}, DType::f64))});
  for (int64_t t = 0; t < 5; ++t) {
    Variable xt(x.data().select(t));
    Variable proj = matmul(xt, lstm->layer(0).weight_ih());
    Variable top = lstm->step_projected(proj, states, nullptr);
    EXPECT_LE(max_abs_diff(top.data(), seq.outputs.data().select(t)), 1e-13) << "step " << t;
    // The unprojected step of layer 0 gives the same state.
    if (t == 0) {
      LstmState s = lstm->layer(0).step(xt, {Variable(Tensor::zeros({2, 4}, DType::f64)),
                                             Variable(Tensor::zeros({2, 4}, DType::f64))});
      EXPECT_LE(max_abs_diff(s.h.data(), states[0].h.data()), 1e-13);
    }
  }
  for (size_t l = 0; l < 3; ++l) EXPECT_LE(max_abs_diff(states[l].c.data(), seq.final[l].c.data()), 1e-13);
}

TEST(Lstm, RejectsBadLengthsAndShapesNamingThem) {
  auto lstm = make_lstm(3, 4, 1, false, 0.0, 1);
  Variable x(Tensor::zeros({4, 2, 3}, DType::f64));
  auto msg = [&](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(msg([&] { lstm->forward(x, {4, 5}, nullptr); }).find("length 5 outside [1, 4]"), std::string::npos);
  EXPECT_NE(msg([&] { lstm->forward(x, {4}, nullptr); }).find("1 lengths for a batch of 2"), std::string::npos);
  EXPECT_NE(msg([&] { lstm->forward(Variable(Tensor::zeros({4, 2, 5}, DType::f64)), {4, 4}, nullptr); })
                .find("(4, 2, 5) is not (T, B, 3)"),
            std::string::npos);
  auto bi = make_lstm(3, 4, 1, true, 0.0, 1);
  std::vector<LstmState> st(1);
  EXPECT_NE(msg([&] { bi->step_projected(x, st, nullptr); }).find("bidirectional"), std::string::npos);
}

}  // namespace
}  // namespace luong::testing
