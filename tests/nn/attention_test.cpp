// Every registered attention variant: values against the plain-loop reference, padding invariance,
// finite-difference gradients; and hand-computed cases for the windows of the local variants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "framework/nn/attention/attention.h"
#include "framework/ops/tensor_math.h"
#include "tests/nn/attention_reference.h"
#include "tests/support/gradcheck.h"

namespace luong::testing {
namespace {

constexpr int64_t kB = 3, kS = 6, kH = 3;
const std::vector<int64_t> kLengths{6, 2, 4};

struct AttnCase {
  AttentionOptions opt;
  std::shared_ptr<Attention> attention;
  Variable h, memory;
  Tensor mask;
};

Tensor mask_of(const std::vector<int64_t>& lengths, int64_t S) {
  std::vector<double> m;
  for (int64_t len : lengths)
    for (int64_t s = 0; s < S; ++s) m.push_back(s < len ? 1.0 : 0.0);
  return Tensor::from(m, {static_cast<int64_t>(lengths.size()), S}, DType::u8);
}

// A variant on random float64 inputs; padding positions of the memory hold large values, so any leak of
// padding into a result is visible.
AttnCase make_setup(const std::string& variant, const std::string& score, int64_t window, uint64_t seed) {
  AttnCase s;
  s.opt.hidden_size = kH, s.opt.score = score, s.opt.window = window, s.opt.dtype = DType::f64;
  s.attention = make_attention(variant, s.opt);
  Generator g(seed);
  s.attention->init_parameters("uniform", 1.0, g);
  s.h = random_leaf(g, {kB, kH});
  s.memory = random_leaf(g, {kB, kS, kH});
  double* m = s.memory.data().data<double>();
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t p = kLengths[static_cast<size_t>(b)]; p < kS; ++p)
      for (int64_t i = 0; i < kH; ++i) m[(b * kS + p) * kH + i] = 50.0 + static_cast<double>(i);
  s.mask = mask_of(kLengths, kS);
  return s;
}

// (variant, score) pairs: global variants once, local variants with every registered score function.
std::vector<std::pair<std::string, std::string>> all_variants() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& v : AttentionRegistry::instance().names()) {
    if (AttentionScoreRegistry::instance().contains(v)) {
      out.emplace_back(v, v);
      continue;
    }
    for (const auto& sc : AttentionScoreRegistry::instance().names()) out.emplace_back(v, sc);
  }
  return out;
}

TEST(Attention, RegistryHoldsThePaperVariants) {
  const auto names = AttentionRegistry::instance().names();
  for (const char* v : {"concat", "dot", "general", "local-m", "local-p"})
    EXPECT_NE(std::find(names.begin(), names.end(), v), names.end()) << v;
  EXPECT_EQ(AttentionScoreRegistry::instance().names(), (std::vector<std::string>{"concat", "dot", "general"}));
  for (const auto& v : names)
    EXPECT_TRUE(has_attention_reference(v))
        << "attention '" << v << "' has no reference in tests/nn/attention_reference_support.cpp";
}

TEST(Attention, EveryVariantMatchesTheReference) {
  for (const auto& [variant, score] : all_variants()) {
    for (int64_t window : {1, 2}) {
      AttnCase s = make_setup(variant, score, window, 17 + static_cast<uint64_t>(window));
      const AttentionMemory mem = s.attention->prepare(s.memory, s.mask);
      for (int64_t t : {0, 1, 3, 5, 9}) {
        AttentionOutput out = s.attention->attend(s.h, mem, t);
        AttentionReference ref =
            attention_reference(variant, s.opt, *s.attention, s.h.data(), s.memory.data(), kLengths, t);
        const std::string what = variant + "/" + score + " D=" + std::to_string(window) + " t=" + std::to_string(t);
        ASSERT_EQ(out.weights.shape(), (Shape{kB, kS})) << what;
        ASSERT_EQ(out.context.shape(), (Shape{kB, kH})) << what;
        EXPECT_LE(max_abs_diff(out.weights.data(), Tensor::from(ref.weights, {kB, kS}, DType::f64)), 1e-12) << what;
        EXPECT_LE(max_abs_diff(out.context.data(), Tensor::from(ref.context, {kB, kH}, DType::f64)), 1e-12) << what;
      }
    }
  }
}

