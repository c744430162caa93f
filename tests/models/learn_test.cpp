// A tiny model learns to copy random sequences, with every registered attention variant, to >= 99% token
// accuracy under greedy decoding within a bounded number of Adam steps. Adam is written inline over the
// FlatParameters buffers (the optimizer library is someone else's and must not be needed here).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "framework/autograd/flat_parameters.h"
#include "framework/nn/attention/attention.h"
#include "models/nmt/greedy.h"
#include "models/nmt/model.h"

namespace luong::nmt {
namespace {

constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kVocab = 10, kMinLen = 2, kMaxLen = 6;

struct CopyBatch {
  Tensor src, tgt_in, tgt_out;  // (B, S), (B, T), (B, T)
  std::vector<int64_t> lengths;
  std::vector<std::vector<int64_t>> sentences;
};

CopyBatch make_batch(Generator& gen, int64_t B) {
  CopyBatch b;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t len = kMinLen + static_cast<int64_t>(gen.below(kMaxLen - kMinLen + 1));
    std::vector<int64_t> s;
    for (int64_t j = 0; j < len; ++j) s.push_back(3 + static_cast<int64_t>(gen.below(kVocab - 3)));
    b.sentences.push_back(s);
    b.lengths.push_back(len);
  }
  const int64_t S = *std::max_element(b.lengths.begin(), b.lengths.end()), T = S + 1;
  std::vector<int64_t> src(static_cast<size_t>(B * S), kPad), in(static_cast<size_t>(B * T), kPad),
      out(static_cast<size_t>(B * T), kPad);
  for (int64_t i = 0; i < B; ++i) {
    const auto& s = b.sentences[static_cast<size_t>(i)];
    in[static_cast<size_t>(i * T)] = kBos;
    for (size_t j = 0; j < s.size(); ++j) {
      src[static_cast<size_t>(i * S) + j] = s[j];
      in[static_cast<size_t>(i * T) + j + 1] = s[j];
      out[static_cast<size_t>(i * T) + j] = s[j];
    }
    out[static_cast<size_t>(i * T) + s.size()] = kEos;
  }
  b.src = Tensor::from_ids(src, {B, S});
  b.tgt_in = Tensor::from_ids(in, {B, T});
  b.tgt_out = Tensor::from_ids(out, {B, T});
  return b;
}

// Correct tokens / max(generated, reference) length, summed over sentences (an early or late stop costs).
double token_accuracy(const NmtModel& model, const CopyBatch& b) {
  auto hyp = greedy_decode(model, b.src, b.lengths, kBos, kEos, kMaxLen + 2);
  int64_t correct = 0, total = 0;
  for (size_t i = 0; i < hyp.size(); ++i) {
    const auto& ref = b.sentences[i];
    total += static_cast<int64_t>(std::max(hyp[i].size(), ref.size()));
    for (size_t j = 0; j < std::min(hyp[i].size(), ref.size()); ++j) correct += hyp[i][j] == ref[j];
  }
  return static_cast<double>(correct) / static_cast<double>(total);
}

// Adam (Kingma & Ba 2015) on the flat buffers.
struct Adam {
  explicit Adam(int64_t n) : m(static_cast<size_t>(n), 0.0), v(static_cast<size_t>(n), 0.0) {}
  void step(FlatParameters& flat, double lr) {
    ++t;
    float* w = flat.data().data<float>();
    const float* g = flat.grad().data<float>();
    const double c1 = 1 - std::pow(0.9, t), c2 = 1 - std::pow(0.999, t);
    for (size_t i = 0; i < m.size(); ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      w[i] -= static_cast<float>(lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + 1e-8));
    }
  }
  std::vector<double> m, v;
  int t = 0;
};

class CopyTask : public ::testing::TestWithParam<std::string> {};

TEST_P(CopyTask, ReachesNinetyNinePercentTokenAccuracy) {
  const auto start = std::chrono::steady_clock::now();
  ModelConfig c;
  c.src_vocab = c.tgt_vocab = kVocab, c.pad_id = kPad, c.layers = 1, c.hidden_size = 32, c.embedding_size = 32;
  c.dropout = 0.0, c.attention = GetParam(), c.attention_score = "general", c.attention_window = 3;
  Generator init(1), data(2), eval_data(3);
  NmtModel model(c, init);
  FlatParameters flat(model.parameters(), Device::cpu());
  Adam adam(flat.numel());
  const CopyBatch eval = make_batch(eval_data, 100);
  constexpr int kMaxSteps = 1500, kEvalEvery = 50;
  double acc = 0;
  int steps = 0;
  while (steps < kMaxSteps) {
    CopyBatch b = make_batch(data, 32);
    flat.zero_grad();
    CrossEntropy ce = model.loss(model.forward(b.src, b.lengths, b.tgt_in), b.tgt_out);
    mul_scalar(ce.loss, 1.0 / static_cast<double>(ce.tokens)).backward();
    adam.step(flat, 0.01);
    if (++steps % kEvalEvery == 0) {
      model.eval();
      acc = token_accuracy(model, eval);
      model.train();
      if (acc >= 0.99) break;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ copy ] " << GetParam() << ": accuracy " << acc << " after " << steps << " steps, " << secs << " s\n";
  EXPECT_GE(acc, 0.99) << GetParam() << " after " << steps << " steps";
}

INSTANTIATE_TEST_SUITE_P(EveryAttention, CopyTask, ::testing::ValuesIn(AttentionRegistry::instance().names()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace luong::nmt
