// Ensembles (models/nmt/ensemble.h): each decoder step's distribution is the mean of the members'
// probabilities (checked against the members' own steps), greedy decoding follows that mixture, an ensemble
// of one model twice decodes as the model, and the ensemble's loss is the mixture's per token (checked
// against teacher-forced steps) and never above the members' mean (Jensen).
#include "models/nmt/ensemble.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "models/nmt/beam_search.h"
#include "models/nmt/data/corpus.h"
#include "models/nmt/data/vocabulary.h"
#include "models/nmt/ensemble_loss.h"
#include "models/nmt/greedy.h"
#include "models/nmt/nmt_task.h"
#include "models/nmt/top_tokens.h"
#include "tests/decode/decode_fixtures.h"

namespace luong::nmt {
namespace {

constexpr int64_t kPad = Vocabulary::kPad, kBos = Vocabulary::kBos, kEos = Vocabulary::kEos;  // as make_batch uses

std::vector<float> row_of(const Variable& log_probs, int64_t row) {
  const Tensor t = log_probs.data().to(DType::f32);
  const int64_t V = t.size(1);
  return std::vector<float>(t.data<float>() + row * V, t.data<float>() + (row + 1) * V);
}

TEST(Ensemble, MeanProbabilityLogIsStable) {
  EXPECT_NEAR(mean_probability_log({std::log(0.2), std::log(0.6)}), std::log(0.4), 1e-15);
  // Far below what exp() can represent, and far apart: no underflow, no overflow.
  EXPECT_NEAR(mean_probability_log({-1000.0, -1000.0}), -1000.0, 1e-12);
  EXPECT_NEAR(mean_probability_log({-1.0, -2000.0}), -1.0 - std::log(2.0), 1e-12);
  EXPECT_EQ(mean_probability_log({-INFINITY, -INFINITY}), -INFINITY);
}

// The step's log-probabilities are log((p_1 + p_2 + p_3) / 3) of the members' own steps, for every row,
// with members of other depths, sizes and attention; the attention reported is the first member's.
TEST(Ensemble, EachStepIsTheMeanOfTheMembersProbabilities) {
  const auto a = random_model("general", 1, 2, 16), b = random_model("dot", 2, 1, 12),
             c = random_model("local-p", 3, 2, 10);
  const Ensemble ensemble({a.get(), b.get(), c.get()});
  NoGradGuard no_grad;
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const Tensor prev = Tensor::from_ids({kBos, 5, 6, 7}, {4});
  EnsembleState state = ensemble.encode(src, lengths);
  const EnsembleStep first = ensemble.decode_step(state, prev);
  const EnsembleStep second = ensemble.decode_step(first.state, Tensor::from_ids({8, 9, 10, 4}, {4}));
  // The same two steps member by member.
  std::vector<DecodeStep> own;
  for (const NmtModel* m : {a.get(), b.get(), c.get()}) {
    const DecodeStep s1 = m->decode_step(m->encode(src, lengths), prev);
    own.push_back(m->decode_step(s1.state, Tensor::from_ids({8, 9, 10, 4}, {4})));
  }
  for (int64_t r = 0; r < 4; ++r) {
    const std::vector<float> mixed = row_of(second.log_probs, r);
    std::vector<std::vector<float>> members;
    for (const auto& s : own) members.push_back(row_of(s.log_probs, r));
    double total = 0;
    for (size_t v = 0; v < mixed.size(); ++v) {
      const double expected = mean_probability_log({members[0][v], members[1][v], members[2][v]});
      EXPECT_NEAR(mixed[v], expected, 1e-5) << "row " << r << " token " << v;
      total += std::exp(static_cast<double>(mixed[v]));
    }
    EXPECT_NEAR(total, 1.0, 1e-5) << "the mixture is a distribution";
  }
  const Tensor att = second.attention.data(), own_att = own[0].attention.data();
  ASSERT_EQ(att.numel(), own_att.numel());
  for (int64_t i = 0; i < att.numel(); ++i) EXPECT_EQ(att.data<float>()[i], own_att.data<float>()[i]);
}

// Greedy decoding of the ensemble takes, at each step, the best token of the mixture computed here from the
// members' steps (a decoder written out by hand).
TEST(Ensemble, GreedyDecodingFollowsTheMixture) {
  const auto a = random_model("general", 4, 2, 16), b = random_model("concat", 5, 2, 12);
  const Ensemble ensemble({a.get(), b.get()});
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  const int64_t max_len = 9;
  const auto decoded = greedy_decode(ensemble, src, lengths, kBos, kEos, max_len);
  NoGradGuard no_grad;
  DecoderState sa = a->encode(src, lengths), sb = b->encode(src, lengths);
  std::vector<int64_t> prev(4, kBos);
  std::vector<std::vector<int64_t>> expected(4);
  std::vector<bool> done(4, false);
  const std::vector<int64_t> excluded = never_output_tokens(kPad, kBos);
  for (int64_t t = 0; t < max_len; ++t) {
    DecodeStep xa = a->decode_step(sa, Tensor::from_ids(prev, {4})),
               xb = b->decode_step(sb, Tensor::from_ids(prev, {4}));
    sa = xa.state, sb = xb.state;
    for (int64_t r = 0; r < 4; ++r) {
      const std::vector<float> pa = row_of(xa.log_probs, r), pb = row_of(xb.log_probs, r);
      int64_t best = -1;
      double best_lp = -INFINITY;
      for (int64_t v = 0; v < static_cast<int64_t>(pa.size()); ++v) {
        if (std::count(excluded.begin(), excluded.end(), v)) continue;
        const double lp = mean_probability_log({pa[static_cast<size_t>(v)], pb[static_cast<size_t>(v)]});
        if (lp > best_lp) best_lp = lp, best = v;
      }
      prev[static_cast<size_t>(r)] = best;
      if (done[static_cast<size_t>(r)]) continue;
      if (best == kEos)
        done[static_cast<size_t>(r)] = true;
      else
        expected[static_cast<size_t>(r)].push_back(best);
    }
  }
  EXPECT_EQ(decoded, expected);
  // And it is neither member's own greedy output (the mixture decided something).
  EXPECT_NE(decoded, greedy_decode(*a, src, lengths, kBos, kEos, max_len));
}

// One model twice is the model: the same hypotheses, scores to float rounding.
TEST(Ensemble, AModelTwiceDecodesAsTheModelAlone) {
  const auto a = random_model("general", 6, 2, 16);
  std::vector<int64_t> lengths;
  const Tensor src = sources(lengths);
  BeamOptions o;
  o.beam_size = 4, o.max_len = 8, o.n_best = 3;
  const auto alone = beam_search(*a, src, lengths, kBos, kEos, o);
  const auto twice = beam_search(Ensemble({a.get(), a.get()}), src, lengths, kBos, kEos, o);
  ASSERT_EQ(alone.size(), twice.size());
  for (size_t s = 0; s < alone.size(); ++s) {
    ASSERT_EQ(alone[s].size(), twice[s].size());
    for (size_t h = 0; h < alone[s].size(); ++h) {
      EXPECT_EQ(alone[s][h].tokens, twice[s][h].tokens) << "sentence " << s << " hypothesis " << h;
      EXPECT_NEAR(alone[s][h].score, twice[s][h].score, 1e-5);
    }
  }
}

Corpus small_corpus() {
  Corpus c;
  const std::vector<std::vector<int64_t>> src{{4, 5, 6}, {7, 8}, {9, 10, 11, 12, 4}, {5}};
  const std::vector<std::vector<int64_t>> tgt{{4, 5}, {6, 7, 8, 9}, {10}, {5, 6, 7}};
  for (size_t i = 0; i < src.size(); ++i) c.examples.push_back({src[i], tgt[i]});
  return c;
}

// The ensemble's summed loss is, token by token, -log of the mean of the members' probabilities of the
// reference (computed here with teacher-forced decoder steps, a path of its own), and by Jensen's inequality
// never above the members' mean loss; one model twice has that model's loss.
TEST(Ensemble, LossIsTheMixturesPerTokenAndAtMostTheMembersMean) {
  const auto a = random_model("general", 7, 2, 16), b = random_model("dot", 8, 1, 12);
  const Corpus corpus = small_corpus();
  const Ensemble ensemble({a.get(), b.get()});
  const ValidationResult mixed = evaluate_loss(ensemble, corpus, 3, Device::cpu());
  double expected = 0;
  int64_t tokens = 0;
  {
    NoGradGuard no_grad;
    for (const Example& e : corpus.examples) {
      const std::vector<int64_t> len{static_cast<int64_t>(e.src.size())};
      const Tensor src = Tensor::from_ids(to_ids(e.src), {1, len[0]});
      DecoderState sa = a->encode(src, len), sb = b->encode(src, len);
      std::vector<int64_t> targets = to_ids(e.tgt);
      targets.push_back(kEos);
      int64_t prev = kBos;
      for (const int64_t y : targets) {
        DecodeStep xa = a->decode_step(sa, Tensor::from_ids({prev}, {1})),
                   xb = b->decode_step(sb, Tensor::from_ids({prev}, {1}));
        sa = xa.state, sb = xb.state;
        expected -= mean_probability_log(
            {row_of(xa.log_probs, 0)[static_cast<size_t>(y)], row_of(xb.log_probs, 0)[static_cast<size_t>(y)]});
        ++tokens;
        prev = y;
      }
    }
  }
  EXPECT_EQ(mixed.tokens, tokens);
  EXPECT_NEAR(mixed.loss_sum, expected, 1e-4 * expected);
  const ValidationResult la = evaluate_loss(*a, corpus, 3, Device::cpu()),
                         lb = evaluate_loss(*b, corpus, 3, Device::cpu());
  EXPECT_LE(mixed.loss_sum, (la.loss_sum + lb.loss_sum) / 2);
  const ValidationResult twice = evaluate_loss(Ensemble({a.get(), a.get()}), corpus, 3, Device::cpu());
  EXPECT_NEAR(twice.loss_sum, la.loss_sum, 1e-5 * la.loss_sum);
}

TEST(Ensemble, MembersMustShareTheTargetVocabulary) {
  const auto a = random_model("general", 9, 1, 8);
  ModelConfig c = a->config();
  c.tgt_vocab = 12;
  Generator g(1);
  const NmtModel other(c, g);
  try {
    Ensemble({a.get(), &other});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ensemble member 2 has a target vocabulary of 12 tokens, member 1 of 11"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace luong::nmt