TEST(Attention, EveryVariantIsUnchangedByPaddingAndMasksIt) {
  for (const auto& [variant, score] : all_variants()) {
    AttnCase s = make_setup(variant, score, 2, 5);
    for (int64_t t : {0, 3, 6}) {
      AttentionOutput batch = s.attention->forward(s.h, s.memory, s.mask, t);
      const auto w = batch.weights.data().to_vector();
      for (int64_t b = 0; b < kB; ++b) {
        const int64_t len = kLengths[static_cast<size_t>(b)];
        for (int64_t p = len; p < kS; ++p) EXPECT_EQ(w[static_cast<size_t>(b * kS + p)], 0.0) << variant << " pad";
        // The sentence alone, unpadded.
        Tensor mb = s.memory.data().select(b).narrow(0, len).clone().view({1, len, kH});
        Variable hb(s.h.data().select(b).clone().view({1, kH}));
        AttentionOutput single = s.attention->forward(hb, Variable(mb), mask_of({len}, len), t);
        const auto ws = single.weights.data().to_vector();
        for (int64_t p = 0; p < len; ++p)
          EXPECT_NEAR(w[static_cast<size_t>(b * kS + p)], ws[static_cast<size_t>(p)], 1e-13)
              << variant << "/" << score << " sentence " << b << " t " << t;
        EXPECT_LE(max_abs_diff(batch.context.data().select(b), single.context.data().select(0)), 1e-13)
            << variant << "/" << score << " sentence " << b << " t " << t;
      }
    }
  }
}

TEST(Attention, EveryVariantMatchesFiniteDifferences) {
  for (const auto& [variant, score] : all_variants()) {
    AttnCase s = make_setup(variant, score, 2, 29);
    std::vector<Variable> inputs{s.h, s.memory};
    for (auto& p : s.attention->parameters()) inputs.push_back(p);
    for (int64_t t : {1, 4}) {
      const GradCheckResult r = gradcheck(
          [&](const std::vector<Variable>& v) {
            AttentionOutput o = s.attention->forward(v[0], v[1], s.mask, t);
            return add(weighted_sum(o.context, 1), weighted_sum(o.weights, 2));
          },
          inputs);
      EXPECT_LE(r.max_rel_error, 1e-6) << variant << "/" << score << " t=" << t << ": " << r.worst;
    }
  }
}

TEST(Attention, LocalPGradientReachesThePredictedPosition) {
  AttnCase s = make_setup("local-p", "general", 2, 31);
  auto params = s.attention->named_parameters();
  AttentionOutput o = s.attention->forward(s.h, s.memory, s.mask, 0);
  add(weighted_sum(o.context, 1), weighted_sum(o.weights, 2)).backward();
  for (auto& [name, p] : params) {
    if (name != "weight_p" && name != "v_p") continue;
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_GT(sum_squares(p.grad()), 1e-8) << name << " receives no gradient";
  }
}

// Hand-computed: H = 2, one sentence of 3, h = [1, 0], memory rows [1, 0], [0, 1], [2, 0] -> dot scores
// [1, 0, 2].
TEST(Attention, DotHandComputed) {
  AttentionOptions opt;
  opt.hidden_size = 2, opt.dtype = DType::f64;
  auto att = make_attention("dot", opt);
  Variable h(Tensor::from({1, 0}, {1, 2}, DType::f64));
  Variable m(Tensor::from({1, 0, 0, 1, 2, 0}, {1, 3, 2}, DType::f64));
  AttentionOutput o = att->forward(h, m, mask_of({3}, 3), 0);
  const double z = std::exp(1) + 1 + std::exp(2);
  const std::vector<double> w{std::exp(1) / z, 1 / z, std::exp(2) / z};
  EXPECT_LE(max_abs_diff(o.weights.data(), Tensor::from(w, {1, 3}, DType::f64)), 1e-15);
  EXPECT_LE(max_abs_diff(o.context.data(), Tensor::from({w[0] + 2 * w[2], w[1]}, {1, 2}, DType::f64)), 1e-15);
  // The last position masked: softmax over [1, 0] only.
  AttentionOutput o2 = att->forward(h, m, mask_of({2}, 3), 0);
  const double z2 = std::exp(1) + 1;
  EXPECT_LE(max_abs_diff(o2.weights.data(), Tensor::from({std::exp(1) / z2, 1 / z2, 0}, {1, 3}, DType::f64)), 1e-15);
}

// local-m with D = 1 and dot scores on sentences of 5 and 3 (padded to 5), scores all 0 via h = 0, so the
// window is read off the weights: uniform over the window, zero elsewhere.
TEST(Attention, LocalMWindowIsClippedAtBothEndsOfEachSentence) {
  AttentionOptions opt;
  opt.hidden_size = 2, opt.score = "dot", opt.window = 1, opt.dtype = DType::f64;
  auto att = make_attention("local-m", opt);
  Variable h(Tensor::zeros({2, 2}, DType::f64));
  Generator g(1);
  Variable m = random_leaf(g, {2, 5, 2});
  const AttentionMemory mem = att->prepare(m, mask_of({5, 3}, 5));
  auto weights = [&](int64_t t) { return att->attend(h, mem, t).weights.data().to_vector(); };
  const double h2 = 0.5, h3 = 1.0 / 3;
  // t = 0: window [-1, 1] clipped to {0, 1} in both sentences.
  EXPECT_EQ(weights(0), (std::vector<double>{h2, h2, 0, 0, 0, h2, h2, 0, 0, 0}));
  // t = 2: {1, 2, 3} in the first; {1, 2} in the second (its end is 2).
  EXPECT_EQ(weights(2), (std::vector<double>{0, h3, h3, h3, 0, 0, h2, h2, 0, 0}));
  // t = 7: p_t clamps to the last position: {3, 4} and {1, 2}.
  EXPECT_EQ(weights(7), (std::vector<double>{0, 0, 0, h2, h2, 0, h2, h2, 0, 0}));
}

// local-p with D = 2: W_p = 10 I and v_p = +-40 saturate the sigmoid, so p_t ~ S (window clipped at the end)
// or p_t ~ 0 (clipped at the start). Scores are zero (h·h̄ with h̄ = 0), so align is uniform over the window
// and each weight is the Gaussian factor exp(-(s - p_t)^2 / 2) (sigma = 1) over the window size.
TEST(Attention, LocalPWindowIsClippedAtBothEndsOfEachSentence) {
  AttentionOptions opt;
  opt.hidden_size = 2, opt.score = "dot", opt.window = 2, opt.dtype = DType::f64;
  for (double sign : {1.0, -1.0}) {
    auto att = make_attention("local-p", opt);
    for (auto& [name, p] : att->named_parameters()) {
      if (name == "weight_p") p.data().copy_(Tensor::from({10, 0, 0, 10}, {2, 2}));
      if (name == "v_p") p.data().copy_(Tensor::from({40 * sign, 40 * sign}, {2, 1}));
    }
    Variable h(Tensor::from({1, 1, 1, 1}, {2, 2}, DType::f64));
    Variable m(Tensor::zeros({2, 6, 2}, DType::f64));
    AttentionOutput o = att->forward(h, m, mask_of({6, 3}, 6), 0);
    const auto w = o.weights.data().to_vector();
    for (int64_t b = 0; b < 2; ++b) {
      const int64_t len = b == 0 ? 6 : 3;
      const double p_t = sign > 0 ? static_cast<double>(len) : 0.0;  // sigmoid(+-80): 1, or ~1e-35
      std::vector<int64_t> window;
      for (int64_t s = 0; s < len; ++s)
        if (std::abs(static_cast<double>(s) - p_t) <= 2) window.push_back(s);
      EXPECT_EQ(window.size(), sign > 0 ? 2u : 3u);  // {len-2, len-1} or {0, 1, 2}
      for (int64_t s = 0; s < 6; ++s) {
        const bool in = std::find(window.begin(), window.end(), s) != window.end();
        const double d = static_cast<double>(s) - p_t;
        const double expect = in ? std::exp(-d * d / 2) / static_cast<double>(window.size()) : 0.0;
        EXPECT_NEAR(w[static_cast<size_t>(b * 6 + s)], expect, 1e-14) << "sign " << sign << " b " << b << " s " << s;
      }
    }
  }
}

TEST(Attention, ErrorsNameTheProblem) {
  AttentionOptions opt;
  opt.hidden_size = 2, opt.dtype = DType::f64;
  auto msg = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(msg([&] { make_attention("bahdanau", opt); }).find("unknown name 'bahdanau'"), std::string::npos);
  opt.window = 0;
  EXPECT_NE(msg([&] { make_attention("local-m", opt); }).find("window D must be >= 1"), std::string::npos);
  opt.window = 2;
  auto att = make_attention("general", opt);
  Variable m(Tensor::zeros({1, 3, 2}, DType::f64));
  Tensor holes = Tensor::from({1, 0, 1}, {1, 3}, DType::u8);
  EXPECT_NE(msg([&] { att->prepare(m, holes); }).find("not a prefix of ones"), std::string::npos);
  EXPECT_NE(msg([&] { att->prepare(m, mask_of({3}, 2)); }).find("src_mask must be uint8 (1, 3)"), std::string::npos);
  Variable bad_h(Tensor::zeros({1, 3}, DType::f64));
  EXPECT_NE(msg([&] { att->forward(bad_h, m, mask_of({3}, 3), 0); }).find("does not match memory (1, 3, 2)"),
            std::string::npos);
}

}  // namespace
}  // namespace luong::testing
